"""Forest spectral clustering: of the forest's neighbour graph, or rpfCluster's kernel."""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import N_JOBS, is_dask_array, with_seed_and_threads
from ..graph import (
    METRICS,
    check_metric_in,
    fit_geometry,
    takes_graph,
)
from ._graph_spectral import (
    LEVEL_SELECTION_SAMPLES,
    GeometryNeighborsMixin,
    fit_knn_spectral,
    level_evidence,
    predict_knn_spectral,
)
from ._rpf_candidates import KernelCandidatesMixin
from ._rpf_kernel import predict_by_kernel

__all__ = ["ForestSpectralClustering"]

#: ``max_selection_samples="auto"`` of rpfCluster's kernel: the points its
#: candidate scales are compared on (``docs/benchmarks.md``).
KERNEL_SELECTION_SAMPLES = 1000


class ForestSpectralClustering(
    GeometryNeighborsMixin, KernelCandidatesMixin, ClusterMixin, BaseEstimator
):
    """Spectral clustering on a forest's geometry: its neighbour graph, or rpfCluster's kernel.

    With ``affinity="knn"`` (the default) every point is joined to its
    ``n_neighbors`` nearest others under ``metric`` (by default the learned
    neighbours of an :class:`~geoforest.UnsupervisedForest`), each edge
    weighted by the overlap of the two points' neighbour lists (Jaccard),
    components joined by a minimum spanning forest in the same geometry
    (:func:`~geoforest.graph.knn_affinity`, :mod:`geoforest.graph`), and
    the graph is clustered by normalised spectral clustering (a point's copies
    left out of its list); ``K`` is, when not given, the finest level the graph
    supports, not the most separated one (:func:`~geoforest.graph.label_free_levels`).
    New points join the majority cluster of their ``n_neighbors`` nearest training points.
    This default was chosen on the selection half of the clustering suite
    (``docs/defaults.md``, "The geometry of each clusterer").

    With ``affinity="kernel"`` it is rpfCluster (Yan et al. [1]_), the
    setting of the paper's experiments: it fits a forest (a
    :class:`~geoforest.RandomProjectionForest` by default, or any geoforest
    forest), takes its proximity kernel ``S`` (sparse),
    removes entries below ``threshold`` (the paper's beta_1), maps the kept
    entries by ``exp(S / scale)`` (beta_2; zeros stay zero, see
    :func:`sharpen_kernel`) and runs normalised spectral clustering
    (:func:`~geoforest.graph.spectral_clustering`).

    When ``threshold`` or ``scale`` is ``"auto"``, the pairs of the grids
    :data:`RPF_THRESHOLDS` x :data:`RPF_SCALES` are clustered and one is chosen
    without labels by ``selection`` (:mod:`geoforest.cluster._rpf_selection`):

    * ``"auto"`` (default): ``"relgap"`` when ``n_clusters`` is None,
      ``"unfragmented"`` when it is given;
    * ``"relgap"``: beta_1 as for ``"unfragmented"``; beta_2 and ``K``
      together, by the largest relative spectral gap ``mu_(K+1) / mu_K``
      over the scales and ``K = 2 .. max_clusters`` among partitions without
      a cluster under ``max(5, 2 % of n)`` points, ``K = 1`` when no gap
      reaches 2 (:func:`~geoforest.graph.choose_by_relative_gap`, the
      library's shared label-free rule).  Connected components of the
      thresholded kernel that persist at the next lower grid threshold are
      clusters in any case; the gaps judge finer splits.  With ``n_clusters``
      given it is ``"unfragmented"``;
    * ``"consensus"``: the candidate partition that agrees best (mean
      adjusted Rand index) with all the others (ties: the largest beta_2,
      then the smallest beta_1; :func:`select_best`);
    * ``"eigengap"``: the candidate with the largest gap
      ``lambda_K - lambda_{K+1}`` of its normalised affinity;
    * ``"unfragmented"``: beta_1 is the largest grid threshold that leaves no
      connected component under ``max(5, 2 % of n)`` points
      (:func:`unfragmented_threshold`, on the full kernel), and beta_2 the
      consensus candidate over :data:`RPF_SCALES` at that beta_1 (10
      candidates instead of 50).
    * ``"stability"``: beta_1 as for ``"unfragmented"``; beta_2 is the scale
      whose partition changes least when the forest is redrawn: the
      candidates at each scale are also computed from ``stability_forests - 1``
      further forests (other seeds, same data or subset), and the scale with
      the largest mean adjusted Rand index between the forests' partitions
      wins (ties as in :func:`select_best`), among the candidates without a
      cluster under ``max(5, 2 % of n)`` points when there are any (a few
      outliers split off are stable for a trivial reason).  The labels are
      the first forest's.  Costs ``stability_forests - 1`` more forests and kernels.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it (``affinity="knn"``: the
        finest supported level; ``"kernel"`` with the default
        ``selection``: by the relative gap, jointly with beta_2; with the
        older rules: by the largest eigengap of each candidate affinity).
    affinity : {"knn", "kernel"}, default="knn"
        ``"knn"``: the neighbour graph of ``metric``.  ``"kernel"``:
        rpfCluster, the thresholded and sharpened proximity kernel of
        ``forest``; only ``metric="forest"``; ``threshold``, ``scale``,
        ``selection``, ``stability_forests`` and ``kernel_neighbors`` apply
        to it alone.
    metric : {"forest", "euclidean", "precomputed"}, default="forest"
        The geometry of the neighbour graph, as for every clusterer of
        geoforest (defined once in :mod:`geoforest.graph`).
    n_neighbors : int, default=15
        Neighbours per point of the graph (``affinity="knn"``), and voters of
        :meth:`predict`.
    forest : geoforest forest, ForestNeighborsTransformer or None, default=None
        The forest of ``metric="forest"``; an unfitted one is cloned and
        fitted on ``X``, a fitted one used as is (``X`` must be its training
        data; :mod:`geoforest.graph`).  ``None``: ``UnsupervisedForest()``
        for ``affinity="knn"`` (on more than ``max_selection_samples`` points,
        where the whole graph is only cut, its redraws decay:
        ``UnsupervisedForest(decay_redraws=True)``; the subset K is chosen on
        keeps ``UnsupervisedForest()``; ``docs/defaults.md``, "The forest that
        cuts a large graph"), ``RandomProjectionForest(n_estimators=200)``
        (the paper's) for ``"kernel"``.  Its ``random_state``/``n_jobs`` are
        set from this estimator's when they are ``None``.
    threshold : float in [0, 1) or "auto", default="auto"
        beta_1.
    scale : float > 0 or "auto", default="auto"
        beta_2.
    selection : {"auto", "relgap", "unfragmented", "stability", "consensus", "eigengap"}, \
            default="auto"
        How ``"auto"`` picks a candidate (see above and Notes).
    stability_forests : int, default=4
        Forests compared by ``selection="stability"`` (the fitted one
        included; 4 is the only value compared, ``docs/results/rpf-cluster.md``).
    max_clusters : int, default=10
        Largest K the eigengap may choose when ``n_clusters`` is None.
    n_init : int, default=10
        k-means restarts.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        Eigensolver of the spectral step.
    eigen_tol : float, default=1e-6
        Tolerance of the iterative eigensolvers (relative accuracy of the
        eigenvalues; ``0`` is machine precision).  Not ``0``: on a candidate
        whose graph has a tiny spectral gap a machine-precision solve costs
        many times more for the same partition (``docs/benchmarks.md``).
    kernel_neighbors : int or None, default=None
        ``None`` clusters the full forest kernel.  An int keeps only each
        point's ``kernel_neighbors`` most similar points (see
        :func:`truncated_kernel`; capped at ``n_samples - 1`` with a
        ``UserWarning``: that keeps every co-leaf pair, the full kernel), so memory grows
        with ``n * kernel_neighbors`` instead of ``n * n_estimators * leaf
        size``: the option for hundreds of thousands of points.
    max_selection_samples : int, "auto" or None, default="auto"
        On more points than this, a choice is made on a random subset of this
        many, in the subset's own geometry (a forest grown on the subset
        alone, same settings), and only what was chosen is applied to all
        the points.  The subset gets its own forest because the full graph
        or kernel restricted to it keeps about ``m / n`` of each point's
        edges.  With ``affinity="knn"`` and ``n_clusters=None`` the choice is
        K: the levels, their Gaussian references and ``levels_`` are the
        subset's (``levels_.rows``), so the label-free fit costs a K-given
        fit plus a label-free fit of this many points, whatever ``n`` is
        (``docs/defaults.md``, "Label-free K on a subset"; a precomputed
        graph always uses every point).  With ``affinity="kernel"`` and
        ``threshold`` or ``scale`` ``"auto"`` it is the candidate pair
        (``docs/benchmarks.md``).  ``"auto"``: 20,000 for ``"knn"``, 1,000
        for ``"kernel"``.  ``None`` always uses every point.
    random_state : int, RandomState instance or None, default=None
        Seeds the forest (when it has none) and the spectral step.
    n_jobs : int or None, default=None
        Threads of the forest (when it has none).
    verbose : int, default=0
        Progress bars (tqdm) when positive: ``"knn"``, over the fit's stages
        and the forest's own (a forest grown here with ``verbose=0`` gets
        this one); ``"kernel"``, over the candidate scales (beta_1, beta_2).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each point.
    n_clusters_ : int
        Number of clusters found.
    geometry_ : Geometry
        The fitted geometry of ``affinity="knn"`` (:mod:`geoforest.graph`).
    n_bridges_ : int
        Edges ``affinity="knn"`` added to join the graph's components.
    levels_ : Levels or None
        ``affinity="knn"`` with K estimated: the evidence and partition of
        every level (:class:`~geoforest.graph.Levels`), of the points
        ``levels_.rows`` (a subset above ``max_selection_samples``); else ``None``.
    reference_excess_ : ndarray of shape (max_clusters,) or None
        ``levels_``'s excess of each K over the Gaussian references (entry
        ``K - 1``); ``None`` without references.
    kernel_ : scipy.sparse.csr_array
        The forest's proximity kernel ``S`` (truncated when
        ``kernel_neighbors`` is set); ``affinity="kernel"`` only, as are
        ``threshold_``, ``scale_``, ``candidates_``, ``selection_indices_``
        and ``selection_kernel_``.
    affinity_matrix_ : scipy.sparse matrix
        The affinity that was clustered: the weighted neighbour graph, or
        the thresholded, sharpened kernel.
    threshold_, scale_ : float
        The beta_1 and beta_2 used.
    candidates_ : list of dict
        Every candidate's ``threshold``, ``scale``, ``n_clusters``, ``score``
        (what ``selection`` maximised) and ``labels`` (of the points in
        ``selection_indices_`` when a subset was used).
    selection_indices_ : ndarray or None
        The subset the candidates were compared on (``None``: all points).
    selection_kernel_ : scipy.sparse.csr_array
        The kernel the candidates were compared on: ``kernel_``, or the
        subset forest's kernel.
    forest_ : fitted forest or None
        ``None`` for the ``"euclidean"`` and ``"precomputed"`` geometries.
    eigenvalues_ : ndarray
        Leading eigenvalues of the chosen normalised affinity.
    n_clusters_scores_ : ndarray of shape (max_clusters,)
        The evidence behind ``n_clusters_``: with ``affinity="knn"``
        ``levels_``'s relative gaps; with ``"relgap"`` the best
        relative gap of each ``K`` over the scales (the entry of the base
        ``K`` holds the bar, 2; :func:`~geoforest.graph.choose_by_relative_gap`),
        otherwise the eigengaps of the chosen affinity
        (:func:`~geoforest.graph.eigengap_scores`); NaN where not computed.
        A :class:`~geoforest.graph.LabelFreeChoiceWarning` says when
        ``K = 1`` was chosen or the evidence is weak or close
        (``docs/choosing-k.md``).

    Notes
    -----
    ``"relgap"`` chooses K because it stops the eigengap rule's over-splitting
    of small tabular sets and noisy data, at the price of taking the dominant
    level of a hierarchy (fewer clusters than classes where one class sits
    apart).  It was chosen on the selection half of the clustering suite and
    checked on its report half (``docs/results/clustering-suite.md``,
    ``docs/choosing-k.md``).

    ``"unfragmented"`` is the rule with K given because consensus over the
    whole grid lets a large beta_1 win when the thresholded graph has
    shattered and most candidates agree on the broken partition; taking
    beta_1 from the kernel's connectivity first avoids that, and clusters 10
    candidates instead of 50.  ``"stability"`` is not the default: on some
    data sets it picks sharp scales that are stable without being better
    partitions (``docs/results/rpf-cluster.md``).

    :meth:`cluster_candidate` clusters one (beta_1, beta_2) pair as ``fit`` does.

    References
    ----------
    .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity kernel and clustering
           via random projection forests", arXiv:1908.10506 (2019).
    .. [2] A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering:
           Analysis and an algorithm", Advances in Neural Information
           Processing Systems 14 (NIPS 2001).
    .. [3] J. Shi and J. Malik, "Normalized cuts and image segmentation",
           IEEE Transactions on Pattern Analysis and Machine Intelligence
           22(8), 2000.

    Examples
    --------
    >>> import geoforest as gf
    >>> from sklearn.datasets import load_iris
    >>> X = load_iris().data
    >>> model = gf.ForestSpectralClustering(n_clusters=3, random_state=0).fit(X)
    >>> model.labels_.shape, model.n_clusters_, model.forest_.distance_
    ((150,), 3, 'relevance')
    >>> rpf = gf.ForestSpectralClustering(n_clusters=3, affinity="kernel", threshold=0.0,
    ...                                   scale=0.1, random_state=0).fit(X)
    >>> type(rpf.forest_).__name__
    'RandomProjectionForest'
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "affinity": [StrOptions({"knn", "kernel"})],
        "metric": [StrOptions(set(METRICS))],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "forest": [None, HasMethods(["fit"])],
        "threshold": [Interval(numbers.Real, 0.0, 1.0, closed="left"), StrOptions({"auto"})],
        "scale": [Interval(numbers.Real, 0.0, None, closed="neither"), StrOptions({"auto"})],
        "selection": [
            StrOptions({"auto", "relgap", "consensus", "eigengap", "unfragmented", "stability"})
        ],
        "stability_forests": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0.0, None, closed="left")],
        "kernel_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_selection_samples": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 10, None, closed="left"),
            None,
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        n_clusters: int | None = None,
        *,
        affinity: str = "knn",
        metric: str = "forest",
        n_neighbors: int = 15,
        forest=None,
        threshold="auto",
        scale="auto",
        selection: str = "auto",
        stability_forests: int = 4,
        max_clusters: int = 10,
        n_init: int = 10,
        eigen_solver: str = "auto",
        eigen_tol: float = 1e-6,
        kernel_neighbors: int | None = None,
        max_selection_samples: int | str | None = "auto",
        random_state=None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.metric = metric
        self.n_neighbors = n_neighbors
        self.forest = forest
        self.threshold = threshold
        self.scale = scale
        self.selection = selection
        self.stability_forests = stability_forests
        self.max_clusters = max_clusters
        self.n_init = n_init
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.kernel_neighbors = kernel_neighbors
        self.max_selection_samples = max_selection_samples
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @property
    def _selection(self) -> str:
        """The rule ``selection`` stands for with these parameters."""
        if self.selection == "auto":
            return "relgap" if self.n_clusters is None else "unfragmented"
        if self.selection == "relgap" and self.n_clusters is not None:
            return "unfragmented"  # the rule chooses K; with K given, beta_2 as before
        return self.selection

    @property
    def _selection_samples(self) -> int | None:
        """The points a choice is made on, ``max_selection_samples`` resolved."""
        if self.max_selection_samples != "auto":
            return self.max_selection_samples
        return KERNEL_SELECTION_SAMPLES if self.affinity == "kernel" else LEVEL_SELECTION_SAMPLES

    def _kernel_forest(self):
        """The forest of ``affinity="kernel"`` as given: the user's, or the paper's default."""
        from ..forest import RandomProjectionForest

        return RandomProjectionForest(n_estimators=200) if self.forest is None else self.forest

    def _kernel_geometry(self, X):
        """The forest geometry of ``affinity="kernel"`` (:func:`~geoforest.graph.fit_geometry`).

        A fitted forest is used as it is when ``X`` is its training data and
        refused in one line otherwise (or when it is no geoforest forest); an
        unfitted one is cloned and grown on ``X``.
        """
        return fit_geometry(
            X,
            self.metric,
            forest=self._kernel_forest(),
            n_neighbors=self.n_neighbors,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            owner=self,
        )

    def _make_forest(self):
        """A fresh, unfitted forest like ``forest_`` (the selection subset's, stability's)."""
        return with_seed_and_threads(clone(self.forest_), self.random_state, self.n_jobs)

    def _spectral_seed(self) -> int:
        """The spectral steps' seed (an int: every candidate gets the same)."""
        rs = self.random_state
        if isinstance(rs, numbers.Integral):
            return int(rs)
        return int(check_random_state(rs).randint(2**31 - 1))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        precomputed = self.affinity == "knn" and takes_graph(self.metric)
        tags.input_tags.pairwise = precomputed
        tags.input_tags.sparse = precomputed
        return tags

    def _fit_knn(self, X):
        fitted = fit_knn_spectral(
            X,
            metric=self.metric,
            forest=self.forest,
            n_neighbors=self.n_neighbors,
            n_clusters=self.n_clusters,
            max_clusters=self.max_clusters,
            n_init=self.n_init,
            eigen_solver=self.eigen_solver,
            eigen_tol=self.eigen_tol,
            random_state=self.random_state,
            spectral_seed=self._spectral_seed(),
            max_selection_samples=self._selection_samples,
            n_jobs=self.n_jobs,
            owner=self,
            verbose=self.verbose,
        )
        self.geometry_ = fitted.geometry
        self.forest_ = getattr(fitted.geometry, "forest_", None)
        self.labels_ = fitted.labels
        self.n_clusters_ = fitted.n_clusters
        self.eigenvalues_ = fitted.eigenvalues
        self.affinity_matrix_ = fitted.affinity
        self.n_bridges_ = fitted.n_bridges
        self.levels_ = fitted.levels
        self.n_clusters_scores_, self.reference_excess_ = level_evidence(
            fitted.levels, self.max_clusters
        )
        return self

    def fit(self, X, y=None):
        """Fit the geometry on ``X`` and cluster its neighbour graph (or sharpened kernel).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            Training data; with ``metric="precomputed"`` a sparse distance graph
            or dense distance matrix between them.  With ``affinity="knn"`` and
            ``metric="forest"`` also a ``dask.array.Array``: the forest grows
            and searches its neighbours on the workers, where the rows stay;
            the ``n x n_neighbors`` lists come back, and the graph, its
            eigenvectors and k-means run in this process.  The labels equal
            those of the same fit in memory (``docs/scale.md``, "Clustering a
            Dask array").
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        if self.affinity == "kernel":
            check_metric_in(
                self.metric,
                ("forest",),
                type(self).__name__,
                "affinity='kernel' (the forest's proximity kernel of feature data)",
                "for feature data pass metric='forest' (or affinity='knn' with "
                "metric='euclidean' or 'forest'), for a precomputed graph affinity='knn'",
            )
        # Validated here, so that a bad X is reported as this estimator's input
        # (not the inner forest's); "numeric" keeps the dtype the forest picks from.
        X = self._check_X(X, reset=True)
        if self.affinity == "knn":
            return self._fit_knn(X)
        if is_dask_array(X):
            raise TypeError(
                "ForestSpectralClustering takes a dask.array.Array with affinity='knn' "
                "(the neighbour graph of a forest grown on the workers); the kernel of "
                "affinity='kernel' holds every pair of points"
            )
        return self._fit_kernel(X)

    def fit_predict(self, X, y=None):
        """Fit and return ``labels_``; for a Dask array, as a Dask array chunked like
        its rows (the labels themselves are computed here, ``n`` integers)."""
        labels = self.fit(X, y).labels_
        if not is_dask_array(X):
            return labels
        import dask.array as da

        return da.from_array(labels, chunks=(X.chunks[0],))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Cluster of new points by a vote of the training points, through the forest kernel.

        Each query is dropped down the fitted forest; its proximity to every
        training point (the fraction of trees in which they share a leaf,
        ``forest_.proximity(X)``) weighs a vote over ``labels_``: the query
        joins the cluster of largest mean proximity (:func:`kernel_vote`, the
        rule the fit uses for points the threshold cuts off,
        :func:`attach_by_kernel`).  The raw kernel is used, not the
        thresholded, sharpened affinity: that affinity's spectral embedding
        has no row for a new point.  With ``kernel_neighbors`` set, only the
        query's ``kernel_neighbors`` most similar training points vote
        (``forest_.kneighbors(X)``), as the truncated kernel keeps.

        A query that shares no leaf with any training point (possible only
        with another ``forest``) gets the largest cluster
        (:func:`predict_by_kernel`).

        ``predict(X_train)`` is not exactly ``labels_``: the labels come from
        spectral clustering of the thresholded, sharpened affinity, the vote
        from the raw kernel's co-leaf counts, and they can differ for points
        between clusters (agreement on iris, wine and blobs:
        ``tests/test_out_of_sample.py``).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New points, with the training data's number of features.

        Returns
        -------
        labels : ndarray of shape (n_queries,)
            Labels of ``labels_``.

        Raises
        ------
        ValueError
            ``X`` has another number of features than the training data, or
            values the forest does not accept.

        References
        ----------
        .. [1] D. Yan, S. Gu, Y. Xu and Z. Qin, "Similarity kernel and
               clustering via random projection forests", arXiv:1908.10506
               (2019).
        """
        check_is_fitted(self, "labels_")
        X = self._check_X(X, reset=False)
        if self.affinity == "knn":
            return predict_knn_spectral(self.geometry_, self.labels_, X, self.n_neighbors)
        return predict_by_kernel(self.forest_, self.labels_, X, self.kernel_neighbors)
