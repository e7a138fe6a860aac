"""Regression forests: SPORF and MORF with the squared-error criterion.

The same engine and projections as the classifiers (``_supervised.py``), with
the regression task: a node's candidate projections are cut where the
weighted sum of squared errors of the targets decreases most, trees grow until
their leaves hold a single target value (or a limit stops them), and a tree's
prediction is the weighted mean target of the in-bag samples in the leaf a
point reaches — Breiman's regression forest, with oblique or patch splits.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._engine.splits import REGRESSION_CRITERIA
from ._dask import LOCAL, dask_predict
from ._growth import NO_LABELS, EngineConfig
from ._input import check_float32_range
from ._merge import targets_digest
from ._supervised import (
    _EXTRA_REFS,
    _MORF_REF,
    _SPORF_REF,
    PATCH_CONSTRAINTS,
    SPARSE_CONSTRAINTS,
    SupervisedForest,
    indicator_groups,
    patch_config,
    shared_doc,
    sparse_config,
)


class _ForestRegressor(RegressorMixin, SupervisedForest):
    """Shared fit / predict of geoforest's regression forests (not public)."""

    _parameter_constraints: dict = {
        **SupervisedForest._parameter_constraints,
        "criterion": [StrOptions(set(REGRESSION_CRITERIA))],
    }

    def _groups_of(self, X: np.ndarray) -> np.ndarray | None:
        """Feature groups the sparse candidates keep within (``None``: no groups)."""
        return None

    def fit(self, X, y, sample_weight=None):
        """Grow the forest on data with real-valued targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (converted to float32; NaN and inf are rejected).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (float64; NaN, inf and magnitudes beyond float32's range
            are rejected).  Several outputs grow one forest whose cuts
            decrease their summed squared error; a column vector ``(n, 1)``
            is one output, flattened with scikit-learn's
            ``DataConversionWarning`` (predictions of shape ``(n,)``).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; ``None`` weighs every sample 1.  They multiply
            the bootstrap counts in the criterion and in the leaves' means; rows
            of weight 0 are never drawn into a tree's sample.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        X, y, sample_weight = self._validate_fit(
            X, y, sample_weight, multi_output=True, y_numeric=True
        )
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2 and y.shape[1] == 1:
            # scikit-learn's single-output convention: predictions of shape (n,).
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please "
                "change the shape of y to (n_samples,), for example using ravel().",
                DataConversionWarning,
                stacklevel=2,
            )
            y = y[:, 0]
        check_float32_range(y, "y")
        self._y_columns = y.ndim == 2
        self._feature_groups = self._groups_of(X)  # read by _engine_config
        targets = np.ascontiguousarray(y.reshape(y.shape[0], -1))
        self.n_outputs_ = int(targets.shape[1])
        self._grow_weighted(
            X, NO_LABELS, sample_weight, 0, targets.astype(np.float32), targets=targets
        )
        self._targets_digest = targets_digest(targets, sample_weight)
        self._leaf_values = self._leaf_means()
        for name in ("oob_prediction_", "oob_score_"):
            self.__dict__.pop(name, None)
        if self.oob_score:
            oob = self._oob_means(self._leaf_values)
            self.oob_prediction_ = oob if self._y_columns else oob[:, 0]
            self.oob_score_ = self._oob_score_of(y, self.oob_prediction_)
        return self

    @staticmethod
    def _default_oob_score(y_true, y_pred) -> float:
        return r2_score(y_true, y_pred)

    def _leaf_means(self) -> np.ndarray:
        """Weighted mean targets at every node of the flat forest."""
        return np.concatenate([t.value for t in self.trees_], axis=0)

    def _take_targets_from(self, first) -> None:
        self._fit_weights = first._fit_weights
        self.n_outputs_ = first.n_outputs_
        self._y_columns = first._y_columns
        self._targets_digest = getattr(first, "_targets_digest", None)
        self._leaf_values = self._leaf_means()

    def _prediction_shape(self):
        """Columns (``None``: one value per row) and dtype of ``predict``'s result."""
        return (self.n_outputs_ if self._y_columns else None), np.dtype(np.float64)

    def predict(self, X):
        """Mean over trees of the mean target in the leaf each point reaches.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            ``(n_samples,)`` for one output (``y`` of shape ``(n,)`` or
            ``(n, 1)`` in ``fit``).  A ``dask.array.Array`` ``X`` gives a Dask
            array with ``X``'s row chunks (``docs/scale.md``).
        """
        check_is_fitted(self)
        if (pred := dask_predict(self, X)) is not LOCAL:
            return pred
        pred = self._leaf_sums(X, self._leaf_values)
        return pred if self._y_columns else pred[:, 0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


_SHARED_DOC = shared_doc(
    """
    criterion : {"squared_error"}, default="squared_error"
        Whose weighted decrease chooses each cut: the sum over outputs of the
        squared errors around each side's mean.""",
    "1.0",
)

_ATTRIBUTES_DOC = """
    n_outputs_ : int
        Number of targets.
    trees_ : list of Tree
        Fitted trees as flat arrays; ``Tree.value`` holds each node's weighted
        mean targets.
    inbag_counts_ : ndarray of uint8, shape (n_samples, n_estimators)
        How many times each training row was drawn for each tree.
    n_features_in_ : int
        Number of features seen in ``fit``.
    n_projections_ : int
        Candidate projections per node, resolved from ``max_features``.
    nbytes_ : int
        Memory of the fitted trees in bytes: ``trees_``, their flat copy for
        queries and ``inbag_counts_`` (not the training data).
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
        With ``oob_score``: the R² of the out-of-bag predictions.
    oob_prediction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        With ``oob_score``: each training row's prediction by the trees that
        left it out (0 for a row no tree left out)."""


class ObliqueForestRegressor(_ForestRegressor):
    __doc__ = f"""Sparse projection oblique randomer forest (SPORF) regressor.

    Each node draws ``max_features`` sparse random projections — a few distinct
    features weighted ``+1`` or ``-1`` — and cuts the one whose cut decreases
    the squared error of the targets most (Tomita et al.).  With
    ``projection="axis"`` each candidate is a single feature: Breiman's
    regression forest on the same engine.  Besides ``predict``, the fitted
    forest gives the supervised proximity kernel (``proximity``,
    ``kneighbors``) shared by every geoforest forest.

    Parameters
    ----------{_SHARED_DOC}
    projection : {{"sparse", "axis"}}, default="sparse"
        Oblique sparse projections (SPORF) or single features (random forest).
    feature_combinations : float, default=1.5
        Mean number of nonzeros per sparse projection: ``1 + Poisson(c - 1)``
        distinct features (at least one), each ``+-1``.  Where some columns
        hold only 0 and 1 (one-hot indicators) and others do not, a
        projection keeps only the features of its first feature's kind
        (``splitter="best"``): an indicator plus a numeric column is
        continuous and needs a full sort, where sums of indicators take a
        few values and are cut without one (``docs/defaults.md``).

    Attributes
    ----------{_ATTRIBUTES_DOC}

    References
    ----------
    .. [1] {_SPORF_REF}.
    .. [2] L. Breiman, "Random Forests", Machine Learning 45, 2001
       (``projection="axis"``; regression forests).
    .. [3] {_EXTRA_REFS.format(4)}

    Examples
    --------
    >>> import numpy as np
    >>> import geoforest as gf
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 5))
    >>> y = np.sin(3 * (X[:, 0] + X[:, 1])) + 0.1 * rng.normal(size=300)
    >>> reg = gf.ObliqueForestRegressor(n_estimators=20, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        **_ForestRegressor._parameter_constraints,
        **SPARSE_CONSTRAINTS,
    }

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "squared_error",
        splitter: str = "best",
        projection: str = "sparse",
        max_features=1.0,
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
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _groups_of(self, X: np.ndarray) -> np.ndarray | None:
        # Indicator and numeric columns apart: only sorted sparse cuts gain from it.
        if self.splitter != "best" or self.projection == "axis":
            return None
        return indicator_groups(X)

    def _engine_config(self, n_features: int) -> EngineConfig:
        criterion = REGRESSION_CRITERIA[self.criterion]
        return sparse_config(self, n_features, criterion, self._feature_groups)


class ManifoldForestRegressor(_ForestRegressor):
    __doc__ = f"""Manifold forest (MORF) regressor: projections are sums of contiguous patches.

    The features are pixels of a 1-D series (``image_shape=(L,)``) or a 2-D
    image (``image_shape=(H, W)``, row-major).  Each node draws
    ``max_features`` rectangles, projects each sample to the sum of the pixels
    in a rectangle, and cuts the one that decreases the squared error of the
    targets most (Perry et al., with the regression criterion).

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
    .. [2] {_SPORF_REF}.
    .. [3] {_EXTRA_REFS.format(4)}

    Examples
    --------
    >>> import numpy as np
    >>> import geoforest as gf
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 64))
    >>> y = X[:, 10:14].sum(axis=1)
    >>> reg = gf.ManifoldForestRegressor(image_shape=(8, 8), n_estimators=10,
    ...                                  random_state=0).fit(X, y)
    >>> reg.feature_importances_.reshape(8, 8).shape
    (8, 8)
    """

    _parameter_constraints: dict = {
        **_ForestRegressor._parameter_constraints,
        **PATCH_CONSTRAINTS,
    }

    def __init__(
        self,
        image_shape=None,
        *,
        min_patch_shape=None,
        max_patch_shape=None,
        wrap: bool = False,
        n_estimators: int = 100,
        criterion: str = "squared_error",
        splitter: str = "best",
        max_features=1.0,
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
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _engine_config(self, n_features: int) -> EngineConfig:
        return patch_config(self, n_features, REGRESSION_CRITERIA[self.criterion])
