"""LUND: learning by unsupervised nonlinear diffusion (Maggioni & Murphy).

Modes are dense points far, in diffusion distance, from any denser point;
every other point takes the label of its diffusion-nearest denser point.
Nothing is ``n x n``: nearest denser points are searched among the
``D_t``-neighbours first (a K-d tree on the diffusion map), then exactly.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import N_JOBS
from ..graph import METRICS
from ._diffusion_map import DiffusionMap
from ._kernel_graph import takes_square_input
from ._lund_active import active_queries, random_queries
from ._lund_fit import final_labels, fit_lund, lund_at_time, predict_rows
from ._lund_graph import (
    DiffusionNeighborsMixin,
    explain_lund_k,
    level_scores,
    lund_input,
    lund_levels,
    reference_graphs,
)
from ._lund_labels import LundClustering, check_partial_labels, semi_supervised_labels

__all__ = ["LUND"]


class LUND(DiffusionNeighborsMixin, ClusterMixin, BaseEstimator):
    """Learning by unsupervised nonlinear diffusion: clusters from density and diffusion modes.

    The algorithm of Maggioni & Murphy ("Learning by unsupervised nonlinear
    diffusion", JMLR 2019), computed without ``n x n`` matrices:

    1. the diffusion map of the data (:class:`~geoforest.DiffusionMap`: kNN
       Gaussian graph, connected, leading eigenpairs, ``Psi_t``);
    2. kernel density ``p(x_i) ∝ sum_{x_j in NN_k(x_i)} exp(-|x_i - x_j|^2 /
       sigma^2)``, normalised to sum 1;
    3. ``rho_t(x)``: the diffusion distance ``D_t`` from ``x`` to the nearest
       point of higher density (the densest point: its largest ``D_t``),
       divided by its maximum; found by :func:`nearest_denser` on ``Psi_t``;
    4. scores ``S = p rho_t``; ``K`` given, or estimated (``selection``); the
       ``K`` top scorers are the modes;
    5. points in decreasing density take the label of their ``D_t``-nearest
       point of higher density (all already labelled).

    :meth:`predict` labels new points by step 5 with the fitted geometry
    (Nyström coordinates, density, nearest denser training point).

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it (``selection``).
    selection : {"mode-ratio", "levels"}, default="mode-ratio"
        How ``K`` is estimated: the largest ratio of consecutive sorted scores
        (the paper's), or the finest level of the diffusion kernel's graph
        (:func:`~geoforest.graph.label_free_levels`, shared with the spectral clusterers).
    max_clusters : int, default=10
        Largest ``K`` the estimate may return.
    t : float or "multiscale", default="multiscale"
        Diffusion time.  ``"multiscale"`` runs LUND at the dyadic times
        ``t = 2^j`` of :func:`multiscale_times` (from the spectrum, at most
        ``2^max_log2_t``) and keeps the clustering that agrees best with the
        others: the one with the smallest summed variation of information to
        the clusterings at all the other times (a medoid over scales;
        clusterings with ``K = 1`` are considered only if every time gives
        ``K = 1``; ties to the smaller ``t``).
    max_log2_t : int, default=30
        Largest exponent of the multiscale range.
    n_neighbors : int, default=15
        Neighbours of the kNN graph and of the density.
    metric : {"euclidean", "forest", "precomputed"}, default="euclidean"
        The geometry of the graph, the density and :meth:`predict` (defined
        for every clusterer in :mod:`geoforest.graph`; see
        :class:`~geoforest.DiffusionMap`); ``"precomputed"``: ``fit(G)`` with
        a distance graph, whose rows' ``n_neighbors`` smallest entries are the
        kNN lists.  The spatial options need ``"euclidean"``.
    forest : forest, ForestNeighborsTransformer or None, default=None
        The forest of ``metric="forest"`` (see :class:`~geoforest.DiffusionMap`).
    sigma : "auto" or float, default="auto"
        Kernel scale of the graph and the density (see
        :class:`~geoforest.DiffusionMap`).
    n_components : int, default=10
        Eigenpairs of the diffusion map.
    affinity : {"gaussian", "precomputed", "precomputed_distance"}, default="gaussian"
        As in :class:`~geoforest.DiffusionMap`; with a given affinity
        (``"precomputed"``) the density is the graph's row sum.
        ``"precomputed_distance"`` is deprecated: pass ``metric="precomputed"``.
    normalization, kernel : str, default="textbook", "gaussian"
        Eigenvector normalisation and graph weights, see :class:`~geoforest.DiffusionMap`.
    cutoff : float or None, default=2.0
        Edges longer than ``cutoff * sigma`` are dropped and the components
        bridged (see :class:`~geoforest.DiffusionMap`); 2.0 gives the widest
        range of good times (``docs/results/lund.md``).
    n_search : int, default=30
        ``D_t``-neighbours searched first for the nearest denser point.
    image_shape : tuple of int or None, default=None
        ``(height, width)`` when the rows of ``X`` are the pixels of an image
        in row-major order; needed by the two spatial options.
    spatial_radius : int or None, default=None
        Spatially restricted graph: a pixel's ``n_neighbors`` (graph and
        density) are the nearest in feature space among the pixels at most
        ``spatial_radius`` rows and columns away (:func:`spatial_knn`).
    spatial_vote_radius : int or None, default=None
        After labelling, each pixel takes the label held by a strict
        majority of its ``(2 r + 1)^2`` window, if any
        (:func:`spatial_majority_vote`).
    connect, eigen_solver, eigen_tol : default=True, "auto", 1e-8
        Joining the kNN graph's components, the eigensolver and its tolerance,
        see :class:`~geoforest.DiffusionMap`.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver (and :meth:`query`'s random tie order, and a
        forest grown for ``metric="forest"`` without a seed of its own).
    verbose : int, default=0
        Show a progress bar over the diffusion times of the multiscale search (tqdm) when positive.
    n_jobs : int or None, default=None
        Threads of a forest grown for ``metric="forest"``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every point: ``0 .. K-1`` in the order of the modes'
        scores; with partial labels, the given classes (clusters holding no
        given label get new ids above the largest given one).
    n_clusters_ : int
        ``K`` (given or estimated).
    modes_ : ndarray of shape (``n_clusters_``,)
        Indices of the modes, by decreasing score.
    density_ : ndarray of shape (n_samples,)
        ``p``, summing to 1.
    rho_ : ndarray of shape (n_samples,)
        ``rho_t``, maximum 1.
    scores_ : ndarray of shape (n_samples,)
        ``p rho_t``.
    parent_ : ndarray of shape (n_samples,)
        Each point's ``D_t``-nearest point of higher density (``-1`` for the
        densest).
    n_clusters_scores_ : ndarray of shape (max_clusters,)
        The evidence behind ``n_clusters_``: ``levels_.gaps`` when the levels
        chose K; else, at ``t_``, entry ``K - 1`` is the ratio ``S_K / S_(K+1)``
        of the sorted scores (:func:`mode_ratios`; a warning says when ``K = 1``
        was chosen or the runner-up scored within 10 % of the winner).
    reference_excess_ : ndarray of shape (<= max_clusters,) or None
        Label-free only (``"mode-ratio"``: ``K >= 2``): entry ``K - 1`` is
        ``s_K`` of :func:`~geoforest.graph.spectral_excess` on the diffusion
        kernel; with ``"mode-ratio"`` none reaching ``MIN_EXCESS`` warns that
        the clusters may be noise.
    levels_ : Levels or None
        ``selection="levels"``, K estimated: :class:`~geoforest.graph.Levels`.
    t_ : float
        Diffusion time used.
    multiscale_ : dict or None
        ``t="multiscale"``: ``times``; per time ``n_clusters``, ``vi_sum``, ``labels``.
    geometry_ : Geometry or None
        The fitted geometry (``diffusion_map_.geometry_``).
    forest_ : forest or None
        The fitted forest of ``metric="forest"``, else ``None``.
    diffusion_map_ : DiffusionMap
        The fitted diffusion map, its ``t`` set to ``t_`` (its ``transform(X)``
        embeds new points at the time LUND used).
    n_features_in_ : int
        Features seen by ``fit`` (training points, for a precomputed graph).
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names of a DataFrame given to ``fit`` (only then).

    References
    ----------
    .. [1] M. Maggioni and J. M. Murphy, *Learning by Unsupervised Nonlinear
           Diffusion*, Journal of Machine Learning Research 20(160), 1-56,
           2019.
    .. [2] R. R. Coifman and S. Lafon, *Diffusion maps*, Applied and
           Computational Harmonic Analysis 21(1), 5-30, 2006.
    .. [3] J. M. Murphy and M. Maggioni, *Unsupervised Clustering and Active Learning of
           Hyperspectral Images with Nonlinear Diffusion*, IEEE Transactions on Geoscience
           and Remote Sensing 57(3), 2019 (the spatial options and :meth:`query`).
    .. [4] J. M. Murphy, *Data Dependent Distances for Unsupervised Learning* (slides).

    Examples
    --------
    >>> from geoforest.datasets import make_multidensity_clusters
    >>> X, y = make_multidensity_clusters(600, n_clusters=3, random_state=0)
    >>> model = LUND(random_state=0).fit(X)
    >>> model.n_clusters_
    3
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "selection": [StrOptions({"mode-ratio", "levels"})],
        "t": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"multiscale"})],
        "max_log2_t": [Interval(numbers.Integral, 1, 60, closed="both")],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "sigma": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "affinity": [StrOptions({"gaussian", "precomputed", "precomputed_distance"})],
        "normalization": [StrOptions({"textbook", "symmetric"})],
        "n_search": [Interval(numbers.Integral, 1, None, closed="left")],
        "kernel": [StrOptions({"gaussian", "adaptive"})],
        "cutoff": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "image_shape": [tuple, list, None],
        "spatial_radius": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "spatial_vote_radius": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "connect": ["boolean"],
        "eigen_solver": [StrOptions({"auto", "dense", "shift-invert", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "metric": [StrOptions(set(METRICS))],
        "forest": "no_validation",  # make_geometry checks it
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        n_clusters: int | None = None,
        *,
        selection: str = "mode-ratio",
        max_clusters: int = 10,
        t: float | str = "multiscale",
        max_log2_t: int = 30,
        n_neighbors: int = 15,
        metric: str = "euclidean",
        forest=None,
        sigma: str | float = "auto",
        n_components: int = 10,
        affinity: str = "gaussian",
        normalization: str = "textbook",
        n_search: int = 30,
        kernel: str = "gaussian",
        cutoff: float | None = 2.0,
        image_shape: tuple[int, int] | None = None,
        spatial_radius: int | None = None,
        spatial_vote_radius: int | None = None,
        connect: bool = True,
        eigen_solver: str = "auto",
        eigen_tol: float = 1e-8,
        random_state=None,
        verbose: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.selection = selection
        self.max_clusters = max_clusters
        self.t = t
        self.max_log2_t = max_log2_t
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.forest = forest
        self.n_jobs = n_jobs
        self.sigma = sigma
        self.n_components = n_components
        self.affinity = affinity
        self.normalization = normalization
        self.n_search = n_search
        self.kernel = kernel
        self.cutoff = cutoff
        self.image_shape = image_shape
        self.spatial_radius = spatial_radius
        self.spatial_vote_radius = spatial_vote_radius
        self.connect = connect
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.random_state = random_state
        self.verbose = verbose

    # -------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Cluster ``X``; with partial labels ``y``, propagate them (semi-supervised).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse (n, n)
            Features, or a precomputed graph (see ``affinity``).
        y : array-like of shape (n_samples,) of int, or None
            Optional partial labels, ``-1`` for unlabelled points.  Each
            unsupervised cluster's mode takes the majority of the given labels
            in its basin: the cluster's given points ``D_t``-nearer to the mode
            than the mode is to any denser point (``rho_t`` of the mode; every
            given point of the densest mode's cluster).  A mode with none
            there gets a new id.  Given labels farther out lie in regions the
            cluster absorbed: they relabel those regions (below) and do not
            rename the mode.  Given labels are kept; every other point, in
            decreasing density, takes the label of the nearer of its
            ``D_t``-nearest denser point and its ``D_t``-nearest given label
            (given labels anchor their neighbourhood at any density).

        Returns
        -------
        self : LUND
        """
        self._validate_params()
        X, windows = lund_input(self, X)
        dm = self._diffusion_map()._fit(X, windows, owner=self, stacklevel=3)
        self.geometry_, self.forest_ = dm.geometry_, dm.forest_
        self.diffusion_map_ = dm
        # Features, or training points for a precomputed graph (the columns predict takes).
        self.n_features_in_ = dm.n_features_in_
        n = dm.eigenvectors_.shape[0]
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} exceeds n_samples={n}")
        y_partial = check_partial_labels(y, n)
        reference_graph = reference_graphs(
            self.metric, dm._graph_params(), neighbors=windows, owner=self
        )
        self.levels_ = None
        if self.n_clusters is None and self.selection == "levels":
            self.levels_ = lund_levels(
                dm.affinity_, dm.geometry_, reference_graph, self.max_clusters, self.random_state
            )
        fit = fit_lund(
            dm.eigenvectors_,
            dm.eigenvalues_,
            dm.kernel_density_,
            getattr(dm, "knn_distances_", None),
            getattr(dm, "knn_indices_", None),
            t=self.t,
            n_clusters=self.n_clusters if self.levels_ is None else self.levels_.n_clusters,
            max_clusters=self.max_clusters,
            max_log2_t=self.max_log2_t,
            n_search=self.n_search,
            verbose=self.verbose,
        )
        self.density_, self._rank, self._twin = fit.density, fit.rank, fit.twin
        self.multiscale_ = fit.multiscale
        self._set_state(fit.clustering)
        if self.levels_ is not None:  # the evidence behind K is then the levels'
            self.n_clusters_scores_ = level_scores(self.levels_, self.max_clusters)
        dm.set_params(t=self.t_)  # diffusion_map_.transform(X): Psi at the time used
        self.labels_ = self._final_labels(y_partial)
        self.reference_excess_ = explain_lund_k(  # warnings about a label-free K
            type(self).__name__,
            self.n_clusters_,
            self.n_clusters_scores_,
            self.levels_,
            n_clusters=self.n_clusters,
            max_clusters=self.max_clusters,
            random_state=self.random_state,
            affinity=dm.affinity_,
            geometry=dm.geometry_,
            reference_graph=reference_graph,
            windowed=windows is not None,
        )
        return self

    def _diffusion_map(self) -> DiffusionMap:
        """An unfitted :class:`DiffusionMap` with LUND's own graph and eigensolver parameters."""
        names = DiffusionMap._parameter_constraints.keys() & self._parameter_constraints.keys()
        return DiffusionMap(**{name: getattr(self, name) for name in names - {"t"}})

    def _set_state(self, state: LundClustering) -> None:
        self.t_ = state.t
        self.rho_ = state.rho
        self._rho_scale = state.rho_scale
        self.parent_ = state.parent
        self.scores_ = state.scores
        self.modes_ = state.modes
        self.n_clusters_ = state.k
        self.n_clusters_scores_ = state.ratios
        self._unsupervised_labels = state.labels

    def _final_labels(self, y_partial: np.ndarray | None) -> np.ndarray:
        self._partial = y_partial  # the labels_ came from these; predict anchors on them
        return final_labels(
            self._unsupervised_labels,
            y_partial,
            self._semi_supervised,
            image_shape=self.image_shape,
            vote_radius=self.spatial_vote_radius,
        )

    def _semi_supervised(self, y: np.ndarray) -> np.ndarray:
        Y = self.diffusion_map_.embedding(self.t_)
        return semi_supervised_labels(
            Y,
            y,
            self._unsupervised_labels,
            self.modes_,
            self.parent_,
            self.rho_ * self._rho_scale,
            self._rank,
        )

    def labels_at(self, t: float) -> np.ndarray:
        """The unsupervised clustering of the training points at diffusion time ``t``.

        Steps 3-5 of the algorithm at another time on the fitted diffusion
        map and density, which do not depend on ``t`` (no refit); the model
        is not changed.  ``K`` is ``n_clusters`` when given, else estimated
        at ``t`` (step 4); it is ``labels.max() + 1``.  Partial labels and
        the spatial vote are not applied: for an unsupervised fit without
        ``spatial_vote_radius``, ``labels_at(t_)`` equals ``labels_``.

        Parameters
        ----------
        t : float
            Diffusion time, ``t >= 0``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Clusters ``0 .. K-1`` in the order of the modes' scores.

        Examples
        --------
        >>> from geoforest.datasets import make_multidensity_clusters
        >>> X, y = make_multidensity_clusters(600, n_clusters=3, random_state=0)
        >>> model = LUND(random_state=0).fit(X)
        >>> bool((model.labels_at(model.t_) == model.labels_).all())
        True
        """
        check_is_fitted(self, "modes_")
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not t >= 0:
            raise ValueError(f"t must be a real number >= 0, got {t!r}")
        dm = self.diffusion_map_
        return lund_at_time(
            dm.eigenvectors_,
            dm.eigenvalues_,
            self.density_,
            self._rank,
            float(t),
            n_search=self.n_search,
            max_clusters=self.max_clusters,
            n_clusters=self.n_clusters,
            twin=self._twin,
        ).labels

    def relabel(self, y) -> np.ndarray:
        """Propagate partial labels ``y`` with the fitted geometry (no refit); sets ``labels_``.

        Parameters
        ----------
        y : array-like of shape (n_samples,) of int
            ``-1`` for unlabelled points.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "modes_")
        self.labels_ = self._final_labels(check_partial_labels(y, self._rank.size))
        return self.labels_

    # ---------------------------------------------------------------- predict
    def predict(self, X) -> np.ndarray:
        """Label new points by LUND's own rule: the label of their ``D_t``-nearest denser point.

        Step 5 of the algorithm (class docstring) labels every point that is
        not a mode with the label of its ``D_t``-nearest point of higher
        density.  ``predict`` applies that step to new points with the fitted
        geometry held fixed (the new points change neither the graph, the
        modes, nor each other's labels):

        1. ``x`` is embedded at the fitted time ``t_`` by the Nyström
           extension (:meth:`DiffusionMap.transform`), and its density is the
           fitted kernel density, ``sum_{j in NN_k(x)} exp(-|x - x_j|^2 /
           sigma^2)`` over its ``n_neighbors`` nearest training points in the fitted geometry,
           normalised like ``density_`` (with a precomputed graph: the sum of
           the given row);
        2. its parent is the ``D_t``-nearest training point of strictly
           higher density (:func:`nearest_denser_to`; a point denser than
           every training point takes its ``D_t``-nearest training point);
        3. it takes the parent's label in ``labels_`` — except, after partial
           labels (``fit(X, y)`` or :meth:`relabel`), when its ``D_t``-nearest
           given label is nearer than the parent, as in :meth:`fit`.

        A new point is never a mode: it joins an existing cluster.  A row of
        ``X`` equal to a training point is that point and gets its label in
        ``labels_`` (the rule itself gives every training point but the
        modes its own label, since fit labelled it from the same parent).
        ``spatial_radius`` and ``spatial_vote_radius`` shaped ``labels_`` but
        need pixel positions that new points lack: new points use their
        plain kNN in feature space and take their parent's (voted) label.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New points; after a fit on a precomputed graph, the
            ``(n_queries, n_samples)`` affinity or sparse distance rows from
            the new points to the training points.

        Returns
        -------
        labels : ndarray of shape (n_queries,)

        Examples
        --------
        >>> rng = np.random.RandomState(0)
        >>> X = np.vstack([rng.normal(c, 0.2, (60, 2)) for c in (0.0, 3.0)])
        >>> model = LUND(n_clusters=2, n_neighbors=10, t=64.0, random_state=0).fit(X)
        >>> bool((model.predict(X) == model.labels_).all())
        True
        >>> new = model.predict([[0.1, -0.1], [2.9, 3.1]])
        >>> bool(new[0] == model.labels_[0] and new[1] == model.labels_[60])
        True
        """
        check_is_fitted(self, "modes_")
        dm = self.diffusion_map_
        Yq, density, match = dm._extend(dm._validate_query(X, self), self.t_)
        labels = np.empty(Yq.shape[0], dtype=self.labels_.dtype)
        hit = match >= 0
        labels[hit] = self.labels_[match[hit]]
        new = np.flatnonzero(~hit)
        if new.size:
            labels[new] = self._predict_rows(Yq[new], density[new] / dm.kernel_density_.sum())
        return labels

    def _predict_rows(self, Yq: np.ndarray, density_q: np.ndarray) -> np.ndarray:
        """Steps 2-3 of :meth:`predict` for rows ``Yq`` of ``Psi_t`` and densities ``density_q``."""
        Y, y, labels = self.diffusion_map_.embedding(self.t_), self._partial, self.labels_
        return predict_rows(Yq, density_q, Y, self.density_, labels, y, self.n_search)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A precomputed graph is n x n at fit and (n_queries, n) at predict.
        tags.input_tags.pairwise = tags.input_tags.sparse = takes_square_input(self)
        return tags

    # --------------------------------------------------------- active learning
    def query(self, n_queries: int = 1, y=None, strategy: str = "impact") -> np.ndarray:
        """The points most worth labelling next.

        The labelled points are the modes (with their clusters' classes, see
        :meth:`fit`) and the points labelled in ``y``.  For every other point
        ``x``, let ``d_1 <= d_2`` be its ``D_t`` distances to the nearest
        labelled points of the two nearest *different* classes.

        ``strategy="boundary"`` is the criterion of the slides, ``F_t(x) =
        d_2 - d_1``: the ``n_queries`` points of smallest ``F_t`` (points
        between two classes; ties to the lower index).

        ``strategy="impact"`` (default) asks where an answer can change the
        most labels.  Labels reach every point along its chain of nearest
        denser points (:meth:`fit`), so the label of ``x`` decides the labels
        of its free subtree, the ``m(x)`` points whose chain meets ``x``
        before any labelled point (:func:`free_subtree_sizes`; large for dense
        points near cluster cores, 1 for a point no other point copies).
        The answer changes them if ``x`` belongs to another class than the
        one it now receives, which is likely when ``x`` is nearly as close to
        a second class as to the first: ``a(x) = d_1 / d_2`` in ``[0, 1]``
        (``1 - F_t / d_2``, the slides' ``F_t`` made scale-free).  The score
        is ``m(x) a(x)``: dense (many points copy ``x``) and ambiguous
        points, the combination Murphy & Maggioni's active learning asks
        for.  Queries are picked greedily (ties to the lower index): once
        ``x`` is picked, the points it would label leave the free subtrees of
        its ancestors, so one batch does not ask twice about the same region.

        Parameters
        ----------
        n_queries : int, default=1
        y : array-like of shape (n_samples,) of int, or None
            Labels known so far (``-1`` unlabelled); the points labelled here
            are not queried again.
        strategy : {"impact", "boundary"}, default="impact"

        Returns
        -------
        ndarray of shape (n_queries,) of int
            Point indices, in the order picked (best first).
        """
        check_is_fitted(self, "modes_")
        if strategy not in ("impact", "boundary"):
            raise ValueError(f"strategy must be 'impact' or 'boundary', got {strategy!r}")
        n = self._rank.size
        y = check_partial_labels(y, n)
        seeds, seed_labels = self.modes_, self._unsupervised_labels[self.modes_]
        if y is not None and np.any(y >= 0):
            known = np.flatnonzero(y >= 0)
            mode_class = self._semi_supervised(y)[self.modes_]
            seeds = np.concatenate([known, self.modes_])
            seed_labels = np.concatenate([y[known], mode_class])
        Y = self.diffusion_map_.embedding(self.t_)
        return active_queries(Y, self._rank, self.parent_, seeds, seed_labels, n_queries, strategy)

    def random_query(self, n_queries: int, y=None) -> np.ndarray:
        """``n_queries`` unlabelled points drawn uniformly (the baseline of :meth:`query`).

        Parameters
        ----------
        n_queries : int
            In ``[1, number of unlabelled points]`` (without replacement).
        y : array-like of shape (n_samples,) of int, or None
            Labels known so far (``-1`` unlabelled); only unlabelled points
            are drawn.

        Returns
        -------
        ndarray of shape (n_queries,) of int
        """
        check_is_fitted(self, "modes_")
        y = check_partial_labels(y, self._rank.size)
        return random_queries(self._rank.size, y, n_queries, self.random_state)
