"""The longest-leg path distance as an estimator: neighbours, denoising, kernel operator."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._jit import njit
from .._limits import check_dense_size
from .._validation import validate_data  # sklearn's, with a one-line complex-data message
from ..graph._mst import euclidean_mst
from ..graph._unionfind import find_root
from ._dendrogram import (
    Dendrogram,
    affinity_matmat,
    cophenetic_matrix,
    kth_neighbor_heights,
    llpd_kneighbors,
    single_linkage,
)
from ._noise import auto_noise_threshold
from ._out_of_sample import build_query_index, llpd_query

__all__ = ["LLPD"]


#: Coordinates are refused beyond this magnitude (and nonzero spreads below its
#: inverse): squared Euclidean distances, which the MST and the neighbour searches
#: compare, overflow to inf near 1e154 and underflow to 0 near 1e-154.
MAX_MAGNITUDE = 1e150


def _check_magnitude(X: np.ndarray) -> None:
    """Refuse coordinates whose squared distances overflow or underflow float64."""
    if X.size == 0:
        return
    top = float(np.max(np.abs(X)))
    spread = float(np.max(X.max(axis=0) - X.min(axis=0)))
    if top > MAX_MAGNITUDE / np.sqrt(X.shape[1]) or 0.0 < spread < 1.0 / MAX_MAGNITUDE:
        raise ValueError(
            f"LLPD needs coordinates whose squared distances are finite float64 numbers; "
            f"X has values up to {top:.3g} and a spread of {spread:.3g}. LLPD scales with X: "
            "divide X by a constant (a power of 2 is exact) and multiply the distances back."
        )


@njit(nogil=True, cache=True)
def _kruskal(n, weights, edges):
    """Minimum spanning forest of a graph whose edges are sorted by weight."""
    uf = np.arange(n)
    keep = np.zeros(weights.shape[0], np.bool_)
    for e in range(weights.shape[0]):
        ra = find_root(uf, edges[e, 0])
        rb = find_root(uf, edges[e, 1])
        if ra != rb:
            uf[ra] = rb
            keep[e] = True
    roots = np.empty(n, np.int64)
    for i in range(n):
        roots[i] = find_root(uf, i)
    return keep, roots


def _mscale_tree(X: np.ndarray, n_neighbors: int, n_scales: int):
    """The m-scale approximation: a kNN graph's spanning forest, heights rounded up to scales.

    Edges of the symmetrised ``n_neighbors``-NN graph are thresholded at
    ``n_scales`` geometrically spaced scales between the shortest positive
    and the longest edge; the approximate LLPD of two points is the first
    scale at which they are connected (``inf`` if never).
    """
    from sklearn.neighbors import NearestNeighbors

    n = X.shape[0]
    if n_neighbors > n - 1:  # the user's number, not silently clipped
        raise ValueError(
            f"mscale_neighbors must be in [1, n_samples - 1] = [1, {n - 1}], got {n_neighbors}"
        )
    k = int(n_neighbors)
    dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    rows = np.repeat(np.arange(n), k)
    pairs = np.stack([rows, ind[:, 1:].ravel()], axis=1)
    pairs.sort(axis=1)
    w = dist[:, 1:].ravel()
    pairs, first = np.unique(pairs, axis=0, return_index=True)
    w = w[first]
    positive = w[w > 0]
    lo = positive.min() if positive.size else 1.0
    hi = max(w.max(), lo)
    scales = np.geomspace(lo, hi, n_scales) if hi > lo else np.full(1, hi)
    w = scales[np.minimum(np.searchsorted(scales, w, side="left"), scales.size - 1)]
    order = np.lexsort((pairs[:, 1], pairs[:, 0], w))
    w, pairs = w[order], np.ascontiguousarray(pairs[order])
    keep, roots = _kruskal(n, w, pairs)
    w, pairs = w[keep], pairs[keep]
    comps = np.unique(roots)
    if comps.size > 1:  # join the components of the graph at infinite height
        bridges = np.stack([comps[:-1], comps[1:]], axis=1)
        w = np.concatenate([w, np.full(comps.size - 1, np.inf)])
        pairs = np.concatenate([pairs, bridges])
    return w, pairs


def _check_k(k, n: int, name: str) -> int:
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"{name} must be an integer, got {k!r}")
    if not 1 <= k <= n - 1:
        raise ValueError(f"{name} must be in [1, n_samples - 1] = [1, {n - 1}], got {k}")
    return int(k)


class LLPD(BaseEstimator):
    """Longest-leg path distance, exact, from the Euclidean minimum spanning tree.

    The LLPD between two points is the smallest possible longest edge over all
    paths joining them through the data::

        rho(x, y) = min over paths x = y_1, ..., y_L = y of max_j ||y_(j+1) - y_j||

    It equals the largest edge on the Euclidean MST path between them, i.e.
    the height at which single linkage first joins them (the cophenetic
    distance).  ``fit`` builds the exact Euclidean MST and the single-linkage
    dendrogram once; every query is a pass over the dendrogram.

    Parameters
    ----------
    mst_method : {"auto", "kdtree", "boruvka", "brute"}, default="auto"
        Exact EMST engine, see :func:`geoforest.llpd.euclidean_mst`.
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

    Attributes
    ----------
    dendrogram_ : Dendrogram
        Single-linkage dendrogram (merge heights are MST edge lengths).
    mst_weights_ : ndarray of shape (n_samples - 1,)
        MST edge lengths, non-decreasing (the merge heights).
    mst_edges_ : ndarray of shape (n_samples - 1, 2)
        MST edges.
    n_features_in_ : int

    Notes
    -----
    Neighbours are ranked by LLPD; ties (many points share one LLPD) are
    broken by Euclidean distance, then by index.  Without query points a
    point is never its own neighbour.  New points are queried with
    ``kneighbors(X)``: their LLPD to the training points goes through a
    first straight leg into the training set (exact, see :meth:`kneighbors`).

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
    """

    _parameter_constraints: dict = {
        "mst_method": [StrOptions({"auto", "kdtree", "boruvka", "brute"})],
        "mscale": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "mscale_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, *, mst_method="auto", mscale=None, mscale_neighbors=20):
        self.mst_method = mst_method
        self.mscale = mscale
        self.mscale_neighbors = mscale_neighbors

    def fit(self, X, y=None):
        """Build the Euclidean MST and the single-linkage dendrogram of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            At least 2 finite points; duplicates are allowed (LLPD 0).
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        X_in = X
        X = validate_data(self, X, dtype=np.float64, order="C", ensure_min_samples=2)
        _check_magnitude(X)
        if self.mscale is None:
            weights, edges = euclidean_mst(X, method=self.mst_method)
        else:
            weights, edges = _mscale_tree(X, self.mscale_neighbors, self.mscale)
        # the model keeps its own rows: a caller editing its array must not change it
        self._X = X.copy() if X is X_in or not X.flags.owndata else X
        self.mst_weights_ = weights
        self.mst_edges_ = edges
        self.dendrogram_ = single_linkage(X.shape[0], weights, edges)
        self._query_index = None  # out-of-sample K-d tree, built by the first kneighbors(X)
        return self

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
        n_neighbors: int = 10,
        return_distance: bool = True,
        *,
        tie_break: str = "euclidean",
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

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features) or None, default=None
            Query points.  ``None``: the training points, each excluding
            itself.  Given, every query is a new point: a query equal to a
            training point is at LLPD 0 from it and that point is returned
            (first, after any duplicates of lower index), as scikit-learn's
            ``kneighbors(X)`` does; ``kneighbors(X_train, k + 1)`` is
            ``kneighbors(k)`` with each point's own copy added.  An integer
            here is read as ``n_neighbors`` (the former signature) with a
            ``FutureWarning``.
        n_neighbors : int, default=10
            In ``[1, n_samples - 1]`` without ``X``, ``[1, n_samples]`` with it.
        return_distance : bool, default=True
        tie_break : {"euclidean", "tree"}, default="euclidean"
            Order among points at the same LLPD: ``"euclidean"`` by Euclidean
            distance (to the query point), then index; ``"tree"`` by
            depth-first position in the dendrogram (``dendrogram_.order``; the
            child with the smaller node id first), which needs no scan of the
            tied points.

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
            training data; ``n_neighbors`` is out of range.

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
        if tie_break not in ("euclidean", "tree"):
            raise ValueError(f"tie_break must be 'euclidean' or 'tree', got {tie_break!r}")
        if isinstance(X, numbers.Integral) and not isinstance(X, bool):
            if n_neighbors != 10:
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
        t = self.dendrogram_
        if X is not None:
            return self._kneighbors_new(X, n_neighbors, return_distance, tie_break)
        k = _check_k(n_neighbors, t.n_samples, "n_neighbors")
        dist, ind = llpd_kneighbors(
            self._X,
            k,
            t.parent,
            t.node_height,
            t.start,
            t.node_size,
            t.order,
            np.arange(t.n_samples),
            tie_break == "euclidean",
        )
        return (dist, ind) if return_distance else ind

    def _kneighbors_new(self, X, n_neighbors, return_distance: bool, tie_break: str):
        """:meth:`kneighbors` of query points ``X`` (validated here)."""
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        n = self.dendrogram_.n_samples
        if not isinstance(n_neighbors, numbers.Integral) or isinstance(n_neighbors, bool):
            raise TypeError(f"n_neighbors must be an integer, got {n_neighbors!r}")
        if not 1 <= n_neighbors <= n:
            raise ValueError(
                f"n_neighbors must be in [1, n_samples] = [1, {n}] for query points X, "
                f"got {n_neighbors}"
            )
        dist, ind = self._query_new(X, int(n_neighbors), euclidean=tie_break == "euclidean")
        return (dist, ind) if return_distance else ind

    def _query_new(self, X: np.ndarray, k: int, *, euclidean: bool = True):
        """LLPD ``k``-neighbours of validated query points (float64, C order)."""
        _check_magnitude(X)  # every out-of-sample path (kneighbors, LLPD-SC's predict)
        index = getattr(self, "_query_index", None)
        if index is None:  # built on first use; a model never queried does not pay for it
            index = build_query_index(self._X, self.dendrogram_)
            self._query_index = index
        return llpd_query(self._X, X, k, self.dendrogram_, index, euclidean=euclidean)

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
            (t.n_samples, t.n_samples), np.float64, what="LLPD.pairwise()", max_bytes=max_bytes,
            hint="kneighbors, knn_distance or affinity_operator give the neighbours without it.",
        )  # fmt: skip
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
        values = self.knn_distance(_check_k(k_nse, self.dendrogram_.n_samples, "k_nse"))
        if isinstance(threshold, str):
            if threshold != "auto":
                raise ValueError(f"threshold must be 'auto' or a float, got {threshold!r}")
            theta = auto_noise_threshold(values)
        elif isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
            theta = float(threshold)
            if not theta >= 0:
                raise ValueError(f"threshold must be non-negative, got {threshold!r}")
        else:
            raise TypeError(f"threshold must be 'auto' or a float, got {threshold!r}")
        kept = values <= theta
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

    def affinity_operator(self, sigma: float) -> LinearOperator:
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
        return _affinity_operator(t, np.exp(-np.square(t.heights / float(sigma))))


def _affinity_operator(t: Dendrogram, weight: np.ndarray) -> LinearOperator:
    n = t.n_samples

    def matmat(V):
        V = np.ascontiguousarray(V, dtype=np.float64)
        out = np.empty_like(V)
        return affinity_matmat(n, t.left, t.right, weight, V, out)

    def matvec(v):
        return matmat(np.asarray(v, dtype=np.float64).reshape(n, 1)).reshape(-1)

    return LinearOperator(
        (n, n), matvec=matvec, rmatvec=matvec, matmat=matmat, rmatmat=matmat, dtype=np.float64
    )
