"""LLPD spectral clustering: denoise, kernel through the dendrogram, eigengap over scales."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import N_JOBS
from ..graph import (
    METRICS,
    LabelFreeChoiceWarning,
    check_forest_metric,
    explain_choice,
    min_cluster_size,
)
from ._checks import _query_input, _takes_features, _training_data
from ._clustering_steps import (
    cluster_at_scale,
    denoise_points,
    scan_scales,
    sigma_grid,
)
from ._llpd import LLPD
from ._tree import Denoising

__all__ = ["LLPDSpectralClustering", "sigma_grid"]


class LLPDSpectralClustering(ClusterMixin, BaseEstimator):
    """Spectral clustering with the longest-leg path distance, noise removal and K estimate.

    The method of Little, Maggioni & Murphy ("Path-based spectral clustering:
    guarantees, robustness to outliers, and fast algorithms"), computed exactly:

    1. LLPD of ``X`` (:class:`~geoforest.LLPD`: exact EMST and dendrogram,
       or the minimum spanning tree of ``metric``'s graph);
    2. denoising: points whose LLPD to their ``k_nse``-th neighbour exceeds
       ``noise_threshold`` get the label ``-1``;
    3. LLPD again on the kept points only (paths through removed points no
       longer count; over a graph, the kept points' graph in the same fitted
       geometry, never refitted);
    4. for every scale ``sigma`` of the grid (:func:`sigma_grid`, from the
       kept points' merge heights), the leading ``max_clusters + 1``
       eigenvalues of ``M = D^{-1/2} W D^{-1/2}``, ``W = exp(-rho^2 / sigma^2)``
       applied through the dendrogram (never ``n x n``);
    5. the pair ``(sigma, K)`` with the largest eigengap
       ``lambda_K - lambda_(K+1)`` over the grid and ``K = 1 .. max_clusters``
       (only ``K = n_clusters`` when given; ties to the larger ``sigma``, then
       the smaller ``K``);
    6. NJW spectral clustering with that ``sigma`` and ``K``
       (:func:`geoforest.graph.spectral_clustering`).

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it (step 5).
    metric : {"euclidean", "forest", "precomputed"}, default="euclidean"
        The geometry of the LLPD, as for every clusterer of geoforest
        (defined once in :mod:`geoforest.graph`; :class:`~geoforest.LLPD`).
    forest : geoforest forest, ForestNeighborsTransformer or None, default=None
        The forest of ``metric="forest"`` (:mod:`geoforest.graph`).
    n_neighbors : int, default=15
        Neighbours per point of the ``metric="forest"`` graph (of all the
        points, then of the kept ones), in ``[1, n_samples - 1]``.
    max_clusters : int, default=10
        Largest number of clusters considered when estimating.
    k_nse : int, default=10
        Neighbour rank of the denoising rule, in ``[1, n_samples - 1]`` as
        for :meth:`LLPD.denoise <geoforest.LLPD.denoise>` (a larger value
        raises ``ValueError``; on 10 points or fewer lower it, or pass
        ``noise_threshold=None``, which does not use it).
    noise_threshold : "auto", float or None, default="auto"
        Denoising threshold ``theta``: ``"auto"`` from the sorted
        ``k_nse``-th neighbour LLPDs (:func:`geoforest.llpd.auto_noise_threshold`:
        a jump of 2x, else two well separated log-populations with at most a
        third of the points above, else no noise), a float, or ``None`` to
        keep every point.  (``threshold`` in :class:`~geoforest.ForestSpectralClustering`
        is another quantity, the kernel truncation of rpfCluster.)
    threshold : "auto", float, None or "deprecated", default="deprecated"
        The former name of ``noise_threshold``: still read until the next
        release, with a ``FutureWarning``.
    sigma : float, array-like of float or None, default=None
        Kernel scale(s) to consider; ``None`` uses :func:`sigma_grid`.
    n_init : int, default=10
        k-means restarts.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        See :func:`geoforest.graph.spectral_eigs`; ``"auto"`` is dense up to
        200 kept points and ARPACK (through the ``O(n)`` operator) above.
    eigen_tol : float, default=1e-7
        Tolerance of the iterative eigensolvers (the scan and the final
        embedding); ``0`` means machine precision.
    mst_method : {"auto", "kdtree", "boruvka", "brute"}, default="auto"
        EMST engine (:func:`geoforest.graph.euclidean_mst`).
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolvers, k-means and the forest (where its own is None).
    n_jobs : int or None, default=None
        Threads of the forest of ``metric="forest"`` (where its own is None).
    verbose : int, default=0
        Show a progress bar over the scales sigma (tqdm) when positive.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every point, numbered by first appearance; ``-1`` for the
        points removed as noise.
    n_clusters_ : int
        Number of clusters used (given or estimated).
    eigenvalues_ : ndarray
        Leading eigenvalues of ``M`` at ``sigma_``, descending (``1 -`` the
        normalised Laplacian's smallest).
    sigma_ : float
        The scale chosen.
    noise_threshold_ : float
        The denoising threshold used (``inf`` when ``noise_threshold=None``).
        ``threshold_``, its former name, warns until the next release.
    kept_ : ndarray of shape (n_samples,), bool
        Points kept by the denoising.
    sigmas_ : ndarray
        The scales scanned.
    n_clusters_scores_ : ndarray of shape (max_clusters,)
        The evidence behind ``n_clusters_``: entry ``K - 1`` is the largest
        eigengap after ``K`` over the scales (NaN where not computed); a
        :class:`~geoforest.graph.LabelFreeChoiceWarning` says when ``K = 1``
        was chosen or the runner-up scored within 10 % of the winner.
    eigengaps_ : ndarray of shape (len(``sigmas_``), max_clusters)
        ``eigengaps_[s, K - 1] = lambda_K - lambda_(K+1)`` at ``sigmas_[s]``
        (``n_clusters`` columns when ``n_clusters`` is given).
    llpd_ : LLPD
        LLPD fitted on the kept points.
    geometry_ : Geometry
        The fitted geometry of all the points (:mod:`geoforest.graph`).
    noise_llpd_ : LLPD or None
        LLPD fitted on all the points, whose ``k_nse``-th neighbour LLPDs the
        denoising thresholds (kept for :meth:`predict`); ``None`` when
        ``noise_threshold=None``.
    n_features_in_ : int
        Not set with ``metric="precomputed"``.

    References
    ----------
    .. [1] A. Little, M. Maggioni and J. M. Murphy, *Path-Based Spectral
           Clustering: Guarantees, Robustness to Outliers, and Fast
           Algorithms*, arXiv:1712.06206, 2017; Journal of Machine Learning
           Research 21, 2020.
    .. [2] J. M. Murphy, *Data Dependent Distances for Unsupervised
           Learning* (slides).

    Examples
    --------
    >>> from geoforest.datasets import make_ldln
    >>> X, y = make_ldln(1000, n_clusters=3, random_state=0)
    >>> model = LLPDSpectralClustering(random_state=0).fit(X)
    >>> model.n_clusters_
    3
    >>> from geoforest.metrics import clustering_accuracy
    >>> core = (y >= 0) & model.kept_
    >>> clustering_accuracy(y[core], model.labels_[core])
    1.0
    >>> bool(np.array_equal(model.predict(X), model.labels_))  # new points: predict(X_new)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(set(METRICS))],
        "forest": "no_validation",  # fit_geometry checks it
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "k_nse": [Interval(numbers.Integral, 1, None, closed="left")],
        "noise_threshold": [
            StrOptions({"auto"}),
            Interval(numbers.Real, 0, None, closed="left"),
            None,
        ],
        "threshold": [
            StrOptions({"auto", "deprecated"}),
            Interval(numbers.Real, 0, None, closed="left"),
            None,
        ],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "mst_method": [StrOptions({"auto", "kdtree", "boruvka", "brute"})],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=None,
        *,
        metric="euclidean",
        forest=None,
        n_neighbors=15,
        max_clusters=10,
        k_nse=10,
        noise_threshold="auto",
        threshold="deprecated",
        sigma=None,
        n_init=10,
        eigen_solver="auto",
        eigen_tol=1e-7,
        mst_method="auto",
        random_state=None,
        n_jobs=None,
        verbose: int = 0,
    ):
        self.n_clusters = n_clusters
        self.metric = metric
        self.forest = forest
        self.n_neighbors = n_neighbors
        self.max_clusters = max_clusters
        self.k_nse = k_nse
        self.noise_threshold = noise_threshold
        self.threshold = threshold
        self.sigma = sigma
        self.n_init = n_init
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.mst_method = mst_method
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        """Denoise, choose the scale and the number of clusters, cluster.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            With ``metric="precomputed"``, a square distance graph
            (:mod:`geoforest.graph`).
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        check_forest_metric(self)
        X = _training_data(self, X, copy=False)  # the LLPD keeps its own copy
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        denoised, noise_llpd, full = self._denoise(X)
        kept = denoised.kept
        n_kept = int(kept.sum())
        if n_kept < 2:
            raise ValueError(
                f"denoising kept {n_kept} point(s) of {n} (threshold {denoised.threshold:.4g}); "
                "raise noise_threshold or lower k_nse"
            )
        # The kept points' LLPD, in the same fitted geometry (their exact EMST,
        # or their graph): paths through removed points no longer count.
        llpd = full if kept.all() else self._llpd()._fit_subset(full, np.flatnonzero(kept))
        choice = scan_scales(
            llpd.dendrogram_,
            sigma=self.sigma,
            n_clusters=self.n_clusters,
            max_clusters=self.max_clusters,
            eigen_solver=self.eigen_solver,
            eigen_tol=self.eigen_tol,
            random_state=rng,
            verbose=self.verbose,
        )
        k = choice.n_clusters
        if self.n_clusters is None:
            explain_choice(type(self).__name__, k, choice.n_clusters_scores, criterion="eigengap")
        labels = cluster_at_scale(
            llpd.dendrogram_,
            kept,
            sigma=choice.sigma,
            n_clusters=k,
            n_init=self.n_init,
            eigen_solver=self.eigen_solver,
            eigen_tol=self.eigen_tol,
            seed=choice.seed,
        )
        if self.n_clusters is None and k > 1:
            _warn_tiny_clusters(type(self).__name__, k, labels[kept])
        self.labels_ = labels
        self.n_clusters_ = k
        self.eigenvalues_ = choice.eigenvalues
        self.sigma_ = choice.sigma
        self.sigmas_ = choice.sigmas
        self.eigengaps_ = choice.eigengaps
        self.n_clusters_scores_ = choice.n_clusters_scores
        self.noise_threshold_ = denoised.threshold
        self.kept_ = kept
        self.llpd_ = llpd
        self.noise_llpd_ = noise_llpd
        self.geometry_ = full.geometry_
        self._llpd_all = full  # kneighbors of the training points
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Cluster of new points: noise test, then the LLPD-nearest kept training point.

        The rule of the fit, applied to a point the fit did not see (the
        training points are not refitted):

        1. noise: ``-1`` when the LLPD from the point to its ``k_nse``-th
           nearest training point (in :attr:`noise_llpd_`, the LLPD of all
           the training points, as the denoising used) exceeds
           :attr:`noise_threshold_`.  A query at Euclidean distance 0 from a
           training point is taken to be that point: that one copy is not
           counted as a neighbour, as a point is not its own neighbour in
           the fit (so a training point gets exactly its fitted statistic);
        2. otherwise the label of the kept training point at the smallest LLPD
           from it, in :attr:`llpd_` (the LLPD of the kept points, on which
           the spectral step ran: paths through removed points do not count).
           Many points share that smallest LLPD (all those joined to the
           nearest one below that height); ties go to the Euclidean nearest,
           then the lowest index, as in :meth:`LLPD.kneighbors
           <geoforest.LLPD.kneighbors>`.  The smallest LLPD is the first leg to
           the Euclidean nearest kept point, which is therefore the one
           chosen.  Over a graph (``metric``), likewise the kept point nearest
           in the geometry (its first neighbour among the kept points); a
           ``"precomputed"`` row with no entry for a kept point is at LLPD
           ``inf`` from all of them and gets ``-1``.

        The out-of-sample LLPD is exact (:meth:`LLPD.kneighbors
        <geoforest.LLPD.kneighbors>` with ``X``).  ``predict(X)`` on the
        training data returns ``labels_`` exactly: a kept point is at LLPD 0
        from itself (its duplicates share its label), and a point removed as
        noise has its fitted statistic, above the threshold.  ``fit_predict``
        does not call this method.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New points, finite, with the training data's number of features
            (``metric="precomputed"``: their rows of distances to the
            training points, shape (n_queries, n_samples)).

        Returns
        -------
        labels : ndarray of shape (n_queries,)
            Cluster labels (those of ``labels_``), ``-1`` for noise.

        Raises
        ------
        ValueError
            ``X`` is not finite or has another number of features than the
            training data.

        References
        ----------
        .. [1] A. Little, M. Maggioni and J. M. Murphy, *Path-Based Spectral
               Clustering: Guarantees, Robustness to Outliers, and Fast
               Algorithms*, arXiv:1712.06206, 2017; Journal of Machine
               Learning Research 21, 2020.
        """
        check_is_fitted(self, "labels_")
        X = _query_input(self, self.geometry_, X)
        labels = np.full(X.shape[0], -1, dtype=np.intp)
        candidates = np.arange(X.shape[0])
        if self.noise_llpd_ is not None and np.isfinite(self.noise_threshold_):
            k = int(self.k_nse)
            # k + 1 neighbours: a copy of a training point (LLPD 0 to the first) skips it.
            dist, _ = self.noise_llpd_._query_new(X, k + 1, euclidean=False)
            statistic = np.where(dist[:, 0] == 0, dist[:, k], dist[:, k - 1])
            candidates = np.flatnonzero(statistic <= self.noise_threshold_)
        if not candidates.size:
            return labels
        kept = np.flatnonzero(self.kept_)
        if self.llpd_._X is not None:  # coordinates: ties to the Euclidean nearest
            _, nearest = self.llpd_._query_new(X[candidates], 1, euclidean=True)
            labels[candidates] = self.labels_[kept[nearest[:, 0]]]
        else:  # the LLPD-nearest kept point is the nearest in the geometry
            found, nearest = _nearest_kept(self.llpd_.geometry_, X[candidates], kept)
            labels[candidates[found]] = self.labels_[kept[nearest[found]]]
        return labels

    def kneighbors(self, X=None, n_neighbors=None, return_distance: bool = True):
        """The ``n_neighbors`` nearest training points in LLPD (all of them, noise too).

        :meth:`LLPD.kneighbors <geoforest.LLPD.kneighbors>` of the LLPD of
        every training point, the one the denoising reads: ``X=None`` gives
        the training points' neighbours, each excluding itself.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None, default=None
            New points (``metric="precomputed"``: their rows of distances
            to the training points); ``None``: the training points.
        n_neighbors : int or None, default=None
            ``None``: the estimator's ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only with ``return_distance``.
        indices : ndarray of shape (n_queries, n_neighbors)
        """
        check_is_fitted(self, "labels_")
        if X is not None:  # checked here, so that a bad X is reported as this estimator's
            X = _query_input(self, self.geometry_, X)
        return self._llpd_all.kneighbors(X, n_neighbors, return_distance)

    def _noise_threshold(self):
        """``noise_threshold``, or the deprecated ``threshold`` when it was given."""
        if self.threshold == "deprecated":
            return self.noise_threshold
        warnings.warn(
            "LLPDSpectralClustering(threshold=...) is deprecated and will be removed in the "
            "next release: pass noise_threshold=... (ForestSpectralClustering's threshold "
            "is another quantity)",
            FutureWarning,
            stacklevel=4,
        )
        return self.threshold

    @property
    def threshold_(self) -> float:
        """The former name of :attr:`noise_threshold_` (warns until the next release)."""
        warnings.warn(
            "LLPDSpectralClustering.threshold_ is deprecated and will be removed in the next "
            "release: read noise_threshold_",
            FutureWarning,
            stacklevel=2,
        )
        return self.noise_threshold_

    def _llpd(self) -> LLPD:
        return LLPD(
            metric=self.metric,
            forest=self.forest,
            n_neighbors=self.n_neighbors,
            mst_method=self.mst_method,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        )

    def _denoise(self, X) -> tuple[Denoising, LLPD | None, LLPD]:
        """``(denoising, noise LLPD or None, LLPD of all the points)``."""
        n = X.shape[0]
        theta = self._noise_threshold()
        if theta is not None and self.k_nse > n - 1:  # before any LLPD is built
            raise ValueError(
                f"k_nse must be in [1, n_samples - 1] = [1, {n - 1}], got {self.k_nse}; "
                "lower k_nse, or pass noise_threshold=None to keep every point"
            )
        full = self._llpd().fit(X)
        denoised = denoise_points(full.dendrogram_, k_nse=self.k_nse, noise_threshold=theta)
        return denoised, (None if theta is None else full), full


def _warn_tiny_clusters(estimator: str, k: int, labels: np.ndarray) -> None:
    """Warn when a label-free K >= 2 leaves a cluster below the smallest a choice accepts.

    A scan over scales down to the smallest merge heights can find a large
    eigengap at a ``K`` near the number of points: nearly every point its own
    cluster, as on a dozen points of one Gaussian.  That is no evidence of
    cluster structure.  A Gaussian reference (:func:`~geoforest.graph.spectral_excess`)
    does not settle it here: LLPD's scale is chosen from the data's own merge
    heights, so a reference at that scale finds the same spurious excess.
    """
    sizes = np.bincount(labels[labels >= 0], minlength=k)
    floor = min_cluster_size(labels.size)
    if sizes.min() < floor:
        warnings.warn(
            f"{estimator} chose K = {k} without labels, but its smallest cluster holds "
            f"{int(sizes.min())} of {labels.size} points (fewer than {floor}): weak "
            "evidence, the data may have no cluster structure. Pass n_clusters if you "
            "expect clusters.",
            LabelFreeChoiceWarning,
            stacklevel=3,
        )


def _nearest_kept(geometry, X, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query's nearest kept point in the geometry of the kept points' LLPD.

    Returns ``(found, position)``.  A graph's row reaches the kept points
    by its entries in their columns (ties: the lower index); a sparse row
    with none is at LLPD ``inf`` from every kept point.
    """
    if _takes_features(geometry):
        _, ind = geometry.query(X, 1)
        return np.ones(ind.shape[0], dtype=bool), ind[:, 0]
    _, ind, counts = geometry.query_edges(X[:, kept])
    return counts > 0, ind[:, 0]
