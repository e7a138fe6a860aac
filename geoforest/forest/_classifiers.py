"""Classification forests: SPORF (sparse oblique) and MORF (manifold patches).

The shared engine with the classification task: a node's candidate
projections are cut where the weighted Gini (or entropy) impurity decreases
most, trees grow until their leaves are pure, and a tree's vote is the class
distribution of the in-bag samples in the leaf a point reaches.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.metrics import accuracy_score
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._engine.splits import CLASS_CRITERIA
from ._dask import LOCAL, dask_predict, dask_predict_proba
from ._growth import EngineConfig
from ._input import F32_MAX, check_float32_range
from ._merge import targets_digest
from ._supervised import (
    _EXTRA_REFS,
    _MORF_REF,
    _SPORF_REF,
    PATCH_CONSTRAINTS,
    SPARSE_CONSTRAINTS,
    SupervisedForest,
    patch_config,
    shared_doc,
    sparse_config,
)


def check_class_weight(class_weight) -> None:
    """Refuse a ``class_weight`` dict with a weight that is not a finite, non-negative number.

    scikit-learn's ``compute_sample_weight`` takes any value, and a negative,
    NaN or infinite class weight would flow into the leaves' class counts:
    probabilities below 0 or above 1, or NaN turned uniform.  Weights beyond
    float32's range are refused too (the forests keep weights in float32
    beside the rows, ``_input.check_float32_range``).
    """
    if not isinstance(class_weight, dict):
        return
    for label, weight in class_weight.items():
        if not isinstance(weight, numbers.Real) or not 0.0 <= weight <= F32_MAX:
            raise ValueError(
                f"class_weight[{label!r}] = {weight!r}: class weights must be finite, "
                f"non-negative numbers (at most {F32_MAX:.1e})"
            )


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
            the bootstrap counts in the impurity and in the leaves' votes; rows
            of weight 0 are never drawn into a tree's sample.

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
            check_class_weight(self.class_weight)
            sample_weight = sample_weight * compute_sample_weight(self.class_weight, y)
            if not sample_weight.sum() > 0:
                raise ValueError(
                    f"class_weight={self.class_weight!r} leaves every sample with weight 0: "
                    "no sample can vote"
                )
            check_float32_range(sample_weight, "sample_weight * class_weight")
        self.classes_ = classes
        self.n_classes_ = int(classes.shape[0])
        y_enc = np.ascontiguousarray(y_enc, dtype=np.int32)
        self._grow_weighted(X, y_enc, sample_weight, self.n_classes_, y_enc.astype(np.float32))
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
        self._fit_weights = first._fit_weights
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
        if (proba := dask_predict_proba(self, X)) is not LOCAL:
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
        if (labels := dask_predict(self, X)) is not LOCAL:
            return labels
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


_SHARED_DOC = shared_doc(
    """
    criterion : {"gini", "entropy"}, default="gini"
        Impurity whose weighted decrease chooses each cut.
    class_weight : "balanced", dict or None, default=None
        Weights of the classes, multiplying ``sample_weight``: ``"balanced"``
        gives class ``c`` the weight ``n_samples / (n_classes * n_c)``; a dict
        maps labels to finite, non-negative weights (missing labels: 1).  They
        multiply the bootstrap counts, as scikit-learn's forests did before
        1.9, which instead draws rows in proportion to them.  With fully grown
        trees the multiplied weights cannot change a pure leaf's vote, only
        the cuts, and ``"balanced"`` can then *lower* minority recall where
        scikit-learn 1.9 raises it (figures in ``docs/forests.md``).
        ``"balanced_subsample"`` is not offered.""",
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
        Sums to 1; ``importance`` chooses what it measures.  Unlike
        scikit-learn's forests, the default (``importance="count"``) is not
        the mean decrease in impurity but how many split nodes use each
        feature, and the two can rank features very differently: a one-hot
        column is cut at most once on a path, so it scores low by count
        however much its cuts gain.  ``importance="impurity"`` gives the mean
        decrease in impurity, scikit-learn's measure; it is read from the
        fitted trees, so ``set_params(importance="impurity")`` needs no refit.
    oob_score_ : float
        With ``oob_score``: the accuracy of the out-of-bag predictions.
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        With ``oob_score``: each training row's class probabilities from the
        trees that left it out (zeros for a row no tree left out)."""


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
    .. [4] {_EXTRA_REFS.format(5)}

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
        splitter: str = "best",
        projection: str = "sparse",
        max_features="sqrt",
        feature_combinations: float = 1.5,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_depth: int | None = None,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
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
        self.splitter = splitter
        self.projection = projection
        self.max_features = max_features
        self.feature_combinations = feature_combinations
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
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
    .. [3] {_EXTRA_REFS.format(4)}

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
        splitter: str = "best",
        max_features="sqrt",
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_depth: int | None = None,
        max_leaf_nodes: int | None = None,
        min_impurity_decrease: float = 0.0,
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
        self.splitter = splitter
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
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
