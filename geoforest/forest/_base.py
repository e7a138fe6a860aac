"""The shared forest estimator: fit trees in parallel, then leaves, kernels, neighbours.

Subclasses only say which projection distribution and split rule the engine
uses (:meth:`BaseForest._engine_config`); everything else — validation, per-tree
seeds, parallel building, ``apply``, ``proximity``, ``kneighbors``,
``kneighbors_graph`` and ``transform`` — lives here.
"""

from __future__ import annotations

import hashlib
import numbers
import warnings
from abc import ABCMeta, abstractmethod
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._engine.builder import Tree, apply_flat, apply_tree_rows, build_tree
from .._engine.projections import GAUSSIAN
from .._engine.rng import make_state
from .._engine.sampling import canonical_order, draw_tree_sample
from .._limits import check_dense_size
from .._progress import progress as _progress
from .._sparse import as_output_csr, csr_from_rows, distance_data, symmetric_union
from .._validation import N_JOBS, validate_data
from ..proximity import (
    ProximityCounts,
    coleaf_counts,
    forest_kneighbors,
    leaf_lists,
    locality_order,
    scatter_rows,
)
from ._input import centring_offset, input_dtype, to_float32, warn_if_rows_merged

_MAX_SEED = np.iinfo(np.int32).max
_METHODS = ("all", "inbag", "oob")
# Rows per parallel task when pushing points down the forest or gathering neighbours.
_CHUNK = 2048


class EngineConfig(NamedTuple):
    """What the engine needs to know about a forest's plug-ins."""

    projection: int
    projection_params: np.ndarray
    max_nonzeros: int
    criterion: int
    criterion_params: np.ndarray
    n_projections: int
    n_batches: int = 1
    decay_batches: bool = False


