"""What the supervised forests (SPORF and MORF, classifiers and regressors) share.

:class:`SupervisedForest` holds the input checks, out-of-bag estimates, RF-GAP
proximities and importances; the projection settings of each family
(:func:`sparse_config`, :func:`patch_config`) and the shared parameter docs
are here too.  The estimators are in ``_classifiers.py`` and ``_regressors.py``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.utils import TransformerTags
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._engine.projections import (
    AXIS,
    PATCH,
    SPARSE,
    max_nonzeros,
    patch_params,
    sparse_params,
)
from .._limits import check_dense_size
from .._validation import check_n_neighbors, is_dask_array, validate_data
from ._base import BaseForest
from ._dask import refuse
from ._growth import EngineConfig, resolve_max_features, tree_sample_size
from ._input import check_float32_range, input_dtype, warn_if_constant
from ._rfgap import rfgap_proximity, top_k_rows

_IMPORTANCES = ("count", "impurity")


def projection_counts(trees, n_features: int) -> np.ndarray:
    """For each feature, how many split nodes of ``trees`` use it in their projection."""
    counts = np.zeros(n_features, dtype=np.int64)
    for tree in trees:
        counts += np.bincount(tree.proj_idx, minlength=n_features)
    return counts


def impurity_importances(trees, n_features: int) -> np.ndarray:
    """Mean decrease in impurity per feature (each tree normalised to sum 1, then averaged).

    A node's weighted impurity decrease is shared among the features of its
    projection in proportion to ``|weight|`` (all of it for an axis split, as in
    scikit-learn; equal shares for ``+-1`` sparse and patch projections).
    """
    total = np.zeros(n_features)
    for tree in trees:
        split = np.flatnonzero(tree.left != -1)
        if split.size == 0:
            continue
        per_tree = np.zeros(n_features)
        for node in split:
            lo, hi = tree.proj_ptr[node], tree.proj_ptr[node + 1]
            w = np.abs(tree.proj_weight[lo:hi].astype(np.float64))
            np.add.at(per_tree, tree.proj_idx[lo:hi], tree.gain[node] * w / w.sum())
        s = per_tree.sum()
        if s > 0:
            total += per_tree / s
    s = total.sum()
    return total / s if s > 0 else total


#: Rows checked at a time by :func:`indicator_groups`.
_INDICATOR_BLOCK = 1 << 14


def indicator_groups(X: np.ndarray) -> np.ndarray | None:
    """1 for each column of ``X`` holding only 0 and 1, 0 for the others;
    ``None`` where all columns are of one kind (nothing to keep apart).

    A regressor's sparse candidates then never mix a one-hot column with a
    numeric one (``_engine.projections.sparse_params``): sums of indicators
    take a few values and are cut from per-value sums, a numeric column plus
    an indicator is continuous and needs the full sort.  Chosen on the
    selection half of the supervised suite (``docs/defaults.md``).  In blocks
    of rows: contiguous reads, no temporary the size of ``X``.
    """
    flags = np.ones(X.shape[1], dtype=bool)
    for start in range(0, X.shape[0], _INDICATOR_BLOCK):
        block = X[start : start + _INDICATOR_BLOCK]
        flags &= np.all((block == 0) | (block == 1), axis=0)
        if not flags.any():
            return None  # no indicator left
    if flags.all():
        return None
    return flags.astype(np.float64)


def sparse_config(
    forest, n_features: int, criterion: int, groups: np.ndarray | None = None
) -> EngineConfig:
    """Engine settings of the oblique forests (SPORF; ``projection="axis"``: one feature).

    ``groups`` (:func:`indicator_groups`) keeps sparse candidates within one
    group of features each; ignored by axis forests.
    """
    kind = AXIS if forest.projection == "axis" else SPARSE
    params = sparse_params(forest.feature_combinations, groups if kind == SPARSE else None)
    return EngineConfig(
        projection=kind,
        projection_params=params,
        max_nonzeros=max_nonzeros(kind, params, n_features),
        criterion=criterion,
        criterion_params=np.zeros(1),
        random_cuts=forest.splitter == "random",
        n_projections=resolve_max_features(
            forest.max_features, n_features, allow_more=kind != AXIS
        ),
    )


def patch_config(forest, n_features: int, criterion: int) -> EngineConfig:
    """Engine settings of the manifold forests (MORF): sums of contiguous patches."""
    image_shape = (n_features,) if forest.image_shape is None else forest.image_shape
    params = patch_params(
        image_shape, forest.min_patch_shape, forest.max_patch_shape, forest.wrap, n_features
    )
    return EngineConfig(
        projection=PATCH,
        projection_params=params,
        max_nonzeros=max_nonzeros(PATCH, params, n_features),
        criterion=criterion,
        criterion_params=np.zeros(1),
        random_cuts=forest.splitter == "random",
        n_projections=resolve_max_features(forest.max_features, n_features, allow_more=True),
    )


#: Weights whose largest value is below this are scaled up before growing.
SMALL_WEIGHT = 2.0**-64


def scaled_up(sample_weight: np.ndarray) -> tuple[np.ndarray, int]:
    """``sample_weight`` times ``2**shift``, and ``shift`` (0 for ordinary weights).

    The split rules square weighted sums (a weighted count or target sum
    squared over the node's weight): with weights around 1e-300 those squares
    underflow to 0, and leaf means and gains become 0.  Every statistic of a
    tree is a ratio of weighted sums, so weights whose largest value is below
    :data:`SMALL_WEIGHT` are scaled by a power of two (exact) to a largest
    value in ``[1, 2)``; others are left as they are, and grow the same trees.
    """
    top = float(sample_weight.max())
    if not 0.0 < top < SMALL_WEIGHT:
        return sample_weight, 0
    shift = 1 - int(np.frexp(top)[1])
    return np.ldexp(sample_weight, shift), shift


#: Parameters of the sparse oblique forests, beside the shared ones.
SPARSE_CONSTRAINTS: dict = {
    "projection": [StrOptions({"sparse", "axis"})],
    "feature_combinations": [Interval(numbers.Real, 1.0, None, closed="left")],
}

#: Parameters of the manifold forests, beside the shared ones.
PATCH_CONSTRAINTS: dict = {
    "image_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
    "min_patch_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
    "max_patch_shape": ["array-like", Interval(numbers.Integral, 1, None, closed="left"), None],
    "wrap": ["boolean"],
}


class SupervisedForest(BaseForest):
    """What the classification and regression forests share (not public)."""

    _parameter_constraints: dict = {
        **BaseForest._parameter_constraints,
        "importance": [StrOptions(set(_IMPORTANCES))],
        "oob_score": ["boolean", callable],
        "splitter": [StrOptions({"best", "random"})],
        "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_impurity_decrease": [Interval(numbers.Real, 0.0, None, closed="left")],
        "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
    }

    def _validate_X(self, X, reset: bool) -> np.ndarray:
        X_in = X
        return self._to_float32(
            validate_data(self, X, dtype=input_dtype(X), order="C", reset=reset), X_in, reset
        )

    def _validate_fit(self, X, y, sample_weight, **target_checks):
        """Checked training data: float32 ``X``, ``y`` as validated, float64 weights."""
        self._validate_params()
        X_in = X
        X, y = validate_data(
            self, X, y, dtype=input_dtype(X), order="C", reset=True, **target_checks
        )
        if X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples, got n_samples={X.shape[0]}"
            )
        X = self._to_float32(X, X_in, reset=True)
        warn_if_constant(X)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        check_float32_range(sample_weight, "sample_weight")
        if not sample_weight.sum() > 0:
            raise ValueError("sample_weight sums to zero: no sample can vote")
        # The rows each tree draws as the fit resolves them: a fraction near 1, or
        # one raised to the rows a split needs, can come to every row.
        if (
            self.oob_score
            and not self.bootstrap
            and (n_draw := tree_sample_size(self, X.shape[0], warn=False)) >= X.shape[0]
        ):
            raise ValueError(
                "out-of-bag estimates need rows left out of the trees' samples: "
                "bootstrap=True, or max_samples below the number of rows (each tree "
                f"draws {n_draw} of {X.shape[0]})"
            )
        return X, y, sample_weight

    def _grow_weighted(self, X, y, sample_weight, n_classes: int, target_columns, targets=None):
        """Grow the trees on checked data with ``sample_weight`` (see :func:`scaled_up`).

        The canonical row order hashes ``X`` with the float32 ``target_columns``
        (labels or targets) and weights appended, so that identical rows with
        different targets are ordered by content too.  The fit's weights are
        kept for RF-GAP, which weighs leaf members by them.
        """
        weight, shift = scaled_up(sample_weight)
        order_data = np.column_stack([X, target_columns, weight.astype(np.float32)])
        self._fit_weights = sample_weight
        extra = {} if targets is None else {"targets": targets}
        self._grow(X, y, weight, n_classes, order_data, **extra)
        if shift:  # node statistics back in the caller's units of weight
            for tree in self.trees_:
                np.ldexp(tree.gain, -shift, out=tree.gain)
                if n_classes > 0:
                    np.ldexp(tree.value, -shift, out=tree.value)

    def _rfgap_proximity(self, X, Y, dense: bool, max_bytes):
        check_is_fitted(self)
        if Y is not None:
            raise ValueError("method='rfgap' gives proximities to the training points: Y=None")
        if is_dask_array(X) or self._fitted_on_dask:
            refuse("proximity(method='rfgap') with Dask")
        leaves = None if X is None else self._apply(self._validate_X(X, reset=False))
        n_rows = self._X_fit.shape[0] if X is None else leaves.shape[0]
        if dense:
            check_dense_size(
                (n_rows, self._X_fit.shape[0]),
                np.float64,
                what="proximity(dense=True)",
                max_bytes=max_bytes,
                hint="The sparse proximity (dense=False) holds the same.",
            )
        P = rfgap_proximity(self, leaves)
        return P.toarray() if dense else P

    def _rfgap_neighbors(self, X, n_neighbors: int, return_distance: bool):
        check_is_fitted(self)
        check_n_neighbors(n_neighbors, self._X_fit.shape[0], X is None)
        dist, ind = top_k_rows(self._rfgap_proximity(X, None, False, None), n_neighbors, X is None)
        return (dist, ind) if return_distance else ind

    def _training_graph(self, dist, ind, mode: str, method: str):
        if method == "rfgap":
            # RF-GAP is not symmetric; the training graph is, so its edges carry
            # 1 - (p_ij + p_ji) / 2, the symmetrised proximity of the paper.
            rows = np.repeat(np.arange(ind.shape[0]), ind.shape[1])
            dist = self._training_pair_distances(rows, ind.ravel(), method).reshape(ind.shape)
        return super()._training_graph(dist, ind, mode, method)

    def _training_pair_distances(self, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
        if method != "rfgap":
            return super()._training_pair_distances(a, b, method)
        P = self._rfgap_proximity(None, None, False, None)
        return 1.0 - 0.5 * (np.asarray(P[a, b]).ravel() + np.asarray(P[b, a]).ravel())

    def _oob_means(self, table: np.ndarray) -> np.ndarray:
        """Per training row, the mean over the trees whose sample left it out of
        ``table``'s row at its leaf (scikit-learn's out-of-bag prediction: rows no
        tree left out get zeros, with scikit-learn's warning)."""
        leaves = self.apply()
        out_of_bag = self.inbag_counts_ == 0
        offsets = self._flat.node_offset[:-1]
        out = np.zeros((leaves.shape[0], table.shape[1]))
        for t, offset in enumerate(offsets):
            rows = np.flatnonzero(out_of_bag[:, t])
            out[rows] += table[leaves[rows, t] + offset]
        n_trees = out_of_bag.sum(axis=1)
        if (n_trees == 0).any():
            warnings.warn(
                "Some inputs do not have OOB scores. This probably means too few trees "
                "were used to compute any reliable OOB estimates.",
                UserWarning,
                stacklevel=3,
            )
        return out / np.maximum(n_trees, 1)[:, None]

    def _oob_score_of(self, y_true, y_pred) -> float:
        """``oob_score_``: the task's default score, or the callable ``oob_score``."""
        if callable(self.oob_score):
            return float(self.oob_score(y_true, y_pred))
        return float(self._default_oob_score(y_true, y_pred))

    def fit_transform(self, X, y, sample_weight=None):
        """Fit, then return the one-hot leaf embedding of ``X`` (see :meth:`transform`)."""
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    def _leaf_sums(self, X, table: np.ndarray) -> np.ndarray:
        """Mean over trees of ``table``'s row at the leaf each row of ``X`` reaches."""
        leaves = self._apply(self._validate_X(X, reset=False))
        offsets = self._flat.node_offset[:-1]
        out = np.zeros((leaves.shape[0], table.shape[1]))
        for t, offset in enumerate(offsets):  # tree by tree: (n, width) at a time
            out += table[leaves[:, t] + offset]
        out /= len(offsets)
        return out

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised feature importances (sum 1), as selected by ``importance``.

        ``"count"`` (the default, the manifold forests paper's): for each
        feature, the number of split nodes, over all trees, whose chosen
        projection uses it.  ``"impurity"``: the mean decrease in impurity
        (squared error for regressors), shared among a projection's features.

        Unlike scikit-learn's forests, the default is the count, not the
        impurity decrease, and the two can disagree widely (a one-hot column
        is cut at most once on a path, so it scores low by count).  For
        scikit-learn's measure, ``set_params(importance="impurity")``: the
        property reads the fitted trees, so no refit is needed.
        """
        check_is_fitted(self)
        if self.importance == "impurity":
            return impurity_importances(self.trees_, self.n_features_in_)
        counts = projection_counts(self.trees_, self.n_features_in_).astype(np.float64)
        s = counts.sum()
        return counts / s if s > 0 else counts

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # ``transform`` gives the one-hot leaf embedding, as for every forest.
        tags.transformer_tags = TransformerTags(preserves_dtype=[])
        return tags


def shared_doc(criterion: str, max_features: str) -> str:
    """The numpydoc lines of the parameters every supervised forest shares."""
    return f"""
    n_estimators : int, default=100
        Number of trees.{criterion}
    splitter : {{"best", "random"}}, default="best"
        ``"best"``: each candidate projection is cut where the criterion
        improves most (SPORF, random forests).  ``"random"``: at one threshold
        drawn uniformly between the node's smallest and largest projected value,
        the best of the candidates kept (extremely randomised trees, Geurts et
        al., with oblique or patch candidates); no sort, so faster.
    max_features : int, float, {{"sqrt", "log2"}} or None, default={max_features}
        Candidate projections per node (``d`` in the papers): an int, a
        fraction of ``n_features``, ``"sqrt"``, ``"log2"`` or ``None`` for
        ``n_features``.  Oblique and patch projections may exceed
        ``n_features``.
    min_samples_split : int, default=2
        Nodes with fewer samples become leaves.
    min_samples_leaf : int, default=1
        Minimum samples on each side of a cut.
    min_weight_fraction_leaf : float, default=0.0
        Minimum weight on each side of a cut, as a fraction of the tree's
        total sample weight (scikit-learn's meaning; bootstrap repeats count).
    max_depth : int or None, default=None
        Maximum depth (``None``: grow until leaves are pure).
    max_leaf_nodes : int or None, default=None
        At most this many leaves per tree, chosen best first as scikit-learn
        does: the split with the largest weighted impurity decrease among
        those the tree could make next, until the tree has ``max_leaf_nodes``
        leaves.  Each tree is grown in full and then cut back, so this limits
        the trees' size, not the time to fit them.
    min_impurity_decrease : float, default=0.0
        A node splits only if its weighted impurity decrease, divided by the
        tree's total sample weight, is at least this (scikit-learn's
        ``N_t / N * (impurity - N_t_R / N_t * right_impurity - N_t_L / N_t *
        left_impurity)``).
    max_samples : int, float or None, default=None
        Rows drawn per tree (``None``: ``n_samples``).  A fraction is raised
        to the rows a node needs to be split (``max(min_samples_split, 2 *
        min_samples_leaf)``) where it gives fewer and the data hold that
        many; an int that small is kept, with a warning.
    bootstrap : bool, default=True
        Draw each tree's rows with replacement.
    importance : {"count", "impurity"}, default="count"
        What ``feature_importances_`` reports: the manifold forests paper's
        projection counts (how many split nodes use each feature), or the mean
        decrease in impurity that scikit-learn's forests report.  The default
        is not scikit-learn's.
    oob_score : bool or callable, default=False
        Score each training row with the trees whose sample left it out, as
        scikit-learn's forests do: ``oob_score_`` (accuracy or R², or
        ``oob_score(y, oob_prediction)`` for a callable) and the out-of-bag
        predictions.  Needs ``bootstrap=True`` or ``max_samples`` below the
        number of rows (subsampling without replacement leaves rows out too).
    n_jobs : int or None, default=None
        Threads for growing trees and for queries; the forest is identical for
        any value.
    random_state : int, RandomState instance or None, default=None
        Seeds one integer per tree before any parallel work.
    verbose : int, default=0
        Show progress bars."""


_SPORF_REF = """T. M. Tomita et al., "Sparse Projection Oblique Randomer Forests",
       JMLR 21(104), 2020 (arXiv:1506.03410)"""
#: The papers behind ``splitter="random"`` and ``proximity(method="rfgap")``.
_EXTRA_REFS = """P. Geurts, D. Ernst and L. Wehenkel, "Extremely randomized trees",
       Machine Learning 63, 2006 (``splitter="random"``).
    .. [{0}] J. S. Rhodes, A. Cutler and K. R. Moon, "Geometry- and
       accuracy-preserving random forest proximities", IEEE TPAMI 45(9), 2023
       (``proximity(method="rfgap")``)."""
_MORF_REF = (
    "R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,\n"
    '       "Manifold Forests: Closing the Gap on Neural Networks"'
)
