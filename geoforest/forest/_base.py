"""The shared forest estimator: fit trees in parallel, then leaves and kernels.

Subclasses only say which projection distribution and split rule the engine
uses (:meth:`BaseForest._engine_config`); everything else — validation, per-tree
seeds, parallel building, ``apply``, ``proximity`` and ``transform`` — lives
here, and the neighbour search (``kneighbors``, ``kneighbors_graph``) in
``_search.py``.  The flat copy of the trees that queries read, and the
parallel query tasks, are in ``_flat.py``; ``merge_forests`` is in
``_merge.py``; how one tree grows is in ``_growth.py``.  Every public method
first asks its own entry point in ``forest/_dask/`` (``dask_fit``,
``dask_apply``, ...) whether Dask has a part in the call — a Dask array
given, or a forest grown from one — and goes on in memory when it has not.
"""

from __future__ import annotations

import numbers
import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._engine.projections import GAUSSIAN
from .._engine.sampling import canonical_order
from .._limits import check_dense_size
from .._progress import progress as _progress
from .._sparse import as_output_csr
from .._validation import N_JOBS, is_dask_array, validate_data
from ..proximity import ProximityCounts
from ._dask import (
    LOCAL,
    dask_apply,
    dask_fit,
    dask_proximity,
    dask_proximity_counts,
    dask_transform,
)
from ._flat import (
    FlatForest,
    apply_rows,
    check_method,
    coleaf_matrix,
    row_blocks,
    tree_rows_leaves,
)
from ._growth import (
    NO_LABELS,
    NO_TARGETS,
    NO_WEIGHTS,
    EngineConfig,
    fit_facts,
    fit_tree,
    may_tie,
    tree_limits,
    tree_sample_size,
    tree_seeds,
)
from ._input import (
    centring_offset,
    input_dtype,
    to_float32,
    warn_if_constant,
    warn_if_rows_merged,
)
from ._search import NeighborSearchMixin


def _n_rows(X) -> int:
    """Rows of an array-like before validation (for size checks made before any work)."""
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else len(X)


