"""Growing one tree: a forest's parameters as the engine takes them.

The in-memory fit (``BaseForest._grow``) and the distributed fit
(``forest/_dask/_fit.py``) both turn the estimator's parameters into the same
engine settings and call the engine through :func:`grow_tree`, so a tree grown
on a worker is the in-memory tree by construction, not by two copies of one
call kept in step.  Nothing here knows about estimators beyond their
scikit-learn parameters.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from .._engine.best_first import keep_best_first
from .._engine.builder import EngineConfig, Tree, TreeLimits, build_tree
from .._engine.columns import ColumnFacts, column_facts
from .._engine.projections import SPARSE
from .._engine.rng import make_state
from .._engine.sampling import draw_tree_sample
from .._engine.splits import SQUARED_ERROR, make_workspace

#: Tree seeds are drawn below this bound (the engine's generator takes 32-bit seeds).
MAX_SEED = np.iinfo(np.int32).max

NO_LABELS = np.zeros(0, dtype=np.int32)
NO_WEIGHTS = np.zeros(0, dtype=np.float64)
NO_COUNTS = np.zeros(0, dtype=np.int32)
NO_TARGETS = np.zeros((0, 0), dtype=np.float64)

#: Most values of ``X`` :func:`may_tie` sorts to rule ties out; larger data is
#: taken to have some (the check would cost more than the compile it saves).
TIE_CHECK_VALUES = 1 << 22

__all__ = [
    "EngineConfig",
    "TreeLimits",
    "fit_tree",
    "fit_facts",
    "grow_tree",
    "may_tie",
    "split_size",
    "tree_limits",
    "tree_sample_size",
]


def fit_facts(cfg: EngineConfig, X: np.ndarray, n_outputs: int) -> ColumnFacts | None:
    """The :class:`~geoforest._engine.columns.ColumnFacts` of ``X`` where the
    trees use them: sparse candidates cut by one output's squared error, each
    at its best threshold (one or two indicators, or one column of few
    values, are then cut from per-node sums), and ``X`` has such columns;
    ``None`` elsewhere (the trees' kernel then holds none of it)."""
    if (
        n_outputs == 1
        and int(cfg.projection) == SPARSE
        and int(cfg.criterion) == SQUARED_ERROR
        and not cfg.random_cuts
    ):
        facts = column_facts(X)
        if facts.is_ind.any() or facts.n_levels.any():
            return facts
    return None


def tree_limits(forest) -> TreeLimits:
    """The limits set on ``forest`` (its ``_min_gain`` hook gives the fourth;
    ``max_leaf_nodes``, ``min_impurity_decrease`` and
    ``min_weight_fraction_leaf`` exist on supervised forests)."""
    max_leaf_nodes = getattr(forest, "max_leaf_nodes", None)
    return TreeLimits(
        int(forest.min_samples_split),
        int(forest.min_samples_leaf),
        -1 if forest.max_depth is None else int(forest.max_depth),
        float(forest._min_gain()),
        -1 if max_leaf_nodes is None else int(max_leaf_nodes),
        float(getattr(forest, "min_impurity_decrease", 0.0)),
        float(getattr(forest, "min_weight_fraction_leaf", 0.0)),
    )


def resolve_max_features(max_features: Any, n_features: int, allow_more: bool) -> int:
    """Number of candidate projections per node from an sklearn-style spec."""
    if max_features is None:
        k = n_features
    elif isinstance(max_features, str):
        k = {"sqrt": np.sqrt, "log2": np.log2}[max_features](n_features)
        k = int(np.ceil(k))
    elif isinstance(max_features, numbers.Integral):
        k = int(max_features)
    else:
        k = int(np.ceil(float(max_features) * n_features))
    k = max(1, k)
    return k if allow_more else min(k, n_features)


def resolve_max_samples(max_samples: Any, n_samples: int) -> int:
    """Rows per tree from ``None`` (all), an int or a fraction."""
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, numbers.Integral):
        if max_samples > n_samples:
            raise ValueError(
                f"max_samples={max_samples} exceeds the number of samples ({n_samples})"
            )
        return int(max_samples)
    return max(1, int(round(float(max_samples) * n_samples)))


def split_size(forest) -> int:
    """Fewest samples a node of ``forest``'s trees needs to be split:
    ``min_samples_split``, and room for two leaves of ``min_samples_leaf``
    (the engine's stop checks, :func:`~geoforest._engine.builder.build_tree`)."""
    return max(int(forest.min_samples_split), 2 * int(forest.min_samples_leaf))


