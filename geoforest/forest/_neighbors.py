"""``ForestNeighborsTransformer``: a forest's neighbour graph as a pipeline step."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
    is_classifier,
)
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._sparse import csr_from_rows, distance_data
from .._validation import N_JOBS, validate_data, with_seed_and_threads
from ._base import BaseForest

__all__ = ["ForestNeighborsTransformer"]


class ForestNeighborsTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Transform points into a sparse graph of their forest neighbours.

    The contract of scikit-learn's :class:`~sklearn.neighbors.KNeighborsTransformer`
    with a learned, data-dependent distance: the forest's own ``kneighbors``
    distances.  For an ``UnsupervisedForest`` at its default
    (``distance="auto"``) these are its learned metric, a weighted Euclidean
    distance among the points that share leaves with the query (not bounded by
    1); with ``distance="proximity"``, and for the other forests, ``1 -
    proximity``, the fraction of trees in which two points do not share a
    leaf.  Any estimator that takes a precomputed sparse distance graph can then work
    on the forest's geometry: ``Isomap``, ``TSNE``, ``DBSCAN``, ``HDBSCAN``,
    ``SpectralClustering(affinity="precomputed_nearest_neighbors")``,
    ``KNeighborsClassifier(metric="precomputed")``, umap-learn's
    ``UMAP(metric="precomputed")``.

    The forest's distances serve the neighbour-based ones well (Isomap, UMAP,
    nearest-neighbour classifiers, spectral clustering); density-based
    clustering on them is another matter.  HDBSCAN on this graph is not
    recommended: on a 10-class image set it called 56 % of the points noise
    (ARI 0.174, against 0.285 for HDBSCAN on Euclidean distances; issue 53).
    If you use it, tune ``min_cluster_size``, keep ``min_samples`` at most
    ``n_neighbors`` and check the noise fraction.  To cluster on the forest's
    geometry, use :class:`~geoforest.ForestSpectralClustering` (the guide's
    page on forests and neighbours has the figures).

    Parameters
    ----------
    forest : geoforest forest or None, default=None
        Any forest with ``fit`` and ``kneighbors`` (``UnsupervisedForest``,
        ``RandomProjectionForest``, or a classifier, then fitted with ``y``),
        cloned at ``fit``.  ``None``: ``UnsupervisedForest()`` with the
        ``random_state`` and ``n_jobs`` given here.
    n_neighbors : int, default=15
        Neighbours per point.  As in scikit-learn, ``mode="distance"`` computes
        one more, because every training point is its own first neighbour
        (distance 0).
    mode : {"distance", "connectivity"}, default="distance"
        Forest distances, or ones.
    method : {"all", "inbag", "oob"}, default="all"
        Which trees count; ``"inbag"`` / ``"oob"`` only for the training points.
    random_state : int, RandomState instance or None, default=None
        Seeds the default forest (and a given forest whose ``random_state`` is None).
    n_jobs : int or None, default=None
        Threads of the default forest (and of a given forest whose ``n_jobs`` is None).

    Attributes
    ----------
    forest_ : fitted forest
    n_samples_fit_ : int
        Training points: the columns of every graph.
    n_features_in_ : int

    See Also
    --------
    geoforest.UnsupervisedForest.kneighbors_graph : the same graph from a fitted forest.

    Notes
    -----
    ``fit_transform(X)`` returns more than ``fit(X).transform(X)``, on
    purpose: the union of every training point's neighbours and its
    transpose, made connected by one true-distance edge between consecutive
    connected components.  Precomputed-graph consumers need that on the
    training points — HDBSCAN and umap-learn refuse a non-symmetric sparse
    distance matrix, HDBSCAN and Isomap a disconnected one — and a pipeline
    calls ``fit_transform`` while fitting.  The forest distance is symmetric,
    so the union changes no value and each row keeps at least its own
    ``n_neighbors`` (+1) nearest, sorted by distance.  ``transform`` stays row
    by row, so new points get exactly their nearest training points.  A
    distance 0 is stored as the smallest positive float64
    (``geoforest/_sparse.py``).

    References
    ----------
    .. [1] M. Madhyastha, P. Li, J. Browne, V. Strnadova-Neeley, C. E. Priebe,
       R. Burns and J. T. Vogelstein, "Geodesic Learning via Unsupervised
       Decision Forests" (URerF: forest neighbours and their geodesic precision).

    Examples
    --------
    >>> import numpy as np
    >>> import geoforest as gf
    >>> from sklearn.manifold import Isomap
    >>> from sklearn.pipeline import make_pipeline
    >>> X, _ = gf.datasets.make_helix(300, random_state=0)
    >>> pipe = make_pipeline(
    ...     gf.ForestNeighborsTransformer(n_neighbors=10, random_state=0),
    ...     Isomap(n_neighbors=10, metric="precomputed"),
    ... )
    >>> pipe.fit_transform(X).shape
    (300, 2)
    """

    _parameter_constraints: dict = {
        "forest": [None, HasMethods(["fit", "kneighbors", "proximity"])],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "mode": [StrOptions({"distance", "connectivity"})],
        "method": [StrOptions({"all", "inbag", "oob"})],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        forest=None,
        *,
        n_neighbors: int = 15,
        mode: str = "distance",
        method: str = "all",
        random_state=None,
        n_jobs: int | None = None,
    ):
        self.forest = forest
        self.n_neighbors = n_neighbors
        self.mode = mode
        self.method = method
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _make_forest(self):
        from ._unsupervised import UnsupervisedForest

        forest = UnsupervisedForest() if self.forest is None else clone(self.forest)
        return with_seed_and_threads(forest, self.random_state, self.n_jobs)

    def fit(self, X, y=None):
        """Fit the forest on ``X`` (and ``y`` when it is a classifier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            Labels, for a supervised forest only.

        Returns
        -------
        self : object
        """
        self._validate_params()
        # validated here so that a bad X is reported as this estimator's input
        X = validate_data(self, X, dtype="numeric", ensure_min_samples=2)
        forest = self._make_forest()
        if not isinstance(forest, BaseForest):
            raise TypeError(
                "forest must be a geoforest forest (UnsupervisedForest, RandomProjectionForest, "
                f"ObliqueForestClassifier, ManifoldForestClassifier), got {type(forest).__name__}"
            )
        if is_classifier(forest):
            if y is None:
                raise ValueError(f"{type(forest).__name__} is supervised: fit needs y")
            forest.fit(X, y)
        else:
            forest.fit(X)
        self.forest_ = forest
        self.n_samples_fit_ = int(forest.inbag_counts_.shape[0])
        return self

    @property
    def _n_features_out(self) -> int:
        return self.n_samples_fit_

    def _check_k(self) -> int:
        k = self.n_neighbors + (self.mode == "distance")
        if k > self.n_samples_fit_:
            raise ValueError(
                f"n_neighbors={self.n_neighbors} needs {k} training points per row "
                f"(mode={self.mode!r}), but the forest was fitted on {self.n_samples_fit_}"
            )
        return k

    def transform(self, X):
        """Sparse graph from each row of ``X`` to its nearest training points.

        Row by row, as scikit-learn's ``KNeighborsTransformer``: a training
        point as a query finds itself first (distance 0; a duplicated row,
        the lowest index of its copies), on small data too (the forest's
        :meth:`kneighbors`).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        graph : scipy.sparse.csr_matrix of shape (n_queries, ``n_samples_fit_``)
            ``n_neighbors + 1`` distances per row (``mode="distance"``) or
            ``n_neighbors`` ones; 32-bit indices when they fit.
        """
        check_is_fitted(self, "forest_")
        if self.method != "all":
            raise ValueError(
                f"method={self.method!r} is defined for the training points only: use fit_transform"
            )
        k = self._check_k()
        X = validate_data(self, X, dtype="numeric", reset=False)
        dist, ind = self.forest_.kneighbors(X, k, return_distance=True)
        n_q = ind.shape[0]
        rows = np.repeat(np.arange(n_q, dtype=np.int64), k)
        data = distance_data(dist.ravel()) if self.mode == "distance" else np.ones(ind.size)
        return csr_from_rows(rows, ind.ravel(), data, (n_q, self.n_samples_fit_))

    def fit_transform(self, X, y=None):
        """Fit on ``X`` and return the symmetric, connected graph of its points (see Notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            Labels, for a supervised forest only.

        Returns
        -------
        graph : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        """
        self.fit(X, y)
        k = self._check_k()
        dist, ind = self.forest_.kneighbors(None, k - 1, return_distance=True, method=self.method)
        n = ind.shape[0]
        dist = np.column_stack([np.zeros(n), dist])  # each point its own first neighbour
        ind = np.column_stack([np.arange(n), ind])
        return self.forest_._training_graph(dist, ind, self.mode, self.method)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []  # a graph, not a version of X
        return tags