class FlatForest(NamedTuple):
    """All trees of a forest concatenated (global node ids ``node_offset[t] + local``).

    ``nodes[g] = (left, right, proj_start, proj_end)`` (int64; children as
    local ids, ``-1`` at leaves) and ``threshold[g]`` describe global node
    ``g``; its projection is ``proj_idx/proj_weight[proj_start:proj_end]``.
    """

    nodes: np.ndarray
    threshold: np.ndarray
    proj_idx: np.ndarray
    proj_weight: np.ndarray
    node_offset: np.ndarray

    @property
    def left(self) -> np.ndarray:
        """Left child (local id) of every global node, ``-1`` at leaves."""
        return self.nodes[:, 0]

    @classmethod
    def from_trees(cls, trees: list[Tree]) -> FlatForest:
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        node_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        nnz = np.array([t.proj_idx.shape[0] for t in trees], dtype=np.int64)
        nnz_offset = np.concatenate([[0], np.cumsum(nnz)])
        nodes = np.empty((int(node_offset[-1]), 4), dtype=np.int64)
        for t, (tree, o) in enumerate(zip(trees, nnz_offset[:-1], strict=True)):
            rows = slice(node_offset[t], node_offset[t + 1])
            nodes[rows, 0] = tree.left
            nodes[rows, 1] = tree.right
            nodes[rows, 2] = tree.proj_ptr[:-1] + o
            nodes[rows, 3] = tree.proj_ptr[1:] + o
        return cls(
            nodes=nodes,
            threshold=np.concatenate([t.threshold for t in trees]),
            proj_idx=np.concatenate([t.proj_idx for t in trees]),
            proj_weight=np.concatenate([t.proj_weight for t in trees]),
            node_offset=node_offset,
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


_NO_LABELS = np.zeros(0, dtype=np.int32)
_NO_WEIGHTS = np.zeros(0, dtype=np.float64)
_NO_COUNTS = np.zeros(0, dtype=np.int32)


def _fit_tree(
    X,
    order,
    n_draw,
    replace,
    seed,
    cfg,
    min_split,
    min_leaf,
    max_depth,
    min_gain,
    y=_NO_LABELS,
    sample_weight=_NO_WEIGHTS,
    n_classes=0,
):
    state = make_state(seed)
    samples = draw_tree_sample(order, n_draw, replace, state)
    rows, counts = samples, _NO_COUNTS
    if n_classes > 0:
        # Classification trees take each drawn row once, its bootstrap count
        # folded into the weight (the same tree, fewer values to sort).
        counts = np.bincount(samples, minlength=X.shape[0]).astype(np.int32)
        rows = np.flatnonzero(counts)
        sample_weight = sample_weight * counts
    arrays, rows, leaf = build_tree(
        X,
        rows,
        cfg.projection,
        cfg.projection_params,
        cfg.max_nonzeros,
        cfg.criterion,
        cfg.criterion_params,
        cfg.n_projections,
        cfg.n_batches,
        min_split,
        min_leaf,
        max_depth,
        min_gain,
        state,
        y,
        sample_weight,
        counts,
        n_classes,
        cfg.decay_batches,
    )
    return Tree(*arrays), samples, rows, leaf


def with_seed_and_threads(forest, random_state, n_jobs):
    """``forest`` with a wrapper's ``random_state`` / ``n_jobs`` where its own are None.

    Estimators that grow a forest inside (rpfCluster, the neighbours transformer)
    pass their seed and threads on without overriding what the user set on the
    forest itself.
    """
    params = forest.get_params(deep=False)
    updates = {}
    if params.get("random_state", 0) is None:
        updates["random_state"] = random_state
    if params.get("n_jobs", 0) is None:
        updates["n_jobs"] = n_jobs
    return forest.set_params(**updates)


def warn_if_constant(X: np.ndarray) -> None:
    """Warn when every row of ``X`` is the same point: no tree can split it."""
    if np.all(X.min(axis=0) == X.max(axis=0)):
        warnings.warn(
            "every feature of X is constant: the trees cannot split and all "
            "points will be equally close",
            UserWarning,
            stacklevel=3,
        )


def _n_rows(X) -> int:
    """Rows of an array-like before validation (for size checks made before any work)."""
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else len(X)


def _chunks(n: int) -> list[tuple[int, int]]:
    """Row blocks ``(lo, hi)`` of at most ``_CHUNK`` rows (one parallel task each)."""
    return [(lo, min(lo + _CHUNK, n)) for lo in range(0, n, _CHUNK)]


def _apply_rows(X, lo, hi, *flat) -> np.ndarray:
    """Leaves of rows ``lo:hi`` of ``X`` in every tree of a :class:`FlatForest`."""
    out = np.empty((hi - lo, flat[-1].shape[0] - 1), dtype=np.int32)
    apply_flat(X, lo, hi, *flat, out)
    return out


def _tree_rows_leaves(X, rows, t, *flat) -> np.ndarray:
    """Leaves of rows ``rows`` of ``X`` in tree ``t`` of a :class:`FlatForest`."""
    out = np.empty(rows.shape[0], dtype=np.int32)
    apply_tree_rows(X, rows, t, *flat, out)
    return out


def _kneighbors_rows(
    qleaves, qmask, qorder, lo, hi, node_offset, ptr, members, ref_index, n_ref, k, exclude_self
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` forest neighbours ``(ind, sim)`` of queries ``qorder[lo:hi]``."""
    ind = np.empty((hi - lo, k), dtype=np.int64)
    sim = np.empty((hi - lo, k), dtype=np.float64)
    forest_kneighbors(
        qleaves, qmask, qorder, lo, hi, node_offset, ptr, members, qmask, ref_index, n_ref, k,
        exclude_self, ind, sim,
    )  # fmt: skip
    return ind, sim


class BaseForest(BaseEstimator, metaclass=ABCMeta):
    """Shared implementation of geoforest's forests (not public)."""

    _parameter_constraints: dict = {
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_features": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(numbers.Real, 0.0, None, closed="neither"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "min_samples_split": [Interval(numbers.Integral, 2, None, closed="left")],
        "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_depth": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "max_samples": [
            Interval(numbers.Integral, 2, None, closed="left"),
            Interval(numbers.Real, 0.0, 1.0, closed="right"),
            None,
        ],
        "bootstrap": ["boolean"],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _engine_config(self, n_features: int) -> EngineConfig:
        """The engine plug-ins (projection, split rule and their settings)."""

    def _min_gain(self) -> float:
        return -np.inf

    # ------------------------------------------------------------------ fitting
    def _validate_X(self, X, reset: bool) -> np.ndarray:
        X_in = X
        X = validate_data(self, X, dtype=input_dtype(X), order="C", reset=reset)
        if reset and X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 samples to grow trees, "
                f"got n_samples={X.shape[0]}"
            )
        return self._to_float32(X, X_in, reset)

    def _to_float32(self, X: np.ndarray, X_in, reset: bool) -> np.ndarray:
        """Validated ``X`` as the engine's float32 (``forest/_input.py`` says why).

        At fit (``reset``) the centring offset is chosen and the result is the
        forest's own copy; later queries get the same offset.
        """
        if reset:
            self._offset = centring_offset(X)
        X32 = to_float32(X, getattr(self, "_offset", None))
        if reset:
            if X32 is X_in or not X32.flags.owndata:
                X32 = X32.copy()  # the model must not change when the caller edits X
            warn_if_rows_merged(X, X32, stacklevel=4)
        return X32

    def fit(self, X, y=None):
        """Grow the forest on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (converted to float32; NaN and inf are rejected).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted forest.
        """
        self._validate_params()
        X = self._validate_X(X, reset=True)
        warn_if_constant(X)
        return self._grow(X)

    def _grow(
        self,
        X: np.ndarray,
        y: np.ndarray = _NO_LABELS,
        sample_weight: np.ndarray = _NO_WEIGHTS,
        n_classes: int = 0,
        order_data: np.ndarray | None = None,
        X_build: np.ndarray | None = None,
    ):
        """Grow the trees on validated float32 ``X`` (labels for classification).

        ``order_data`` (default ``X``) is what the canonical row order hashes;
        classifiers pass ``X`` with the labels and weights appended so that
        identical rows with different labels are ordered by content too.
        ``X_build`` is the copy the trees are built from.  By default it is a
        column-major copy of ``X`` for projections of a few features each
        (axis, sparse, patch): the engine then reads each feature's column in
        row order, which measured 13-19 % faster fits on the helix at p = 10,
        103 and 1,003 (identical trees); Gaussian directions use every feature
        and read ``X`` row by row.  Same values either way, so the same trees.
        """
        n_samples, n_features = X.shape
        cfg = self._engine_config(n_features)
        if X_build is None and cfg.projection != GAUSSIAN:
            X_build = np.asfortranarray(X)
        n_draw = resolve_max_samples(self.max_samples, n_samples)
        replace = bool(self.bootstrap)
        rng = check_random_state(self.random_state)
        seeds = rng.randint(_MAX_SEED, size=self.n_estimators)
        order = canonical_order(X if order_data is None else order_data)
        max_depth = -1 if self.max_depth is None else int(self.max_depth)
        jobs = (
            delayed(_fit_tree)(
                X if X_build is None else X_build,
                order,
                n_draw,
                replace,
                int(seed),
                cfg,
                int(self.min_samples_split),
                int(self.min_samples_leaf),
                max_depth,
                self._min_gain(),
                y,
                sample_weight,
                n_classes,
            )
            for seed in seeds
        )
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator")
        trees = []
        inbag = np.zeros((n_samples, self.n_estimators), dtype=np.uint8)
        # The training rows' leaves: the in-bag ones come with each tree; the
        # rest (-1 here) are walked down their trees on first use.
        leaves = np.full((n_samples, self.n_estimators), -1, dtype=np.int32)
        results = _progress(parallel(jobs), self.n_estimators, self.verbose, "trees")
        for t, (tree, samples, rows, leaf) in enumerate(results):  # in tree order
            trees.append(tree)
            inbag[:, t] = np.minimum(np.bincount(samples, minlength=n_samples), 255)
            leaves[rows, t] = leaf
        self.trees_ = trees
        self.inbag_counts_ = inbag
        self.n_features_in_ = n_features
        self.n_projections_ = cfg.n_projections
        self._X_fit = X
        self._flat = FlatForest.from_trees(self.trees_)
        self._train_leaves = None
        self._inbag_leaves = leaves
        return self

    def __getstate__(self):
        # The training leaves are a cache (n x trees int32): recomputed after loading.
        state = super().__getstate__()
        state["_train_leaves"] = None
        state["_inbag_leaves"] = None
        return state

    # ------------------------------------------------------------------ leaves
    def _apply(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        out = np.empty((n, len(self.trees_)), dtype=np.int32)
        chunks = _chunks(n)
        parallel = Parallel(
            n_jobs=self._n_jobs_for(len(chunks)), prefer="threads", return_as="generator"
        )
        # Each task returns its rows (any joblib backend, Dask included); big
        # arrays go as top-level arguments so Dask scatters them once.
        blocks = parallel(delayed(_apply_rows)(X, lo, hi, *self._flat) for lo, hi in chunks)
        for (lo, hi), block in zip(chunks, blocks, strict=True):
            out[lo:hi] = block
        return out

    def _training_leaves(self) -> np.ndarray:
        """Leaves of the training rows: the fit's in-bag leaves, the rest walked.

        Each tree walks only the rows it did not see (``-1`` in the fit's
        matrix; half the rows at ``max_samples=0.5``); without that matrix
        (a loaded or merged forest) every row walks every tree.
        """
        leaves = getattr(self, "_inbag_leaves", None)
        if leaves is None:
            return self._apply(self._X_fit)
        self._inbag_leaves = None  # completed in place below
        missing = [np.flatnonzero(leaves[:, t] < 0) for t in range(leaves.shape[1])]
        todo = [t for t in range(leaves.shape[1]) if missing[t].size]
        parallel = Parallel(
            n_jobs=self._n_jobs_for(len(todo)), prefer="threads", return_as="generator"
        )
        blocks = parallel(
            delayed(_tree_rows_leaves)(self._X_fit, missing[t], t, *self._flat) for t in todo
        )
        for t, block in zip(todo, blocks, strict=True):
            leaves[missing[t], t] = block
        return leaves

    def _n_jobs_for(self, n_tasks: int) -> int:
        return max(1, min(effective_n_jobs(self.n_jobs), n_tasks))

    def _leaves_of(self, X) -> tuple[np.ndarray, bool]:
        """Leaves of ``X`` (None: the training data, cached); returns (leaves, is_train)."""
        if X is None:
            if self._train_leaves is None:
                self._train_leaves = self._training_leaves()
            return self._train_leaves, True
        return self._apply(self._validate_X(X, reset=False)), False

    def apply(self, X):
        """Leaf reached by each sample in each tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of int32, shape (n_samples, n_estimators)
            Node id (within its tree) of the leaf each sample falls in.
        """
        check_is_fitted(self)
        return self._apply(self._validate_X(X, reset=False))

    def transform(self, X):
        """One-hot leaf embedding (like scikit-learn's ``RandomTreesEmbedding``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        embedding : scipy.sparse.csr_matrix of shape (n_samples, n_leaves_total)
            One column per leaf of the forest (trees in order, leaves in node
            order); each row has exactly ``n_estimators`` ones.
        """
        check_is_fitted(self)
        leaves = self._apply(self._validate_X(X, reset=False))
        col_of_node = np.full(self._flat.left.shape[0], -1, dtype=np.int64)
        is_leaf = self._flat.left == -1
        col_of_node[is_leaf] = np.arange(np.count_nonzero(is_leaf))
        cols = col_of_node[leaves + self._flat.node_offset[:-1].astype(np.int32)]
        n, n_trees = leaves.shape
        return as_output_csr(
            sp.csr_matrix(
                (np.ones(n * n_trees), cols.ravel(), np.arange(0, n * n_trees + 1, n_trees)),
                shape=(n, int(is_leaf.sum())),
            )
        )

    def fit_transform(self, X, y=None):
        """Fit the forest and return the leaf embedding of ``X``."""
        return self.fit(X).transform(X)

    # ------------------------------------------------------------------ kernels
    def _masks(self, method: str, is_train: bool) -> np.ndarray | None:
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        if method == "all":
            return None
        if not is_train:
            raise ValueError(
                f"method={method!r} is defined for the training data only (X=None and Y=None)"
            )
        inbag = self.inbag_counts_ > 0
        mask = inbag if method == "inbag" else ~inbag
        # Without any such (row, tree) pair every proximity would be 0 and every
        # distance 1, the diagonal included: an answer that only looks like one.
        if not mask.any():
            why = (
                "every training row is in the sample of every tree (no bootstrap and "
                "max_samples covering all rows); use method='all', or grow the forest "
                "with bootstrap=True or max_samples < 1"
                if method == "oob"
                else "no tree holds a training row in its sample"
            )
            raise ValueError(f"method={method!r} has nothing to count: {why}")
        never = np.flatnonzero(~mask.any(axis=1))
        if never.size:
            warnings.warn(
                f"{never.size} of {mask.shape[0]} training rows are never "
                f"{'out of' if method == 'oob' else 'in'} the sample of any tree: with "
                f"method={method!r} their proximities are all 0 (distance 1). More trees "
                "give every row its turn.",
                UserWarning,
                stacklevel=3,
            )
        return mask.astype(np.uint8)

    def proximity_counts(self, X=None, Y=None, method: str = "all") -> ProximityCounts:
        """Co-leaf and tree counts of the proximity kernel (exactly mergeable).

        Parameters
        ----------
        X, Y : array-like of shape (n, n_features) or None
            Row and column points; ``None`` means the training data.
        method : {"all", "inbag", "oob"}
            Which trees count for a pair: every tree; only trees whose sample
            held both points (as in the URerF paper); only trees whose sample
            held neither.  ``"inbag"`` and ``"oob"`` need ``X = Y = None``.

        Returns
        -------
        counts : ProximityCounts
        """
        check_is_fitted(self)
        xleaves, x_train = self._leaves_of(X)
        yleaves, y_train = self._leaves_of(Y)
        mask = self._masks(method, x_train and y_train)
        empty = np.zeros((0, 0), dtype=np.uint8)
        # Columns numbered, and rows visited, in leaf order (see kneighbors).
        col_order = locality_order(yleaves)
        row_order = col_order if xleaves is yleaves else locality_order(xleaves)
        ptr, members = leaf_lists(
            yleaves, self._flat.node_offset, empty if mask is None else mask, col_order
        )
        n_rows, n_cols = xleaves.shape[0], yleaves.shape[0]
        chunks = _chunks(n_rows)
        qmask = empty if mask is None else mask
        pieces = Parallel(n_jobs=self._n_jobs_for(len(chunks)), prefer="threads")(
            delayed(coleaf_counts)(
                xleaves,
                qmask,
                row_order,
                lo,
                hi,
                self._flat.node_offset,
                ptr,
                members,
                col_order,
                n_cols,
            )  # fmt: skip
            for lo, hi in chunks
        )
        # Pieces hold rows in row_order: place each row at its own index.
        row_nnz = np.empty(n_rows, dtype=np.int64)
        for (lo, hi), (p_indptr, _, _) in zip(chunks, pieces, strict=True):
            row_nnz[row_order[lo:hi]] = np.diff(p_indptr)
        indptr = np.concatenate([[0], np.cumsum(row_nnz)])
        indices = np.empty(indptr[-1], dtype=np.int32)
        data = np.empty(indptr[-1], dtype=np.int32)
        for (lo, hi), (p_indptr, p_indices, p_data) in zip(chunks, pieces, strict=True):
            scatter_rows(p_indptr, p_indices, p_data, row_order[lo:hi], indptr, indices, data)
        coleaf = sp.csr_array((data, indices, indptr), shape=(n_rows, n_cols))
        return ProximityCounts(coleaf, len(self.trees_), mask, mask)

    def proximity(
        self,
        X=None,
        Y=None,
        method: str = "all",
        dense: bool = False,
        *,
        max_bytes: int | float | None = None,
    ):
        """Forest proximity: fraction of counted trees in which two points share a leaf.

        Parameters
        ----------
        X, Y : array-like of shape (n, n_features) or None
            Row and column points; ``None`` means the training data.
        method : {"all", "inbag", "oob"}
            See :meth:`proximity_counts`.
        dense : bool, default=False
            Return a dense ndarray (``n_X x n_Y`` memory) instead of CSR.
        max_bytes : int, float or None, default=None
            With ``dense``: the largest dense result allowed, in bytes (``None``:
            ``geoforest._limits.DENSE_MAX_BYTES``, 4 GiB).  Checked before anything
            is computed.

        Returns
        -------
        S : scipy.sparse.csr_matrix of float64, or ndarray if ``dense``
            32-bit indices when they fit (``geoforest/_sparse.py``): scikit-learn's
            ``SpectralClustering(affinity="precomputed")`` takes it as is.

        Raises
        ------
        ValueError
            ``dense`` and the result would exceed ``max_bytes``.
        """
        if dense:
            check_is_fitted(self, "trees_")
            n_train = self.inbag_counts_.shape[0]
            n_rows = n_train if X is None else _n_rows(X)
            n_cols = n_train if Y is None else _n_rows(Y)
            check_dense_size(
                (n_rows, n_cols), np.float64, what="proximity(dense=True)",
                max_bytes=max_bytes,
                hint="The sparse proximity (dense=False) or kneighbors hold the same information.",
            )  # fmt: skip
        S = self.proximity_counts(X, Y, method=method).proximity()
        return S.toarray() if dense else S

    def kneighbors(
        self, X=None, n_neighbors: int = 10, return_distance: bool = True, method: str = "all"
    ):
        """Nearest neighbours in the forest distance ``1 - proximity``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None
            Query points.  ``None``: the training points, each excluding itself.
        n_neighbors : int, default=10
        return_distance : bool, default=True
        method : {"all", "inbag", "oob"}
            Which trees count (``"inbag"``/``"oob"`` only with ``X=None``).

        Returns
        -------
        dist : ndarray of float64, shape (n_queries, n_neighbors)
            ``1 - proximity``, ascending; only if ``return_distance``.
        ind : ndarray of int64, shape (n_queries, n_neighbors)
            Indices into the training data.  Ties go to the lower index; a
            query with fewer than ``n_neighbors`` co-leaf points is padded with
            the lowest-index remaining points at distance 1.
        """
        check_is_fitted(self)
        n_train = self._X_fit.shape[0]
        qleaves, is_train = self._leaves_of(X)
        n_avail = n_train - 1 if is_train else n_train
        if not isinstance(n_neighbors, numbers.Integral) or n_neighbors < 1:
            raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
        if n_neighbors > n_avail:
            raise ValueError(
                f"Expected n_neighbors <= n_samples_fit{' - 1' if is_train else ''}, "
                f"but n_neighbors = {n_neighbors}, n_samples_fit = {n_train}"
            )
        mask = self._masks(method, is_train)
        empty = np.zeros((0, 0), dtype=np.uint8)
        train_leaves, _ = self._leaves_of(None)
        # Reference points numbered, and queries visited, in a leaf order: forest
        # neighbours then sit close together in memory (locality_order).
        ref_order = locality_order(train_leaves)
        qorder = ref_order if is_train else locality_order(qleaves)
        ptr, members = leaf_lists(
            train_leaves, self._flat.node_offset, empty if mask is None else mask, ref_order
        )
        n_q = qleaves.shape[0]
        ind = np.empty((n_q, n_neighbors), dtype=np.int64)
        sim = np.empty((n_q, n_neighbors), dtype=np.float64)
        chunks = _chunks(n_q)
        qmask = empty if mask is None else mask
        parallel = Parallel(
            n_jobs=self._n_jobs_for(len(chunks)), prefer="threads", return_as="generator"
        )
        blocks = parallel(
            delayed(_kneighbors_rows)(
                qleaves,
                qmask,
                qorder,
                lo,
                hi,
                self._flat.node_offset,
                ptr,
                members,
                ref_order,
                n_train,
                n_neighbors,
                is_train,
            )
            for lo, hi in chunks
        )
        for (lo, hi), (b_ind, b_sim) in _progress(
            zip(chunks, blocks, strict=True), len(chunks), self.verbose, "neighbours"
        ):
            ind[qorder[lo:hi]] = b_ind
            sim[qorder[lo:hi]] = b_sim
        if return_distance:
            return 1.0 - sim, ind
        return ind

    def kneighbors_graph(
        self, X=None, n_neighbors: int = 10, mode: str = "connectivity", method: str = "all"
    ):
        """Sparse graph of forest neighbours, ready for precomputed-metric estimators.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None
            ``None``: the training points, each without itself.
        n_neighbors : int, default=10
        mode : {"connectivity", "distance"}
            Ones, or the distances ``1 - proximity``; a distance 0 (points that
            share every leaf) is stored as the smallest positive float64, because
            SciPy's graph routines and HDBSCAN drop stored zeros
            (``geoforest/_sparse.py``).
        method : {"all", "inbag", "oob"}

        Returns
        -------
        graph : scipy.sparse.csr_matrix of shape (n_queries, n_samples_fit)
            32-bit indices when they fit (the library's sparse policy,
            ``geoforest/_sparse.py``).  With ``X=None`` the graph is the union of
            every point's ``n_neighbors`` nearest and its transpose: symmetric, as
            scikit-learn's HDBSCAN and umap-learn require of a precomputed sparse
            distance matrix, with at least ``n_neighbors`` entries per row sorted by
            distance (the forest distance is symmetric, so the union changes no
            value).  With ``X`` given, row ``i`` holds exactly the ``n_neighbors``
            training points nearest to ``X[i]``, as in scikit-learn.  When the
            training graph falls apart into connected components (well-separated
            clusters), one edge at its true forest distance (usually 1: no shared
            leaf) joins each component to the next, because HDBSCAN and Isomap
            refuse a disconnected sparse graph; no distance is invented.
        """
        if mode not in ("connectivity", "distance"):
            raise ValueError(f"mode must be 'connectivity' or 'distance', got {mode!r}")
        dist, ind = self.kneighbors(X, n_neighbors, return_distance=True, method=method)
        if X is None:
            return self._training_graph(dist, ind, mode, method)
        n_q, k = ind.shape
        rows = np.repeat(np.arange(n_q, dtype=np.int64), k)
        data = np.ones(ind.size) if mode == "connectivity" else distance_data(dist.ravel())
        return csr_from_rows(rows, ind.ravel(), data, (n_q, self._X_fit.shape[0]))

    def _training_graph(self, dist, ind, mode: str, method: str) -> sp.csr_matrix:
        """The symmetric, connected graph of the training points' neighbours (see
        :meth:`kneighbors_graph`): the union of the rows and their transpose, and
        one edge at its true forest distance between consecutive connected
        components, so that consumers needing one component (HDBSCAN, Isomap)
        take it."""
        n, k = ind.shape
        rows = np.repeat(np.arange(n, dtype=np.int64), k)
        cols = ind.ravel().astype(np.int64)
        data = dist.ravel().astype(np.float64)
        rows, cols, data = symmetric_union(rows, cols, data, n)
        graph = csr_from_rows(rows, cols, np.ones(rows.size), (n, n))
        n_comp, comp = connected_components(graph, directed=False)
        if n_comp > 1:
            # each component's first point, chained in order of first appearance
            reps = np.unique(comp, return_index=True)[1]
            reps = reps[np.argsort(comp[reps])]
            a, b = reps[:-1], reps[1:]
            bridge = self._training_pair_distances(a, b, method)
            rows, cols, data = symmetric_union(
                np.concatenate([rows, a]), np.concatenate([cols, b]),
                np.concatenate([data, bridge]), n,
            )  # fmt: skip
        data = np.ones(rows.size) if mode == "connectivity" else distance_data(data)
        return csr_from_rows(rows, cols, data, (n, n))

    def _training_pair_distances(self, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
        """Forest distances ``1 - proximity`` between training points ``a[i]`` and ``b[i]``."""
        leaves, _ = self._leaves_of(None)
        same = leaves[a] == leaves[b]
        mask = self._masks(method, True)
        if mask is None:
            return 1.0 - same.mean(axis=1)
        both = mask[a].astype(bool) & mask[b].astype(bool)
        trees = both.sum(axis=1)
        shared = (same & both).sum(axis=1)
        return np.where(trees > 0, 1.0 - shared / np.maximum(trees, 1), 1.0)


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
    for part in (tree.left, tree.right, tree.threshold, tree.proj_ptr, tree.proj_idx,
                 tree.proj_weight, tree.n_node_samples):  # fmt: skip
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
    ValueError
        The forests cannot be parts of one forest (the message says why).
    """
    if not forests:
        raise ValueError("merge_forests needs at least one forest")
    first = forests[0]
    shaping = {k: v for k, v in first.get_params(deep=False).items() if k not in _MERGE_FREE}
    seen_trees: dict[bytes, int] = {}
    for i, f in enumerate(forests):
        check_is_fitted(f)
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
        for tree in f.trees_:
            key = tree_digest(tree)
            if seen_trees.get(key, i) != i:
                raise ValueError(
                    f"forest {i} holds a tree of forest {seen_trees[key]}: merged, it would "
                    "count twice (forests grown with the same random_state, or a forest "
                    "merged with a copy of itself)"
                )
            seen_trees[key] = i
    merged = type(first)(**first.get_params())
    merged.n_estimators = sum(len(f.trees_) for f in forests)
    merged.trees_ = [t for f in forests for t in f.trees_]
    merged.inbag_counts_ = np.hstack([f.inbag_counts_ for f in forests])
    merged.n_features_in_ = first.n_features_in_
    merged.n_projections_ = first.n_projections_
    merged._X_fit = first._X_fit
    merged._offset = getattr(first, "_offset", None)
    merged._flat = FlatForest.from_trees(merged.trees_)
    merged._train_leaves = None
    parts = [f._train_leaves if f._train_leaves is not None else f._inbag_leaves for f in forests]
    merged._inbag_leaves = None if any(p is None for p in parts) else np.hstack(parts)
    if hasattr(first, "classes_"):  # classifiers: labels and leaf class distributions
        merged.classes_ = first.classes_
        merged.n_classes_ = first.n_classes_
        merged._leaf_proba = merged._leaf_probabilities()
        merged._targets_digest = getattr(first, "_targets_digest", None)
    return merged
