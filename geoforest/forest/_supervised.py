"""Supervised projection forests: SPORF (sparse oblique) and MORF (manifold patches).

This module holds what classifiers and regressors share (input checks, the
projection settings of each family, importances, the parameter docs) and the
classifiers: the shared engine with the classification task, whose node
candidates are cut where the weighted Gini (or entropy) impurity decreases
most, trees grown until their leaves are pure, a tree's vote the class
distribution of the in-bag samples in the leaf a point reaches.  The
regressors are in ``_regressors.py``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils import TransformerTags
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._engine.projections import AXIS, PATCH, SPARSE, max_nonzeros, patch_params
from .._engine.splits import CLASS_CRITERIA
from .._validation import validate_data
from ._base import BaseForest
from ._dask import LOCAL, route
from ._growth import EngineConfig, resolve_max_features
from ._input import input_dtype, warn_if_constant
from ._merge import targets_digest

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


def sparse_config(forest, n_features: int, criterion: int) -> EngineConfig:
    """Engine settings of the oblique forests (SPORF; ``projection="axis"``: one feature)."""
    kind = AXIS if forest.projection == "axis" else SPARSE
    params = np.array([float(forest.feature_combinations)])
    return EngineConfig(
        projection=kind,
        projection_params=params,
        max_nonzeros=max_nonzeros(kind, params, n_features),
        criterion=criterion,
        criterion_params=np.zeros(1),
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
        n_projections=resolve_max_features(forest.max_features, n_features, allow_more=True),
    )


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
        if not sample_weight.sum() > 0:
            raise ValueError("sample_weight sums to zero: no sample can vote")
        if self.oob_score and not self.bootstrap and self.max_samples in (None, 1.0, X.shape[0]):
            raise ValueError(
                "out-of-bag estimates need rows left out of the trees' samples: "
                "bootstrap=True, or max_samples below the number of rows"
            )
        return X, y, sample_weight

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

        ``"count"`` (the manifold forests paper): for each feature, the number
        of split nodes, over all trees, whose chosen projection uses it.
        ``"impurity"``: the mean decrease in impurity (squared error for
        regressors), shared among a projection's features.
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


class _ForestClassifier(ClassifierMixin, SupervisedForest):
    """Shared fit / predict of geoforest's classification forests (not public)."""

    _parameter_constraints: dict = {
        **SupervisedForest._parameter_constraints,
        "criterion": [StrOptions(set(CLASS_CRITERIA))],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    def fit(self, X, y, sample_weight=None):
        """Grow the forest on labelled data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (converted to float32; NaN and inf are rejected).
        y : array-like of shape (n_samples,)
            Class labels (at least two distinct classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; ``None`` weighs every sample 1.  They multiply
            the bootstrap counts in the impurity and in the leaves' votes.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y, sample_weight = self._validate_fit(X, y, sample_weight)
        check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes; "
                f"y has only one class ({classes[0]!r})"
            )
        if self.class_weight is not None:
            sample_weight = sample_weight * compute_sample_weight(self.class_weight, y)
        self.classes_ = classes
        self.n_classes_ = int(classes.shape[0])
        y_enc = np.ascontiguousarray(y_enc, dtype=np.int32)
        order_data = np.column_stack(
            [X, y_enc.astype(np.float32), sample_weight.astype(np.float32)]
        )
        # Trees are built from a column-major copy: a node projects its rows
        # (kept in increasing order) feature by feature, which then reads
        # memory sequentially (docs/forests.md).
        self._grow(X, y_enc, sample_weight, self.n_classes_, order_data)
        self._targets_digest = targets_digest(y_enc, sample_weight)
        self._leaf_proba = self._leaf_probabilities()
        for name in ("oob_decision_function_", "oob_score_"):
            self.__dict__.pop(name, None)
        if self.oob_score:
            self.oob_decision_function_ = self._oob_means(self._leaf_proba)
            pred = self.classes_[np.argmax(self.oob_decision_function_, axis=1)]
            self.oob_score_ = self._oob_score_of(y, pred)
        return self

    @staticmethod
    def _default_oob_score(y_true, y_pred) -> float:
        return accuracy_score(y_true, y_pred)

    def _leaf_probabilities(self) -> np.ndarray:
        """Class distribution at every node of the flat forest (rows sum to 1)."""
        value = np.concatenate([t.value for t in self.trees_], axis=0)
        total = value.sum(axis=1, keepdims=True)
        uniform = np.full_like(value, 1.0 / value.shape[1])
        return np.divide(value, total, out=uniform, where=total > 0)

    def _take_targets_from(self, first) -> None:
        self.classes_ = first.classes_
        self.n_classes_ = first.n_classes_
        self._targets_digest = getattr(first, "_targets_digest", None)
        self._leaf_proba = self._leaf_probabilities()

    def _prediction_shape(self):
        """Columns (``None``: one value per row) and dtype of ``predict``'s result."""
        return None, self.classes_.dtype

    def predict_proba(self, X):
        """Class probabilities: the mean over trees of the leaf class distributions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.  A ``dask.array.Array`` ``X``
            gives a Dask array with ``X``'s row chunks (``docs/scale.md``).
        """
        check_is_fitted(self)
        if (proba := route(self, "predict_proba", X)) is not LOCAL:
            return proba
        return self._leaf_sums(X, self._leaf_proba)

    def predict(self, X):
        """Class with the highest mean probability (ties: the first in ``classes_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            A Dask array, with ``X``'s row chunks, for a ``dask.array.Array`` ``X``.
        """
        check_is_fitted(self)
        if (labels := route(self, "predict", X)) is not LOCAL:
            return labels
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def shared_doc(criterion: str, max_features: str) -> str:
    """The numpydoc lines of the parameters every supervised forest shares."""
    return f"""
    n_estimators : int, default=100
        Number of trees.{criterion}
    max_features : int, float, {{"sqrt", "log2"}} or None, default={max_features}
        Candidate projections per node (``d`` in the papers): an int, a
        fraction of ``n_features``, ``"sqrt"``, ``"log2"`` or ``None`` for
        ``n_features``.  Oblique and patch projections may exceed
        ``n_features``.
    min_samples_split : int, default=2
        Nodes with fewer samples become leaves.
    min_samples_leaf : int, default=1
        Minimum samples on each side of a cut.
    max_depth : int or None, default=None
        Maximum depth (``None``: grow until leaves are pure).
    max_samples : int, float or None, default=None
        Rows drawn per tree (``None``: ``n_samples``).
    bootstrap : bool, default=True
        Draw each tree's rows with replacement.
    importance : {"count", "impurity"}, default="count"
        What ``feature_importances_`` reports: the paper's projection counts
        or the mean decrease in impurity.
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


_SHARED_DOC = shared_doc(
    """
    criterion : {"gini", "entropy"}, default="gini"
        Impurity whose weighted decrease chooses each cut.
    class_weight : "balanced", dict or None, default=None
        Weights of the classes, multiplying ``sample_weight``: ``"balanced"``
        gives class ``c`` the weight ``n_samples / (n_classes * n_c)``; a dict
        maps labels to weights (missing labels: 1).  As scikit-learn's
        ``class_weight`` (``"balanced_subsample"`` is not offered).""",
    '"sqrt"',
)

_ATTRIBUTES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_classes_ : int
        Number of classes.
    trees_ : list of Tree
        Fitted trees as flat arrays; ``Tree.value`` holds each node's weighted
        class counts.
    inbag_counts_ : ndarray of uint8, shape (n_samples, n_estimators)
        How many times each training row was drawn for each tree.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_projections_ : int
        Candidate projections per node, resolved from ``max_features``.
    nbytes_ : int
        Memory of the fitted trees in bytes: ``trees_``, their flat copy for
        queries, ``inbag_counts_`` and every node's class distribution (not the
        training data).
    feature_importances_ : ndarray of shape (n_features,)
        See ``importance``.
    oob_score_ : float
        With ``oob_score``: the accuracy of the out-of-bag predictions.
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        With ``oob_score``: each training row's class probabilities from the
        trees that left it out (zeros for a row no tree left out)."""

_SPORF_REF = """T. M. Tomita et al., "Sparse Projection Oblique Randomer Forests",
       JMLR 21(104), 2020 (arXiv:1506.03410)"""
_MORF_REF = (
    "R. Perry, T. M. Tomita, J. Patsolic, B. Falk and J. T. Vogelstein,\n"
    '       "Manifold Forests: Closing the Gap on Neural Networks"'
)


class ObliqueForestClassifier(_ForestClassifier):
    __doc__ = f"""Sparse projection oblique randomer forest (SPORF) classifier.

    Each node draws ``max_features`` sparse random projections — a few distinct
    features weighted ``+1`` or ``-1`` — and cuts the best one by impurity
    (Tomita et al.; the manifold forests paper's baseline).  With
    ``projection="axis"`` each candidate is a single feature: Breiman's random
    forest on the same engine.  Besides ``predict``, the fitted forest gives the
    supervised proximity kernel (``proximity``, ``kneighbors``) shared by every
    geoforest forest.

    Parameters
    ----------{_SHARED_DOC}
    projection : {{"sparse", "axis"}}, default="sparse"
        Oblique sparse projections (SPORF) or single features (random forest).
    feature_combinations : float, default=1.5
        Mean number of nonzeros per sparse projection: ``1 + Poisson(c - 1)``
        distinct features (at least one), each ``+-1``.

    Attributes
    ----------{_ATTRIBUTES_DOC}

    References
    ----------
    .. [1] {_SPORF_REF}.
    .. [2] {_MORF_REF}
       (SPORF is its baseline).
    .. [3] L. Breiman, "Random Forests", Machine Learning 45, 2001
       (``projection="axis"``; the forest proximity).

    Examples
    --------
    >>> import geoforest as gf
    >>> X, y = gf.datasets.make_circle_segments(200, random_state=0)
    >>> clf = gf.ObliqueForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        **_ForestClassifier._parameter_constraints,
        **SPARSE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "gini",
        projection: str = "sparse",
        max_features="sqrt",
        feature_combinations: float = 1.5,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        max_depth: int | None = None,
        max_samples=None,
        bootstrap: bool = True,
        importance: str = "count",
        oob_score=False,
        class_weight=None,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.projection = projection
        self.max_features = max_features
        self.feature_combinations = feature_combinations
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.importance = importance
        self.oob_score = oob_score
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _engine_config(self, n_features: int) -> EngineConfig:
        return sparse_config(self, n_features, CLASS_CRITERIA[self.criterion])


class ManifoldForestClassifier(_ForestClassifier):
    __doc__ = f"""Manifold forest (MORF) classifier: projections are sums of contiguous patches.

    The features are pixels of a 1-D series (``image_shape=(L,)``) or a 2-D
    image (``image_shape=(H, W)``, row-major).  Each node draws
    ``max_features`` rectangles — corner, width and height sampled as in the
    manifold forests paper (Perry et al.) — projects each sample to the sum of
    the pixels in a rectangle, and cuts the best one by impurity.  With
    ``wrap=True`` patches continue across the edges (circular or periodic
    features, e.g. a discretised circle).

    Parameters
    ----------
    image_shape : tuple of int or None, default=None
        ``(L,)`` or ``(H, W)``; the product must equal ``n_features``.
        ``None``: a 1-D series of ``n_features`` steps.
    min_patch_shape : int or tuple of int or None, default=None
        Smallest patch per axis (an int applies to each axis; ``None``: 1).
    max_patch_shape : int or tuple of int or None, default=None
        Largest patch per axis (``None``: ``min(4, size)`` per axis).  Must
        fit in ``image_shape``.
    wrap : bool, default=False
        Let patches wrap around the grid (modulo ``H`` and ``W``).{_SHARED_DOC}

    Attributes
    ----------{_ATTRIBUTES_DOC}

    References
    ----------
    .. [1] {_MORF_REF}.
    .. [2] {_SPORF_REF}
       (the sparse oblique forest MORF builds on).

    Examples
    --------
    >>> import geoforest as gf
    >>> X, y = gf.datasets.make_bars(100, random_state=0)
    >>> clf = gf.ManifoldForestClassifier(
    ...     image_shape=(28, 28), n_estimators=10, random_state=0
    ... ).fit(X, y)
    >>> clf.feature_importances_.reshape(28, 28).shape
    (28, 28)
    """

    _parameter_constraints: dict = {**_ForestClassifier._parameter_constraints, **PATCH_CONSTRAINTS}

    def __init__(
        self,
        image_shape=None,
        *,
        min_patch_shape=None,
        max_patch_shape=None,
        wrap: bool = False,
        n_estimators: int = 100,
        criterion: str = "gini",
        max_features="sqrt",
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        max_depth: int | None = None,
        max_samples=None,
        bootstrap: bool = True,
        importance: str = "count",
        oob_score=False,
        class_weight=None,
        n_jobs: int | None = None,
        random_state=None,
        verbose: int = 0,
    ):
        self.image_shape = image_shape
        self.min_patch_shape = min_patch_shape
        self.max_patch_shape = max_patch_shape
        self.wrap = wrap
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.importance = importance
        self.oob_score = oob_score
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _engine_config(self, n_features: int) -> EngineConfig:
        return patch_config(self, n_features, CLASS_CRITERIA[self.criterion])
