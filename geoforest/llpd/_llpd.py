"""The longest-leg path distance as an estimator: neighbours, denoising, kernel operator."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._limits import check_dense_size
from .._validation import N_JOBS
from ..graph import METRICS, Geometry, check_n_neighbors, fit_geometry
from ._checks import (
    _check_k,
    _check_magnitude,
    _euclidean_points,
    _query_input,
    _training_data,
)
from ._dendrogram import (
    affinity_operator,
    cophenetic_matrix,
    kth_neighbor_heights,
    llpd_kneighbors,
)
from ._graph import graph_query
from ._out_of_sample import build_query_index, llpd_query
from ._tree import LLPDTree, denoise_dendrogram, fit_llpd_tree

__all__ = ["LLPD"]


class LLPD(BaseEstimator):
    """Longest-leg path distance, exact, from a minimum spanning tree (Euclidean or a graph's).

    The LLPD between two points is the smallest possible longest edge over all
    paths joining them through the data::

        rho(x, y) = min over paths x = y_1, ..., y_L = y of max_j ||y_(j+1) - y_j||

    It equals the largest edge on the Euclidean MST path between them, i.e.
    the height at which single linkage first joins them (the cophenetic
    distance).  ``fit`` builds the exact Euclidean MST and the single-linkage
    dendrogram once; every query is a pass over the dendrogram.

    With another geometry (``metric``) the legs are the edges of its
    neighbour graph, and the LLPD is the minimax path distance over that
    graph: the largest edge on the path of the graph's minimum spanning tree
    (:mod:`geoforest.llpd._graph`), on which the same dendrogram and every
    method below run unchanged.

    Parameters
    ----------
    metric : {"euclidean", "forest", "precomputed"}, default="euclidean"
        The geometry, as for every clusterer of geoforest (defined once in
        :mod:`geoforest.graph`).  ``"euclidean"``: the exact Euclidean MST
        (``forest`` and ``n_neighbors`` unused).  ``"forest"``: the
        symmetrised ``n_neighbors``-NN graph of the forest's metric, its
        components joined by a minimum spanning forest in that metric.
        ``"precomputed"``: ``fit(G)`` takes a distance graph, used as given
        (every stored entry an edge); points it leaves in different
        components are at LLPD ``inf``.
    forest : geoforest forest, ForestNeighborsTransformer or None, default=None
        The forest of ``metric="forest"`` (:mod:`geoforest.graph`); only
        with that metric.
    n_neighbors : int, default=15
        ``metric="forest"``: neighbours per point of the graph, in
        ``[1, n_samples - 1]``, and edges from a new point into it.
    mst_method : {"auto", "kdtree", "boruvka", "brute"}, default="auto"
        Exact EMST engine, see :func:`geoforest.graph.euclidean_mst`.
    mscale : int or None, default=None
        ``None``: exact LLPD.  An integer ``m`` switches to the m-scale
        approximation of Little, Maggioni & Murphy (a fidelity option): LLPD on
        the ``mscale_neighbors``-nearest-neighbour graph, rounded up to ``m``
        geometrically spaced scales; points the graph does not connect are at
        LLPD ``inf``.
    mscale_neighbors : int, default=20
        Neighbours of the kNN graph of the m-scale approximation, in
        ``[1, n_samples - 1]`` (checked by ``fit`` when ``mscale`` is set;
        ``n_samples - 1`` is the complete graph).
    random_state : int, RandomState instance or None, default=None
        Seeds the forest of ``metric="forest"`` where its own is None.
    n_jobs : int or None, default=None
        Threads of that forest where its own is None.

    Attributes
    ----------
    geometry_ : Geometry
        The fitted geometry (:mod:`geoforest.graph`).
    dendrogram_ : Dendrogram
        Single-linkage dendrogram (merge heights are MST edge lengths).
    mst_weights_ : ndarray of shape (n_samples - 1,)
        MST edge lengths, non-decreasing (the merge heights).
    mst_edges_ : ndarray of shape (n_samples - 1, 2)
        MST edges (``inf`` for the edges joining the components of a
        ``"precomputed"`` graph).
    n_features_in_ : int
        Not set with ``metric="precomputed"``.

    Notes
    -----
    Neighbours are ranked by LLPD; ties (many points share one LLPD) are
    broken by Euclidean distance, then by index (``metric="euclidean"``), or
    by position in the dendrogram (a graph's).  Without query points a
    point is never its own neighbour.  New points are queried with
    ``kneighbors(X)``: their LLPD to the training points goes through a
    first leg into the training set (exact, see :meth:`kneighbors`).

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
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [10.5]])
    >>> llpd = LLPD().fit(np.c_[X, np.zeros(5)])
    >>> llpd.pairwise()[0]
    array([0., 1., 1., 8., 8.])
    >>> llpd.knn_distance(2)
    array([1., 1., 1., 8., 8.])
    >>> distances, indices = llpd.kneighbors(n_neighbors=2)
    >>> distances[3], indices[3]  # its twin at 0.5, then point 2 (the nearest of 0, 1, 2)
    (array([0.5, 8. ]), array([4, 2]))
    >>> llpd.kneighbors([[5.0, 0.0]], n_neighbors=3)  # 3 to point 2, then 0 and 1 at LLPD 3
    (array([[3., 3., 3.]]), array([[2, 1, 0]]))

    Over a graph of distances, as given: two components are at LLPD ``inf``.

    >>> import scipy.sparse as sp
    >>> G = sp.csr_matrix(([1.0, 2.0, 4.0], ([0, 1, 3], [1, 2, 4])), shape=(5, 5))
    >>> LLPD(metric="precomputed").fit(G).pairwise()[0]
    array([ 0.,  1.,  2., inf, inf])
    """

    _parameter_constraints: dict = {
        "metric": [StrOptions(set(METRICS))],
        "forest": "no_validation",  # fit_geometry checks it
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "mst_method": [StrOptions({"auto", "kdtree", "boruvka", "brute"})],
        "mscale": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "mscale_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        *,
        metric="euclidean",
        forest=None,
        n_neighbors=15,
        mst_method="auto",
        mscale=None,
        mscale_neighbors=20,
        random_state=None,
        n_jobs=None,
    ):
        self.metric = metric
        self.forest = forest
        self.n_neighbors = n_neighbors
        self.mst_method = mst_method
        self.mscale = mscale
        self.mscale_neighbors = mscale_neighbors
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Build the minimum spanning tree and the single-linkage dendrogram of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            At least 2 finite points; duplicates are allowed (LLPD 0).  With
            ``metric="precomputed"``, a square sparse distance graph or a
            dense distance matrix (:mod:`geoforest.graph`).
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``forest`` or ``mscale`` without their metric; ``n_neighbors``
            not below ``n_samples`` with ``metric="forest"``.
        """
        self._validate_params()
        X = _training_data(self, X)
        geometry = fit_geometry(
            X,
            self.metric,
            forest=self.forest,
            n_neighbors=self.n_neighbors,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            owner=self,
        )
        points = _euclidean_points(geometry, X)
        if points is None and geometry.can_bridge:  # a graph of n_neighbors lists
            check_n_neighbors(self.n_neighbors, geometry.n_samples_)
        return self._fit_geometry(geometry, points)

    def _fit_geometry(self, geometry: Geometry, points: np.ndarray | None) -> LLPD:
        """Fit on a fitted geometry's spanning tree (``points``: Euclidean coordinates, or None).

        With coordinates, the tree is the exact Euclidean MST of every pair
        (or the m-scale approximation's); without, the geometry's own
        (:func:`~geoforest.llpd._tree.fit_llpd_tree`).
        """
        tree = fit_llpd_tree(
            geometry,
            points,
            mst_method=self.mst_method,
            mscale=self.mscale,
            mscale_neighbors=self.mscale_neighbors,
        )
        self._set_tree(tree)
        return self

    def _fit_subset(self, llpd: LLPD, rows: np.ndarray) -> LLPD:
        """Fit on the points ``rows`` of a fitted ``llpd``, in its geometry (no refit).

        With coordinates, the exact Euclidean MST of the kept points; over a
        graph, the kept points' graph in the same fitted geometry
        (:meth:`~geoforest.graph.Geometry.subset`: a forest's kept points'
        ``n_neighbors``-NN graph, bridged; a given graph's subgraph).
        """
        if llpd._X is not None:
            return self.fit(llpd._X[rows])
        if hasattr(llpd, "n_features_in_"):
            self.n_features_in_ = llpd.n_features_in_
        return self._fit_geometry(llpd.geometry_.subset(rows), None)

    def _set_tree(self, tree: LLPDTree) -> None:
        """Store a fitted tree as the fitted attributes every query reads."""
        self._X = tree.points  # coordinates: the Euclidean tie-break and queries (None for a graph)
        self.geometry_ = tree.geometry
        self.mst_weights_ = tree.weights
        self.mst_edges_ = tree.edges
        self.dendrogram_ = tree.dendrogram
        self._query_index = None  # out-of-sample K-d tree, built by the first kneighbors(X)

    # ------------------------------------------------------------------ queries
    @property
    def n_samples_fit_(self) -> int:
        check_is_fitted(self, "dendrogram_")
        return self.dendrogram_.n_samples

    def knn_distance(self, k: int = 10) -> np.ndarray:
        """LLPD from every training point to its ``k``-th LLPD neighbour.

        The point itself is not counted: the value is the ``k``-th smallest of
        ``rho(x, y)`` over ``y != x``, i.e. the height of the lowest dendrogram
        node above ``x`` that holds at least ``k + 1`` points.  ``O(n)``.

        Parameters
        ----------
        k : int, default=10
            In ``[1, n_samples - 1]``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "dendrogram_")
        t = self.dendrogram_
        k = _check_k(k, t.n_samples, "k")
        return kth_neighbor_heights(t.n_samples, t.left, t.right, t.node_size, t.heights, k)

    def kneighbors(
        self,
        X: ArrayLike | None = None,
        n_neighbors: int | None = None,
        return_distance: bool = True,
        *,
        tie_break: str = "auto",
    ) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """The ``n_neighbors`` nearest training points in LLPD, of the training points or of ``X``.

        For a new point ``x`` the LLPD to training point ``i`` is that of the
        data with ``x`` added: a path from ``x`` enters the training set at a
        first point ``j``, so ::

            rho(x, i) = min over training points j of max(||x - x_j||, rho(x_j, i))

        (paths through ``x`` between training points are not used: the
        training LLPDs do not change).  It is computed exactly from the
        Euclidean neighbours of ``x`` that can be a first hop (a K-d tree
        search) and the dendrogram, never ``n x n``
        (:mod:`geoforest.llpd._out_of_sample`).

        Over a graph (``metric`` other than ``"euclidean"``), ``x`` joins it
        by its edges: the first hops ``j`` are those only, and
        ``||x - x_j||`` is the geometry's distance: its ``n_neighbors``
        nearest training points (``"forest"``), or its row of distances
        (``"precomputed"``: every stored entry of a sparse row, every entry of
        a dense one, a 0 making ``x`` a copy of that point; a sparse row
        with no entry is at LLPD ``inf`` from every point).  Exact,
        ``O(L (k + m))`` per query for ``m`` first hops after the geometry's
        search (:mod:`geoforest.llpd._graph`).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None, default=None
            Query points (``metric="precomputed"``: their rows of distances
            to the training points, shape (n_queries, n_samples)).  ``None``:
            the training points, each excluding itself.  Given, every query
            is a new point: a query equal to a training point is at LLPD 0
            from it and that point is returned
            (first, after any duplicates of lower index), as scikit-learn's
            ``kneighbors(X)`` does; ``kneighbors(X_train, k + 1)`` is
            ``kneighbors(k)`` with each point's own copy added.  An integer
            here is read as ``n_neighbors`` (the former signature) with a
            ``FutureWarning``.
        n_neighbors : int or None, default=None
            In ``[1, n_samples - 1]`` without ``X``, ``[1, n_samples]`` with it;
            ``None``: the estimator's ``n_neighbors`` (as scikit-learn's
            ``kneighbors``).
        return_distance : bool, default=True
        tie_break : {"auto", "euclidean", "tree"}, default="auto"
            Order among points at the same LLPD: ``"euclidean"`` by Euclidean
            distance (to the query point), then index; ``"tree"`` by
            depth-first position in the dendrogram (``dendrogram_.order``; the
            child with the smaller node id first), which needs no scan of the
            tied points.  ``"auto"``: ``"euclidean"`` with
            ``metric="euclidean"``, ``"tree"`` over a graph (which has no
            coordinates: ``"euclidean"`` is refused there).

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            LLPD to each neighbour, non-decreasing along a row (only with
            ``return_distance``).  ``n_queries`` is ``n_samples`` without ``X``.
        indices : ndarray of shape (n_queries, n_neighbors)
            Training indices, ranked by LLPD, then by ``tie_break``; without
            ``X`` a point is not its own neighbour.

        Raises
        ------
        ValueError
            ``X`` is not finite, or has another number of features than the
            training data; ``n_neighbors`` is out of range; ``tie_break`` is
            ``"euclidean"`` over a graph.

        Notes
        -----
        Without ``X``: with ``tie_break="tree"`` the cost is ``O(n k)``.  With
        ``"euclidean"`` it is ``O(n (k + t) d)``, ``t`` the number of points
        tied at the LLPD of the ``k``-th neighbour, all of which are ranked: a
        point whose subtree is small and joins a large one at one height (an
        outlier joining a cluster) scans the whole cluster, so on data with
        background noise the cost grows like ``n^2`` (docs/benchmarks.md).

        With ``X``: the first call builds a K-d tree of the training points
        (``O(n log n)``, kept with the model).  Per query: a ``k + 1``
        Euclidean nearest neighbour search (all the points at that distance
        when there is an exact tie), then a walk up the dendrogram from those
        first hops, ``O(L (k + m) + k d)`` for ``L`` distinct LLPD levels and
        ``m`` first hops, plus the climb.  With ``"euclidean"``, the tied
        points at the last level are read off the first hops when enough of
        them are tied there, otherwise they are all scanned as above; with
        ``"tree"`` no scan.  Queries are processed in chunks of
        :data:`~geoforest.llpd._out_of_sample.QUERY_CHUNK`, ``O(n)``
        workspace each.

        With ``mscale``, the training LLPDs ``rho`` in the formula above are the
        approximate ones (rounded up to the scales, ``inf`` between the kNN
        graph's components) and the first leg ``||x - x_j||`` is exact (not
        rounded, not limited to a kNN graph), so the result is the LLPD of
        the approximation's ultrametric completed by ``x``'s exact Euclidean
        edges.  A training point's copy may then be nearer than the training
        point itself is (a direct leg shorter than the rounded-up training
        LLPD).

        References
        ----------
        .. [1] A. Little, M. Maggioni and J. M. Murphy, *Path-Based Spectral
               Clustering: Guarantees, Robustness to Outliers, and Fast
               Algorithms*, arXiv:1712.06206, 2017; Journal of Machine
               Learning Research 21, 2020.
        """
        check_is_fitted(self, "dendrogram_")
        if tie_break not in ("auto", "euclidean", "tree"):
            raise ValueError(f"tie_break must be 'auto', 'euclidean' or 'tree', got {tie_break!r}")
        graph = self._X is None  # no coordinates to rank ties by
        if tie_break == "euclidean" and graph:
            raise ValueError(
                f"tie_break='euclidean' ranks tied points by their coordinates; LLPD over the "
                f"graph of metric={self.metric!r} has none: use tie_break='tree' (or 'auto')"
            )
        euclidean = tie_break != "tree" and not graph
        if isinstance(X, numbers.Integral) and not isinstance(X, bool):
            if n_neighbors is not None:
                raise TypeError(
                    "kneighbors(X, n_neighbors): X must be an array of query points; "
                    f"got the integer {X!r} and n_neighbors={n_neighbors!r}"
                )
            warnings.warn(
                "LLPD.kneighbors(k) with k as the first argument is deprecated: the first "
                f"argument is now X (query points); use kneighbors(n_neighbors={X!r})",
                FutureWarning,
                stacklevel=2,
            )
            X, n_neighbors = None, X
        if n_neighbors is None:
            n_neighbors = self.n_neighbors
        t = self.dendrogram_
        if X is not None:
            return self._kneighbors_new(X, n_neighbors, return_distance, euclidean)
        k = _check_k(n_neighbors, t.n_samples, "n_neighbors")
        dist, ind = llpd_kneighbors(
            self._X if euclidean else np.empty((t.n_samples, 0)),
            k,
            t.parent,
            t.node_height,
            t.start,
            t.node_size,
            t.order,
            np.arange(t.n_samples),
            euclidean,
        )
        return (dist, ind) if return_distance else ind

    def _kneighbors_new(self, X, n_neighbors, return_distance: bool, euclidean: bool):
        """:meth:`kneighbors` of query points ``X`` (validated here)."""
        n = self.dendrogram_.n_samples
        if not isinstance(n_neighbors, numbers.Integral) or isinstance(n_neighbors, bool):
            raise TypeError(f"n_neighbors must be an integer, got {n_neighbors!r}")
        if not 1 <= n_neighbors <= n:
            raise ValueError(
                f"n_neighbors must be in [1, n_samples] = [1, {n}] for query points X, "
                f"got {n_neighbors}"
            )
        dist, ind = self._query_new(self._check_queries(X), int(n_neighbors), euclidean=euclidean)
        return (dist, ind) if return_distance else ind

    def _check_queries(self, X):
        """Query points validated as ``fit`` validated the training data."""
        return _query_input(self, self.geometry_, X)

    def _query_new(self, X, k: int, *, euclidean: bool = True):
        """LLPD ``k``-neighbours of validated query points (float64, C order)."""
        if self._X is None:  # a graph: the new point's edges into it are its first hops
            return graph_query(self.dendrogram_, self.geometry_.query_edges(X, self), k)
        _check_magnitude(X)  # every out-of-sample path (kneighbors, LLPD-SC's predict)
        index = getattr(self, "_query_index", None)
        if index is None:  # built on first use; a model never queried does not pay for it
            index = build_query_index(self._X, self.dendrogram_)
            self._query_index = index
        return llpd_query(self._X, X, k, index, euclidean=euclidean)

    def pairwise(self, *, max_bytes: int | float | None = None) -> np.ndarray:
        """All pairwise LLPDs of the training points (dense ``n x n``, only when asked).

        Parameters
        ----------
        max_bytes : int, float or None, default=None
            The largest result allowed, in bytes (``None``:
            ``geoforest._limits.DENSE_MAX_BYTES``, 4 GiB, about 23,000 points).

        Returns
        -------
        ndarray of shape (n_samples, n_samples)
            Symmetric, zero diagonal.

        Raises
        ------
        ValueError
            The matrix would exceed ``max_bytes``.
        """
        check_is_fitted(self, "dendrogram_")
        t = self.dendrogram_
        check_dense_size(
            (t.n_samples, t.n_samples),
            np.float64,
            what="LLPD.pairwise()",
            max_bytes=max_bytes,
            hint="kneighbors, knn_distance or affinity_operator give the neighbours without it.",
        )
        return cophenetic_matrix(
            t.n_samples, t.left, t.right, t.heights, t.start, t.node_size, t.order
        )

    def denoise(self, k_nse: int = 10, threshold="auto", *, return_threshold: bool = False):
        """Keep the points whose LLPD to their ``k_nse``-th neighbour is at most ``threshold``.

        Parameters
        ----------
        k_nse : int, default=10
            Neighbour rank, in ``[1, n_samples - 1]``.
        threshold : "auto" or float, default="auto"
            ``theta``; ``"auto"`` uses :func:`auto_noise_threshold` on the
            ``knn_distance(k_nse)`` values.
        return_threshold : bool, default=False
            Also return the threshold used.

        Returns
        -------
        kept : ndarray of shape (n_samples,), bool
            True for the points kept (not noise).
        threshold : float
            Only with ``return_threshold``.
        """
        check_is_fitted(self, "dendrogram_")
        kept, theta = denoise_dendrogram(self.dendrogram_, k_nse, threshold)
        return (kept, theta) if return_threshold else kept

    def cut(self, height: float) -> np.ndarray:
        """Flat single-linkage clusters: points at LLPD ``<= height`` share a label.

        Parameters
        ----------
        height : float
            In ``[0, inf]``: ``0`` joins only duplicates, ``inf`` every point
            (with ``mscale``, points never connected are at LLPD ``inf``).
            NaN and negative heights raise ``ValueError`` (no LLPD is below 0).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster ids ``0, 1, ...`` numbered by first appearance.
        """
        check_is_fitted(self, "dendrogram_")
        return self.dendrogram_.cut(height)

    def affinity_operator(self, sigma: float):
        """``x -> W x`` with ``W_ij = exp(-rho_ij^2 / sigma^2)`` (``W_ii = 1``), never n x n.

        Two passes over the dendrogram per product: ``O(n m)`` time for ``m``
        vectors, ``O(n m)`` extra memory.

        Parameters
        ----------
        sigma : float
            Kernel scale, positive.

        Returns
        -------
        scipy.sparse.linalg.LinearOperator
            Symmetric, float64, shape (n_samples, n_samples); ``matmat`` works on
            a block of vectors in one pass.
        """
        check_is_fitted(self, "dendrogram_")
        if not isinstance(sigma, numbers.Real) or not np.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")
        t = self.dendrogram_
        return affinity_operator(t, np.exp(-np.square(t.heights / float(sigma))))
