"""Diffusion maps: the random walk on a sparse kNN graph, its eigenpairs, distances ``D_t``."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import N_JOBS, validate_data
from ..graph import METRICS, check_query_graph, fit_geometry
from ._diffusion_fit import DiffusionFit, diffusion_coordinates, fit_diffusion
from ._kernel_graph import GraphSettings, geometry_metric, takes_square_input
from ._nystrom import NystromExtension, nystrom_extend

__all__ = ["DiffusionMap"]


class DiffusionMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Diffusion map of a sparse kNN graph: eigenpairs of ``P = D^-1 W`` and distances ``D_t``.

    ``fit`` builds the symmetric affinity ``W``, by default the kNN graph of
    ``X`` with Gaussian weights ``exp(-||x_i - x_j||^2 / sigma^2)``, or takes a
    precomputed sparse affinity or distance graph (for example a forest's
    ``kneighbors_graph``), and keeps the leading eigenpairs ``(lambda_k,
    psi_k)`` of the random walk ``P = D^-1 W`` (``D`` the degrees).  The
    diffusion map at time ``t`` is ``Psi_t(x) = (lambda_k^t psi_k(x))_k``;
    Euclidean distances between its rows are the diffusion distances ``D_t``
    of Coifman & Lafon [1]_, truncated to ``n_components`` eigenpairs.

    As a scikit-learn transformer, ``fit_transform(X)`` returns ``Psi_t`` of
    the training points at the time ``t`` given to the constructor, and
    ``transform(X)`` embeds new points by the Nyström extension [3]_ [4]_, so
    ``make_pipeline(DiffusionMap(), KMeans(3))`` works.  :meth:`embedding`
    gives the training points' ``Psi_t`` at any other time without a refit,
    and :meth:`distances`, :meth:`kneighbors` take a time as well.

    Parameters
    ----------
    n_neighbors : int, default=15
        Neighbours per point in the kNN graph (a precomputed graph's stored
        entries are its edges).
    metric : {"euclidean", "forest", "precomputed"}, default="euclidean"
        The geometry of the kNN graph, defined for every clusterer in
        :mod:`geoforest.graph`.  ``"forest"``: neighbours, distances and
        bridges of ``forest``'s learned distance, with the same ``sigma``
        rule, ``cutoff`` and ``connect``.  ``"precomputed"``: ``fit(G)`` with
        a sparse distance graph, as ``affinity="precomputed_distance"``.
    forest : forest, ForestNeighborsTransformer or None, default=None
        The forest of ``metric="forest"``: ``None`` grows an
        ``UnsupervisedForest()`` (``random_state``, ``n_jobs``), an unfitted
        one is fitted on ``X``, a fitted one must have been grown on ``X``.
    t : float, default=1.0
        Diffusion time of :meth:`transform` and :meth:`fit_transform` (and
        the default of :meth:`embedding`, :meth:`distances`,
        :meth:`kneighbors`), ``t >= 0``; the ``t`` of ``P^t`` and ``D_t`` in
        Coifman & Lafon [1]_ and Maggioni & Murphy [2]_.  ``t = 1`` is one
        step of the random walk: the geometry of the kernel at its own scale
        ``sigma``, the diffusion map of [1]_ before any time is chosen.
        Larger times merge finer structure (``lambda_k^t`` damps every
        coordinate but the slowest); there is no scale-free best time, and
        :class:`~geoforest.LUND` scans many (``t="multiscale"``).  ``t`` is
        not used by ``fit``: ``set_params(t=...)`` on a fitted map changes
        what :meth:`transform` returns without a refit.
    sigma : "auto" or float, default="auto"
        Kernel scale; ``"auto"`` is the median over the points of the distance
        to their ``n_neighbors``-th neighbour (of the largest stored distance
        of every row for ``"precomputed_distance"``).
    n_components : int, default=10
        Eigenpairs kept, the trivial one (``lambda = 1``, ``psi`` constant on
        a connected graph) included; at most ``n_samples``.
    affinity : {"gaussian", "precomputed", "precomputed_distance"}, default="gaussian"
        ``"gaussian"``: ``fit(X)`` with features.  ``"precomputed"``:
        ``fit(W)`` with a sparse non-negative affinity, used as
        ``max(W, W^T)``.  ``"precomputed_distance"``: ``fit(G)`` with a sparse
        graph of distances (stored entries are edges, an explicitly stored 0
        is distance 0), turned into ``exp(-d^2 / sigma^2)`` and symmetrised;
        ``metric="precomputed"`` reads the same graph (either spelling).
    normalization : {"textbook", "symmetric"}, default="textbook"
        ``"textbook"``: the right eigenvectors ``psi = phi / sqrt(pi)`` of
        ``P``, from the unit eigenvectors ``phi`` of the symmetric ``M =
        D^{-1/2} W D^{-1/2}`` and the stationary distribution ``pi = d /
        sum(d)``; distances are diffusion distances.  ``"symmetric"``: ``phi``
        itself, as in the public LUND code; distances then weigh points by
        ``sqrt(pi)`` and are not the diffusion distance.
    connect : bool, default=True
        With ``affinity="gaussian"``, join the connected components of the
        kNN graph by the edges of a minimum spanning forest between them,
        weighted ``exp(-min(d / sigma, cutoff)^2)`` (Notes).
        Precomputed graphs are used as given.
    kernel : {"gaussian", "adaptive"}, default="gaussian"
        ``"gaussian"``: one scale ``sigma`` for every edge.  ``"adaptive"``:
        self-tuning weights ``exp(-d^2 / (s_i s_j))``, ``s_i`` the distance
        to the ``local_scale_neighbor``-th neighbour (Zelnik-Manor & Perona);
        worse for LUND on noisy data (``docs/results/lund.md``).
    local_scale_neighbor : int, default=7
        Neighbour rank of the local scales of ``kernel="adaptive"``.
    cutoff : float or None, default=2.0
        With ``kernel="gaussian"``, edges longer than ``cutoff * sigma``
        (weight below ``exp(-cutoff^2)``) are dropped before the components
        are bridged, and bridges weigh at least ``exp(-cutoff^2)``; ``None``
        keeps every kNN edge (bridges then weigh at least ``exp(-1)``).
    eigen_solver : {"auto", "dense", "shift-invert", "arpack", "lobpcg"}, default="auto"
        ``"shift-invert"``: ARPACK on ``(M - (1 + 1e-6) I)^-1`` (sparse LU),
        fast on the crowded top of a diffusion spectrum; the others as in
        :func:`geoforest.graph.spectral_eigs`.  ``"auto"``: dense up to
        1,000 points, shift-invert above.
    eigen_tol : float, default=1e-8
        Tolerance of the iterative eigensolvers.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver's starting vector (and a forest grown for
        ``metric="forest"`` without a seed of its own).
    n_jobs : int or None, default=None
        Threads of a forest grown for ``metric="forest"``.

    Attributes
    ----------
    geometry_ : Geometry or None
        The fitted geometry (:mod:`geoforest.graph`) whose neighbours built
        the graph and whose queries :meth:`transform` reads (``None`` for a
        precomputed affinity).
    forest_ : forest or None
        The fitted forest of ``metric="forest"``, else ``None``.
    affinity_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The symmetric affinity ``W`` (bridges included).
    degree_ : ndarray of shape (n_samples,)
        ``d = W 1``.
    stationary_ : ndarray of shape (n_samples,)
        ``pi = d / sum(d)``.
    eigenvalues_ : ndarray of shape (n_components,)
        Leading eigenvalues of ``P``, descending.
    eigenvectors_ : ndarray of shape (n_samples, n_components)
        ``psi`` (or ``phi`` with ``normalization="symmetric"``), one column per
        eigenvalue.
    sigma_ : float
        Kernel scale used (``nan`` for ``affinity="precomputed"``).
    n_bridges_ : int
        Edges added to connect the graph.
    n_graph_components_ : int
        Connected components of ``W`` (1 after bridging).
    kernel_density_ : ndarray of shape (n_samples,)
        Row sums of the kernel before symmetrisation: ``sum_{j in NN_k(i)}
        exp(-d_ij^2 / sigma^2)`` (the degree of a precomputed affinity);
        :class:`~geoforest.LUND` uses it as the density.
    n_features_in_ : int
        Features seen by ``fit`` (the number of training points for a
        precomputed graph).
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names of a DataFrame given to ``fit`` (only then).

    Notes
    -----
    The derivations are in the repository's ``docs/paths-and-diffusion.md``
    ("What DiffusionMap computes"): why the eigenpairs of the symmetric ``M``
    give those of ``P``, why distances between rows of ``Psi_t`` are
    diffusion distances, the Nyström extension of :meth:`transform` for each
    ``affinity`` (a query equal to a training point gets its fitted
    coordinates, so ``transform(X_train)`` equals ``fit_transform(X_train)``),
    the rescaling of extreme feature values, and three remedies for noisy
    graphs: ``connect`` bridges the graph's components through a minimum
    spanning forest with every weight kept within ``[exp(-cutoff^2), 1]``;
    ``psi`` is recomputed as ``P psi / lambda`` where ``1 / sqrt(pi)`` would
    magnify the eigensolver's error; a negative eigenvalue at a non-integer
    time is taken as ``sign(lambda) |lambda|^t``.

    References
    ----------
    .. [1] R. R. Coifman and S. Lafon, *Diffusion maps*, Applied and
           Computational Harmonic Analysis 21(1), 5-30, 2006.
    .. [2] M. Maggioni and J. M. Murphy, *Learning by Unsupervised Nonlinear
           Diffusion*, Journal of Machine Learning Research 20(160), 1-56,
           2019.
    .. [3] R. R. Coifman and S. Lafon, *Geometric harmonics: a novel tool for
           multiscale out-of-sample extension of empirical functions*,
           Applied and Computational Harmonic Analysis 21(1), 31-52, 2006.
    .. [4] Y. Bengio, J.-F. Paiement, P. Vincent, O. Delalleau, N. Le Roux and
           M. Ouimet, *Out-of-sample extensions for LLE, Isomap, MDS,
           Eigenmaps, and spectral clustering*, NIPS 16, 177-184, 2004.
    .. [5] J. M. Murphy, *Data Dependent Distances for Unsupervised Learning*
           (slides).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> X = np.vstack([rng.normal(0, 0.1, (30, 2)), rng.normal(3, 0.1, (30, 2))])
    >>> dm = DiffusionMap(n_neighbors=5, n_components=4, random_state=0).fit(X)
    >>> dm.n_bridges_
    1
    >>> D = dm.distances(t=8, rows=[0, 30])
    >>> bool(D[0, 1] < D[0, 35])  # same cluster closer than the other cluster
    True

    In a pipeline, new points are embedded by the Nyström extension:

    >>> from sklearn.cluster import KMeans
    >>> from sklearn.pipeline import make_pipeline
    >>> pipe = make_pipeline(DiffusionMap(n_neighbors=5, n_components=4, t=8, random_state=0),
    ...                      KMeans(2, n_init=10, random_state=0))
    >>> labels = pipe.fit_predict(X)
    >>> new = pipe.predict([[0.05, 0.0], [3.0, 2.95]])
    >>> bool(new[0] == labels[0] and new[1] == labels[30])
    True
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "t": [Interval(numbers.Real, 0, None, closed="left")],
        "sigma": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "affinity": [StrOptions({"gaussian", "precomputed", "precomputed_distance"})],
        "normalization": [StrOptions({"textbook", "symmetric"})],
        "connect": ["boolean"],
        "kernel": [StrOptions({"gaussian", "adaptive"})],
        "cutoff": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "local_scale_neighbor": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "shift-invert", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "metric": [StrOptions(set(METRICS))],
        "forest": "no_validation",  # make_geometry checks it
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        n_neighbors: int = 15,
        *,
        metric: str = "euclidean",
        forest=None,
        t: float = 1.0,
        sigma: str | float = "auto",
        n_components: int = 10,
        affinity: str = "gaussian",
        normalization: str = "textbook",
        connect: bool = True,
        kernel: str = "gaussian",
        cutoff: float | None = 2.0,
        local_scale_neighbor: int = 7,
        eigen_solver: str = "auto",
        eigen_tol: float = 1e-8,
        random_state=None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.forest = forest
        self.n_jobs = n_jobs
        self.t = t
        self.sigma = sigma
        self.n_components = n_components
        self.affinity = affinity
        self.normalization = normalization
        self.connect = connect
        self.kernel = kernel
        self.cutoff = cutoff
        self.local_scale_neighbor = local_scale_neighbor
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.random_state = random_state

    # -------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Build the graph and compute the leading eigenpairs of the random walk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse (n_samples, n_samples)
            Features, or the precomputed affinity / distance graph.
        y : None
            Ignored.

        Returns
        -------
        self : DiffusionMap
        """
        return self._fit(X, stacklevel=3)

    def fit_transform(self, X, y=None) -> np.ndarray:
        """Fit, and return the diffusion map ``Psi_t`` of the training points at time ``t``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse (n_samples, n_samples)
            Features, or the precomputed affinity / distance graph.
        y : None
            Ignored.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            ``embedding(t)``: ``sign(lambda_k) |lambda_k|^t psi_k(x_i)``;
            Euclidean distances between rows are ``D_t``.
        """
        return self._fit(X, stacklevel=3).embedding()

    def _fit(
        self,
        X,
        neighbors: tuple[np.ndarray, np.ndarray] | Callable | None = None,
        owner=None,
        *,
        stacklevel: int,
    ) -> DiffusionMap:
        """``fit``, optionally on given (e.g. spatially restricted) kNN lists of ``X``.

        Validates the parameters and ``X``, calls :func:`fit_diffusion` with
        them and stores its result.  ``neighbors`` is ``(dist, ind)`` or a
        function of ``X`` returning them
        (:func:`~geoforest.diffusion._kernel_graph.fit_graph`); ``owner`` is
        named in errors; ``stacklevel`` is the user's call as
        :func:`warnings.warn` counts from here.
        """
        self._validate_params()
        if not takes_square_input(self):
            X = validate_data(self, X, dtype=np.float64, order="C", ensure_min_samples=2)
        owner = self if owner is None else owner
        fit = fit_diffusion(
            X,
            geometry_metric(owner, stacklevel + 1),
            graph_settings=self._graph_params(),
            n_components=self.n_components,
            normalization=self.normalization,
            eigen_solver=self.eigen_solver,
            eigen_tol=self.eigen_tol,
            random_state=self.random_state,
            neighbors=neighbors,
            owner=owner,
            stacklevel=stacklevel + 1,
        )
        return self._store(fit)

    def _graph_params(self) -> GraphSettings:
        """The graph's parameters (:func:`~geoforest.diffusion._kernel_graph.fit_graph`).

        LUND rebuilds its graph on reference points with them (and a seed of
        each reference's own).
        """
        return GraphSettings(*(getattr(self, name) for name in GraphSettings._fields))

    def _store(self, fit: DiffusionFit) -> DiffusionMap:
        """Set the fitted attributes from ``fit`` (the kNN lists only when there are some)."""
        if takes_square_input(self):
            self.n_features_in_ = fit.affinity.shape[0]
        self.geometry_ = fit.geometry
        self.forest_ = fit.forest
        self.sigma_ = fit.sigma
        self._local_scale = fit.local_scale
        self.n_bridges_ = fit.n_bridges
        if fit.knn_indices is not None:
            self.knn_distances_, self.knn_indices_ = fit.knn_distances, fit.knn_indices
        self.kernel_density_ = fit.kernel_density
        self.affinity_ = fit.affinity
        self.n_graph_components_ = fit.n_graph_components
        self.degree_ = fit.degree
        self.stationary_ = fit.stationary
        self.eigenvalues_ = fit.eigenvalues
        self.eigenvectors_ = fit.eigenvectors
        return self

    # ------------------------------------------------------------------ query
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A precomputed graph is n x n at fit and (n_queries, n) at transform, the
        # layout scikit-learn slices for "pairwise" estimators in cross-validation.
        tags.input_tags.pairwise = tags.input_tags.sparse = takes_square_input(self)
        return tags

    @property
    def _n_features_out(self) -> int:
        """Output columns, for ``get_feature_names_out`` (``diffusionmap0``, ...)."""
        return self.eigenvalues_.shape[0]

    def _time(self, t: float | None) -> float:
        t = self.t if t is None else t
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t) or t < 0:
            raise ValueError(f"t must be a finite number >= 0, got {t!r}")
        return float(t)

    def embedding(self, t: float | None = None) -> np.ndarray:
        """The diffusion map ``Psi_t`` of the training points, at any time.

        ``fit_transform(X)`` is ``fit(X).embedding()``; another time needs no
        refit.  (Before ``t`` became a constructor parameter, this was
        ``transform(t)``.)

        Parameters
        ----------
        t : float or None, default=None
            Diffusion time, ``t >= 0``; ``None`` is the fitted map's ``t``.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            ``sign(lambda_k) |lambda_k|^t psi_k(x_i)``; Euclidean distances
            between rows are ``D_t``.
        """
        check_is_fitted(self, "eigenvectors_")
        return diffusion_coordinates(self.eigenvectors_, self.eigenvalues_, self._time(t))

    def transform(self, X) -> np.ndarray:
        """Diffusion coordinates of new points at time ``t``, by the Nyström extension.

        ``Psi_t(x)_l = |lambda_l|^(t - 1) sum_j p(x, j) psi_l(j)`` with the
        fitted kernel's random-walk row ``p(x, .)`` from ``x`` to the training
        points (derived in ``docs/paths-and-diffusion.md``); a row equal to a
        training point gets that point's fitted coordinates, so
        ``transform(X_train)`` is ``fit_transform(X_train)``.  The row's
        neighbours are its ``n_neighbors`` nearest training points in the
        fitted geometry (``geometry_.query``; for ``metric="forest"``, equality
        with a training point is in the forest's float32).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            New points.  After a fit on a precomputed graph: the ``(n_queries,
            n_samples)`` affinity (``affinity="precomputed"``) or sparse
            distance rows (``"precomputed_distance"``) from the new points to
            the training points.

        Returns
        -------
        ndarray of shape (n_queries, n_components)
            Distances between rows (and to rows of :meth:`embedding` at the
            same ``t``) approximate ``D_t``.

        Raises
        ------
        ValueError
            Wrong number of features (or of training columns), NaN or
            infinite values, a precomputed row without an edge, or points so
            far out that their distances overflow.
        """
        check_is_fitted(self, "eigenvectors_")
        if isinstance(X, numbers.Real):
            raise ValueError(
                f"Expected 2D array, got the scalar {X!r}: transform(X) embeds new points "
                "(the time is the parameter t); the training points' diffusion map at time "
                "t, formerly transform(t), is embedding(t)"
            )
        t = self._time(None)
        return self._extend(self._validate_query(X, self), t)[0]

    def _validate_query(self, X, estimator) -> np.ndarray | sp.csr_matrix:
        """``X`` of a query, checked against the fit; errors name ``estimator``."""
        if not takes_square_input(self):
            return validate_data(estimator, X, dtype=np.float64, order="C", reset=False)
        n = self.eigenvectors_.shape[0]
        if self.geometry_ is None:
            return check_query_graph(X, n, "affinity", estimator)
        G = check_query_graph(X, n, "distance graph", estimator)
        if sp.issparse(X):
            return G
        # Dense distance rows list every training point: a 0 is a copy (an edge of
        # length 0, which a sparse conversion would drop), as in a dense fit.
        D = np.asarray(X, dtype=np.float64)
        m = D.shape[0]
        return sp.csr_matrix(
            (D.ravel(), np.tile(np.arange(n), m), np.arange(0, m * n + 1, n)), (m, n)
        )

    def _extend(self, X, t: float) -> NystromExtension:
        """Nyström ``Psi_t``, kernel density and training match of validated queries.

        :func:`~geoforest.diffusion._nystrom.nystrom_extend` of the fitted
        arrays, with the kernel parameters as they are now (as ``t``, they
        are read at transform time).
        """
        return nystrom_extend(
            X,
            t,
            geometry=self.geometry_,
            eigenvalues=self.eigenvalues_,
            eigenvectors=self.eigenvectors_,
            degree=self.degree_,
            kernel_density=self.kernel_density_,
            local_scale=self._local_scale,
            sigma=self.sigma_,
            kernel=self.kernel,
            local_scale_neighbor=self.local_scale_neighbor,
            cutoff=self.cutoff,
            normalization=self.normalization,
        )

    def distances(self, t: float | None = None, rows=None, cols=None) -> np.ndarray:
        """Diffusion distances ``D_t`` between the training points ``rows`` and ``cols``.

        Parameters
        ----------
        t : float or None, default=None
            Diffusion time; ``None`` is the fitted map's ``t``.
        rows : array-like of int or None
            Row points (default: all; beware ``n x n``).
        cols : array-like of int or None
            Column points (default: all).

        Returns
        -------
        ndarray of shape (len(rows), len(cols))
        """
        Y = self.embedding(t)
        n = Y.shape[0]
        r = np.arange(n) if rows is None else self._indices(rows, n)
        c = np.arange(n) if cols is None else self._indices(cols, n)
        return cdist(Y[r], Y[c])

    @staticmethod
    def _indices(idx, n: int) -> np.ndarray:
        idx = np.asarray(idx).reshape(-1)
        if idx.dtype.kind not in "iu":
            raise TypeError("point indices must be integers")
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"point index out of range for {n} points")
        return idx % n

    def kneighbors(
        self,
        X=None,
        n_neighbors: int | None = None,
        return_distance: bool = True,
        *,
        t: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """The ``n_neighbors`` ``D_t``-nearest training points of the training points or of ``X``.

        Exact: a K-d tree (scikit-learn's ``NearestNeighbors``) on ``Psi_t``,
        whose Euclidean distances are ``D_t``; nothing is ``n x n``.  New
        points are embedded first (:meth:`transform` at time ``t``).  The
        signature is scikit-learn's, the time a keyword.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or None
            New points (as :meth:`transform` takes them); ``None``: every
            training point, itself excluded.  A number here is the time of
            the former ``kneighbors(t, n_neighbors)`` (deprecated: pass
            ``t=``).
        n_neighbors : int or None, default=None
            Neighbours per point (``< n_samples`` for the training points,
            ``<= n_samples`` for new points); ``None``: the map's own
            ``n_neighbors``, as scikit-learn's estimators do (pass 10 for the
            result of the former default).
        return_distance : bool, default=True
        t : float or None, default=None
            Diffusion time; ``None`` is the fitted map's ``t``.

        Returns
        -------
        dist : ndarray of shape (n_queries, n_neighbors)
            ``D_t``, ascending; only with ``return_distance=True``.
        ind : ndarray of shape (n_queries, n_neighbors)
        """
        if isinstance(X, numbers.Real) and not isinstance(X, bool):
            warnings.warn(
                "DiffusionMap.kneighbors(t, n_neighbors) is deprecated and will be removed "
                "in the next release: the first argument is now X (None: the training "
                "points), as in scikit-learn; pass the time as kneighbors(t=...)",
                FutureWarning,
                stacklevel=2,
            )
            X, t = None, X
        if n_neighbors is None:
            n_neighbors = self.n_neighbors
        Y = self.embedding(t)
        if X is None:
            dist, ind = fit_geometry(Y, n_neighbors=n_neighbors, owner=self).neighbors()
        else:
            Yq = self._extend(self._validate_query(X, self), self._time(t))[0]
            dist, ind = fit_geometry(Y, n_neighbors=n_neighbors, owner=self).query(Yq)
        return (dist, ind) if return_distance else ind

    def nearest_neighbors(self, t: float | None = None) -> NearestNeighbors:
        """A fitted :class:`~sklearn.neighbors.NearestNeighbors` on ``Psi_t`` (custom queries).

        ``t=None`` is the fitted map's ``t``; query it with :meth:`transform`
        of new points for their ``D_t``-nearest training points.
        """
        return NearestNeighbors().fit(self.embedding(t))
