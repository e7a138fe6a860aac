"""``merge_forests``: one forest from several grown on the same data, and its checks.

Proximity counts add exactly (``geoforest/proximity.py``), so trees grown in
separate runs — on other machines, or over time — make one forest whose
kernel is the one a single fit of all of them would give.  That holds only
for parts that could have been one forest, which is what the checks here
refuse otherwise: other training rows, labels or parameters, or a tree in two
parts (the digests below recognise identical trees and targets).
"""

from __future__ import annotations

import hashlib

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._engine.builder import Tree
from .._validation import is_dask_array
from ._base import BaseForest

#: Parameters in which parts of one forest may differ.
_MERGE_FREE = frozenset({"n_estimators", "random_state", "n_jobs", "verbose"})


def _same_param(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def tree_digest(tree: Tree) -> bytes:
    """A digest of a tree's splits: equal for identical trees."""
    h = hashlib.blake2b(digest_size=16)
    for part in (
        tree.left,
        tree.right,
        tree.threshold,
        tree.proj_ptr,
        tree.proj_idx,
        tree.proj_weight,
        tree.n_node_samples,
    ):
        h.update(np.ascontiguousarray(part).tobytes())
    return h.digest()


def targets_digest(*arrays: np.ndarray) -> bytes:
    """A digest of a classifier's training labels and weights (what merge_forests compares)."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


def merge_forests(*forests: BaseForest) -> BaseForest:
    """One forest holding the trees of several forests fitted on the same data.

    Proximities of the result use the summed counts (``L`` and ``T``) of the
    parts, never an average of their normalised kernels.  Only forests that
    could be parts of one bigger forest merge: same class, same training rows
    (and, for classifiers, the same labels and sample weights), the same
    parameters except ``n_estimators``, ``random_state``, ``n_jobs`` and
    ``verbose``, and no tree in two parts (a forest merged with itself, or
    parts grown with the same ``random_state``, would count its trees twice).

    Parameters
    ----------
    *forests : fitted forests of the same class, fitted on the same ``X``

    Returns
    -------
    forest : the merged forest (a new object; ``n_estimators`` is the total;
        the other parameters, ``random_state`` included, are the first part's)

    Raises
    ------
    TypeError
        An argument is not a forest, e.g. a list of forests
        (``merge_forests(*forests)`` unpacks one).
    ValueError
        The forests cannot be parts of one forest (the message says why).

    References
    ----------
    .. [1] L. Breiman, "Random Forests", Machine Learning 45, 2001 (the forest
       proximity, a mean over trees: exactly additive over parts).
    .. [2] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests" (URerF, whose in-bag proximity merges by its counts).
    """
    if not forests:
        raise ValueError("merge_forests needs at least one forest")
    for i, f in enumerate(forests):
        if isinstance(f, (list, tuple)):
            raise TypeError(
                "merge_forests takes the forests as separate arguments, merge_forests(a, b); "
                f"for a {type(f).__name__} of forests, unpack it: merge_forests(*forests)"
            )
        if not isinstance(f, BaseForest):
            raise TypeError(
                f"merge_forests takes fitted geoforest forests; argument {i} is a "
                f"{type(f).__name__}"
            )
    first = forests[0]
    shaping = {k: v for k, v in first.get_params(deep=False).items() if k not in _MERGE_FREE}
    seen_trees: dict[tuple, int] = {}
    for f in forests:
        check_is_fitted(f)
    seeds = [getattr(f, "_tree_seeds", None) for f in forests]
    seeds = None if any(s is None for s in seeds) else seeds
    for i, f in enumerate(forests):
        if is_dask_array(f._X_fit):
            raise NotImplementedError(
                "merge_forests takes forests fitted in memory; forest "
                f"{i} was grown from a Dask array (grow one forest with more trees instead)"
            )
        if type(f) is not type(first):
            raise ValueError(
                f"can only merge forests of the same class, got {type(first).__name__} "
                f"and {type(f).__name__}"
            )
        if any(f is g for g in forests[:i]):
            raise ValueError(
                f"forest {i} is passed to merge_forests twice: its trees would count twice"
            )
        if f._X_fit.shape != first._X_fit.shape or not np.array_equal(f._X_fit, first._X_fit):
            raise ValueError("can only merge forests fitted on the same training data")
        if hasattr(first, "classes_") and not np.array_equal(f.classes_, first.classes_):
            raise ValueError("can only merge classifiers fitted on the same classes")
        if getattr(f, "_targets_digest", None) != getattr(first, "_targets_digest", None):
            raise ValueError(
                "can only merge classifiers fitted on the same labels and sample weights: "
                f"forest {i} saw different ones"
            )
        params = f.get_params(deep=False)
        differ = sorted(k for k, v in shaping.items() if not _same_param(v, params.get(k)))
        if differ:
            raise ValueError(
                "can only merge forests grown with the same parameters (apart from "
                f"{', '.join(sorted(_MERGE_FREE))}); forest {i} differs in {', '.join(differ)}"
            )
        for t, tree in enumerate(f.trees_):
            # Trees of distinct seeds may coincide (single leaves); equal seeds and
            # splits are one tree in two parts.  Without seeds, the splits alone.
            key = (None if seeds is None else int(seeds[i][t]), tree_digest(tree))
            if seen_trees.get(key, i) != i:
                raise ValueError(
                    f"forest {i} holds a tree of forest {seen_trees[key]}: merged, it would "
                    "count twice (forests grown with the same random_state, or a forest "
                    "merged with a copy of itself)"
                )
            seen_trees[key] = i
    merged = type(first)(**first.get_params())
    merged.n_estimators = sum(len(f.trees_) for f in forests)
    parts = [f._train_leaves if f._train_leaves is not None else f._inbag_leaves for f in forests]
    merged._install_fit(
        [t for f in forests for t in f.trees_],
        first._X_fit,
        getattr(first, "_offset", None),
        np.hstack([f.inbag_counts_ for f in forests]),
        first.n_projections_,
        inbag_leaves=None if any(p is None for p in parts) else np.hstack(parts),
        tree_seeds=None if seeds is None else np.concatenate(seeds),
    )
    merged._take_targets_from(first)  # supervised forests: labels or targets, leaf tables
    return merged