def tree_sample_size(forest, n_samples: int, stacklevel: int = 1, warn: bool = True) -> int:
    """Rows drawn for each of ``forest``'s trees from ``n_samples``.

    :func:`resolve_max_samples`, raised to :func:`split_size` where a
    fraction ``max_samples`` gives fewer rows than a split needs and the data
    hold that many.  Why: a fraction is chosen for large data (the unsupervised
    forest's 0.5 against its ``min_samples_split=45``), and on small data it
    left every tree a single leaf (below about 90 rows there), so that every
    training point was as close as any other and the neighbours were decided
    by ties; with the floor a tree splits wherever the data allow, and nothing
    changes where the fraction already gave enough rows.  An explicit
    integer ``max_samples`` is the caller's: kept, with a warning naming the
    cause when it is too small to split data that could be.  Below
    ``split_size`` rows nothing is raised: no sample of them can be split.
    ``stacklevel``: the warning's, counted from the caller (1: the caller);
    ``warn=False``: the size only (the fit warns).
    """
    n_draw = resolve_max_samples(forest.max_samples, n_samples)
    need = split_size(forest)
    if n_draw >= need or need > n_samples:
        return n_draw
    if not isinstance(forest.max_samples, numbers.Integral):  # a fraction
        return need
    if warn:
        warnings.warn(
            f"max_samples={forest.max_samples} draws fewer rows per tree than the {need} a "
            f"node needs to be split (min_samples_split={forest.min_samples_split}, "
            f"min_samples_leaf={forest.min_samples_leaf}): every tree is a single leaf and "
            f"every training point is as close as any other. Pass max_samples >= {need} (or "
            "a fraction, raised to that where it gives fewer rows), or a smaller "
            "min_samples_split.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
    return n_draw


def tree_seeds(random_state, n_estimators: int) -> np.ndarray:
    """One seed per tree, drawn in tree order from ``random_state``."""
    return check_random_state(random_state).randint(MAX_SEED, size=n_estimators)


def may_tie(X: np.ndarray) -> bool:
    """Whether some feature of ``X`` may hold one value three times or more.

    Only then can a sparse candidate of an unsupervised tree grow
    (:mod:`geoforest._engine.ties` looks for such features in each tree's
    sample, a subset of the rows), so ``False`` lets the tree's kernel compile
    without the growth: a first fit on continuous data compiles less, with the
    same trees.  ``True`` without looking for ``X`` of more than
    :data:`TIE_CHECK_VALUES` values.
    """
    if X.size > TIE_CHECK_VALUES:
        return True
    z = np.sort(X, axis=0)
    return bool((z[2:] == z[:-2]).any())


def grow_tree(
    X: np.ndarray,
    rows: np.ndarray,
    cfg: EngineConfig,
    limits: TreeLimits,
    state: np.ndarray,
    y: np.ndarray = NO_LABELS,
    sample_weight: np.ndarray = NO_WEIGHTS,
    counts: np.ndarray = NO_COUNTS,
    n_classes: int = 0,
    targets: np.ndarray = NO_TARGETS,
    ties: bool = True,
    facts: ColumnFacts | None = None,
):
    """Grow one tree on ``X[rows]`` with the generator ``state``; the engine's
    ``(arrays, rows, leaf)`` (:func:`~geoforest._engine.builder.build_tree`).

    Classification: int32 labels ``y`` and ``n_classes``; regression: float64
    ``targets`` of shape ``(n, n_outputs)``; neither: unsupervised, for which
    the engine gets ``y = targets = None`` and its rule's scratch, supervised
    trees ``workspace = None`` (each task's kernel compiles only its own steps).
    ``ties=False`` (no feature can tie, :func:`may_tie`) leaves the growth of
    tied candidates out of the unsupervised kernel.  ``facts``: those of ``X``
    for a regression tree that uses them (:func:`fit_facts`).
    A supervised tree with ``limits.max_leaf_nodes > 0`` is cut best first
    after its growth (:func:`~geoforest._engine.best_first.keep_best_first`).
    """
    workspace = None
    if n_classes == 0 and targets.shape[1] == 0:
        y = targets = None
        workspace = make_workspace(cfg.criterion, rows.shape[0], ties)
    arrays, rows, leaf = build_tree(
        X,
        rows,
        cfg.typed(),
        limits,
        state,
        y,
        targets,
        sample_weight,
        counts,
        n_classes,
        workspace,
        facts,
    )
    if y is not None and limits.max_leaf_nodes > 0:
        arrays, leaf = keep_best_first(arrays, leaf, limits.max_leaf_nodes)
    return arrays, rows, leaf


def fit_tree(
    X,
    order,
    n_draw,
    replace,
    seed,
    cfg,
    limits,
    y=NO_LABELS,
    sample_weight=NO_WEIGHTS,
    n_classes=0,
    targets=NO_TARGETS,
    ties=True,
    facts=None,
):
    """The in-memory fit's task for one tree: draw its sample, grow it (``ties``
    and ``facts``: as :func:`grow_tree` takes them).

    Returns the tree, the drawn positions' rows (for the in-bag counts), and
    the rows the engine placed with the leaf of each (the training leaves).
    """
    state = make_state(seed)
    samples = draw_tree_sample(order, n_draw, replace, state)
    rows, counts = samples, NO_COUNTS
    if n_classes > 0 or targets.shape[1] > 0:
        # Supervised trees take each drawn row once, its bootstrap count
        # folded into the weight (the same tree, fewer values to sort).
        counts = np.bincount(samples, minlength=X.shape[0]).astype(np.int32)
        rows = np.flatnonzero(counts)
        sample_weight = sample_weight * counts
    arrays, rows, leaf = grow_tree(
        X, rows, cfg, limits, state, y, sample_weight, counts, n_classes, targets, ties, facts
    )
    return Tree(*arrays), samples, rows, leaf