class BaseForest(NeighborSearchMixin, BaseEstimator, metaclass=ABCMeta):
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
        X : array-like of shape (n_samples, n_features), or dask.array.Array
            Training data (converted to float32; NaN and inf are rejected).  A
            Dask array stays on the workers: each tree's sample is gathered
            from the chunks that hold it, and the tree equals the one grown on
            ``X.compute()`` with the same ``random_state`` (``docs/scale.md``).
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted forest.
        """
        self._validate_params()
        if (fitted := dask_fit(self, X)) is not LOCAL:
            return fitted
        X = self._validate_X(X, reset=True)
        warn_if_constant(X)
        return self._grow(X)

    def _grow(
        self,
        X: np.ndarray,
        y: np.ndarray = NO_LABELS,
        sample_weight: np.ndarray = NO_WEIGHTS,
        n_classes: int = 0,
        order_data: np.ndarray | None = None,
        X_build: np.ndarray | None = None,
        targets: np.ndarray = NO_TARGETS,
    ):
        """Grow the trees on validated float32 ``X`` (labels for classification,
        float64 ``targets`` of shape ``(n, n_outputs)`` for regression).

        ``order_data`` (default ``X``) is what the canonical row order hashes;
        classifiers pass ``X`` with the labels and weights appended so that
        identical rows with different labels are ordered by content too.
        ``X_build`` is the copy the trees are built from.  By default it is a
        column-major copy of ``X`` for projections of a few features each
        (axis, sparse, patch): a node's rows stay in increasing order, so the
        engine then reads each feature's column sequentially (figures in
        ``docs/forests.md``); Gaussian directions use every feature and read
        ``X`` row by row.  Same values either way, so the same trees.

        Supervised trees grow on the rows in canonical order (``X_build``,
        labels, targets and weights permuted once): every node then sums its
        rows' weights and targets in an order that does not depend on how the
        caller ordered the rows, so floating-point sums, and with them leaf
        values and near-tied cuts, are the same for any row order.  Their
        samples are drawn from the rows of positive weight only; rows of
        weight 0 are out of every tree's sample.
        """
        n_samples, n_features = X.shape
        cfg = self._engine_config(n_features)
        if X_build is None and cfg.projection != GAUSSIAN:
            X_build = np.asfortranarray(X)
        n_draw = tree_sample_size(self, n_samples, stacklevel=3)
        order = canonical_order(X if order_data is None else order_data)
        draw_order, back = order, None
        if n_classes > 0 or targets.shape[1] > 0:
            X_build = (X if X_build is None else X_build)[order]
            if cfg.projection != GAUSSIAN:
                X_build = np.asfortranarray(X_build)
            y = y[order] if y.shape[0] else y
            targets = targets[order] if targets.shape[0] else targets
            sample_weight = sample_weight[order]
            draw_order, back = np.arange(n_samples), order
            if sample_weight.shape[0] and not (sample_weight > 0).all():
                # Zero-weight rows are never drawn (nor are they by scikit-learn's
                # weighted bootstrap): every leaf then holds weight, and no tree
                # votes 0 for want of a weighted row.
                draw_order = np.flatnonzero(sample_weight > 0)
                if not self.bootstrap:
                    n_draw = min(n_draw, draw_order.shape[0])
        limits = tree_limits(self)
        seeds = tree_seeds(self.random_state, self.n_estimators)
        supervised = n_classes > 0 or targets.shape[1] > 0
        ties = supervised or may_tie(X if X_build is None else X_build)
        facts = fit_facts(cfg, X if X_build is None else X_build, targets.shape[1])
        jobs = (
            delayed(fit_tree)(
                X if X_build is None else X_build,
                draw_order,
                n_draw,
                bool(self.bootstrap),
                int(seed),
                cfg,
                limits,
                y,
                sample_weight,
                n_classes,
                targets,
                ties,
                facts,
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
            if back is not None:  # canonical positions -> the caller's rows
                samples, rows = back[samples], back[rows]
            trees.append(tree)
            inbag[:, t] = np.minimum(np.bincount(samples, minlength=n_samples), 255)
            leaves[rows, t] = leaf
        return self._install_fit(
            trees, X, self._offset, inbag, cfg.n_projections, order, leaves, seeds
        )

    # ----------------------------------------- what fits and the Dask paths share
    # ``forest/_dask/`` and ``merge_forests`` set and read a forest through these
    # methods, its public methods and the attributes named here, nothing else.
    def _install_fit(
        self,
        trees: list,
        X_fit,
        offset: np.ndarray | None,
        inbag_counts,
        n_projections: int,
        order: np.ndarray | None = None,
        inbag_leaves: np.ndarray | None = None,
        tree_seeds: np.ndarray | None = None,
    ):
        """Put grown trees in place: the one way a forest's fitted state is set.

        The in-memory fit, the Dask fit and ``merge_forests`` all end here.
        ``X_fit`` (the float32 training rows, an ndarray or a Dask array) and
        ``_flat`` (the trees' flat copy) are what every query reads;
        ``inbag_leaves`` the training rows' leaves known from growing (``-1``:
        not known), completed on first use; ``tree_seeds`` each tree's seed
        (``merge_forests`` tells a tree in two parts from two equal trees by
        it).  Ends with :meth:`_finish_fit`.
        """
        self.trees_ = trees
        self.inbag_counts_ = inbag_counts
        self.n_features_in_ = X_fit.shape[1]
        self.n_projections_ = n_projections
        self._offset = offset
        self._X_fit = X_fit
        self._flat = FlatForest.from_trees(trees)
        self._train_leaves = None
        self._inbag_leaves = inbag_leaves
        self._tree_seeds = tree_seeds
        self._finish_fit(order)
        return self

    @property
    def _fitted_on_dask(self) -> bool:
        """Whether the forest was grown from a Dask array (its training rows are one)."""
        return is_dask_array(getattr(self, "_X_fit", None))

    def _for_workers(self):
        """A copy sharing every array, for the workers' query tasks: without the
        per-tree arrays the queries never read (``trees_`` a list of ``None``)
        and, if grown from a Dask array, without its lazy training rows and
        in-bag counts."""
        light = object.__new__(type(self))
        light.__dict__.update(self.__dict__)
        light.trees_ = [None] * len(self.trees_)
        if self._fitted_on_dask:
            light._X_fit = light.inbag_counts_ = None
        return light

    def _with_training_leaves(self, leaves: np.ndarray):
        """A copy sharing every array, holding the training points' ``leaves``
        (which pickling drops) so that a worker's queries need not recompute them."""
        local = object.__new__(type(self))
        local.__dict__.update(self.__dict__)
        local._train_leaves = leaves
        return local

    def _rfgap_proximity(self, X, Y, dense: bool, max_bytes):
        raise ValueError(
            "method='rfgap' needs a supervised forest: RF-GAP proximities weigh the "
            "training points by the labels' out-of-bag predictions"
        )

    def _rfgap_neighbors(self, X, n_neighbors: int, return_distance: bool):
        self._rfgap_proximity(X, None, False, None)  # refuses

    def _take_targets_from(self, first) -> None:
        """Hook of ``merge_forests``: copy what ``first`` learned from its labels or
        targets (supervised forests; the trees are in place)."""

    def _check_dask_fit(self) -> None:
        """Hook before growing from a Dask array: refuse parameters it cannot serve."""

    def _finish_fit(self, order: np.ndarray | None) -> None:
        """Hook once the trees are in place (in-memory and Dask fits, merges); ``order``:
        the canonical row order of the data, ``None`` if not computed."""

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
        chunks = row_blocks(n)
        parallel = Parallel(
            n_jobs=self._n_jobs_for(len(chunks)), prefer="threads", return_as="generator"
        )
        # Each task returns its rows (any joblib backend, Dask included); big
        # arrays go as top-level arguments so Dask scatters them once.
        blocks = parallel(delayed(apply_rows)(X, lo, hi, *self._flat) for lo, hi in chunks)
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
            delayed(tree_rows_leaves)(self._X_fit, missing[t], t, *self._flat) for t in todo
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

    def apply(self, X=None):
        """Leaf reached by each sample in each tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None, default=None
            Query points.  ``None``: the training points (as ``kneighbors``
            with ``X=None``).  Their leaves are computed once and kept: the
            neighbour and proximity queries on the training points reuse them.

        Returns
        -------
        leaves : ndarray of int32, shape (n_samples, n_estimators)
            Node id (within its tree) of the leaf each sample falls in.  With
            ``X=None`` a read-only view of the kept array (copy it to edit it);
            equal to ``apply(X_train)``.  A ``dask.array.Array`` ``X`` gives a
            Dask array of the same row chunks (``docs/scale.md``), and so does
            ``X=None`` for a forest grown from a Dask array (not kept: computed
            on the workers when asked for).
        """
        check_is_fitted(self)
        if (leaves := dask_apply(self, X)) is not LOCAL:
            return leaves
        if X is None:
            leaves = self._leaves_of(None)[0].view()
            leaves.flags.writeable = False
            return leaves
        return self._apply(self._validate_X(X, reset=False))

    @property
    def nbytes_(self) -> int:
        """Bytes held by the fitted trees.

        The trees (``trees_``), their flat copy that every query reads,
        ``inbag_counts_`` and, for classifiers, the class distribution of every
        node.  Not counted: the forest's own float32 copy of the training data
        and the training points' leaves kept by :meth:`apply`.
        """
        check_is_fitted(self)
        total = sum(a.nbytes for tree in self.trees_ for a in tree)
        total += self._flat.nbytes
        if isinstance(self.inbag_counts_, np.ndarray):  # a Dask fit's stay on the workers
            total += self.inbag_counts_.nbytes
        leaf_proba = getattr(self, "_leaf_proba", None)
        return int(total + (0 if leaf_proba is None else leaf_proba.nbytes))

    def transform(self, X):
        """One-hot leaf embedding (like scikit-learn's ``RandomTreesEmbedding``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        embedding : scipy.sparse.csr_matrix of shape (n_samples, n_leaves_total)
            One column per leaf of the forest (trees in order, leaves in node
            order); each row has exactly ``n_estimators`` ones.  A
            ``dask.array.Array`` ``X`` gives a Dask array of CSR blocks, one per
            row chunk (``docs/scale.md``).
        """
        check_is_fitted(self)
        if (embedding := dask_transform(self, X)) is not LOCAL:
            return embedding
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
        check_method(method)
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
        dask_proximity_counts(self, X)  # refuses wherever Dask is involved
        xleaves, x_train = self._leaves_of(X)
        yleaves, y_train = self._leaves_of(Y)
        mask = self._masks(method, x_train and y_train)
        coleaf = coleaf_matrix(
            xleaves, yleaves, mask, self._flat.node_offset, self._n_jobs_for(len(xleaves))
        )
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
        method : {"all", "inbag", "oob", "rfgap"}
            See :meth:`proximity_counts`.  ``"rfgap"`` (supervised forests,
            ``Y=None``): the RF-GAP proximity of Rhodes et al., whose rows
            weigh the training points so that ``P @ y`` is each training
            point's out-of-bag prediction (a new point's: its prediction);
            rows sum to 1 and are not symmetric (``forest/_rfgap.py``).
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

            A ``dask.array.Array`` ``X`` (with ``Y=None``) gives a Dask array
            with ``X``'s row chunks and one column chunk: a CSR block per row
            chunk, or dense blocks with ``dense`` (``max_bytes`` then bounds a
            block), computed on the workers.  A forest grown from a Dask array
            gives a Dask array for ``X=None`` or a Dask ``X`` (column chunks:
            its reference partitions, ``docs/scale.md``) and the computed
            result for an in-memory ``X``.

        Raises
        ------
        ValueError
            ``dense`` and the result would exceed ``max_bytes``.
        """
        if method == "rfgap":
            return self._rfgap_proximity(X, Y, dense, max_bytes)
        if (S := dask_proximity(self, X, Y, method, dense, max_bytes)) is not LOCAL:
            return S
        if dense:
            check_is_fitted(self, "trees_")
            n_train = self.inbag_counts_.shape[0]
            n_rows = n_train if X is None else _n_rows(X)
            n_cols = n_train if Y is None else _n_rows(Y)
            check_dense_size(
                (n_rows, n_cols),
                np.float64,
                what="proximity(dense=True)",
                max_bytes=max_bytes,
                hint="The sparse proximity (dense=False) or kneighbors hold the same information.",
            )
        S = self.proximity_counts(X, Y, method=method).proximity()
        return S.toarray() if dense else S
