"""LLPD from new points to the training points: the first hops, then the dendrogram walk.

The LLPD from a new point ``x`` to training point ``i`` is
``min over j of max(||x - x_j||, rho(j, i))`` over the first points ``j`` its
paths enter the training set at; :mod:`geoforest.llpd._dendrogram_walk` finds
the ``k`` smallest through the single-linkage dendrogram, given those first
hops.  This module chooses them and drives the walk over chunks of queries.

Only the first hops that can matter are looked at.  The ``k``-th LLPD is at
most the ``k``-th Euclidean distance (each of the ``k`` nearest points is
reached directly), so a hop longer than the ``(k + 1)``-th Euclidean neighbour's
cannot reach any of the ``k`` nearest; only when the ``k``-th LLPD equals that
distance (an exact tie) are all the points at that distance added (a radius
search) and the walk repeated.  The Euclidean neighbours come from a K-d tree
(:func:`geoforest.graph._kdtree.kdtree`), with squared distances summed as the
EMST engines sum them, so a training point given as a query reproduces its
training LLPDs exactly.

Cost per query: the K-d tree search, then the walk's ``O(L (k + m))`` for
``L`` levels and ``m`` first-hop candidates (``k + 1`` unless there is a tie)
plus ``O(k d)``.  Memory: ``O(n)`` workspace per chunk of queries, never
``n x n``.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..graph.kernels import box_dist2, insert_sorted, kdtree, push_children, sq_dist
from ._dendrogram_walk import FirstHops, dendrogram_walk, walk_index, walk_workspace, widened

__all__ = ["QUERY_CHUNK", "QueryIndex", "build_query_index", "llpd_query"]

#: Queries per call of the compiled kernel (one ``O(n)`` workspace per call).
QUERY_CHUNK = 4096


class QueryIndex:
    """What out-of-sample LLPD queries need beyond the training points (built once per model).

    Attributes
    ----------
    kdtree : KDTree
        K-d tree of the training points
        (:class:`geoforest.graph._kdtree.KDTree`), for the first hops.
    walk : WalkIndex
        The dendrogram as the walk reads it
        (:class:`geoforest.llpd._dendrogram_walk.WalkIndex`).
    """

    def __init__(self, X: np.ndarray, dendrogram) -> None:
        self.kdtree = kdtree(X)
        self.walk = walk_index(dendrogram)


def build_query_index(X: np.ndarray, dendrogram) -> QueryIndex:
    """The :class:`QueryIndex` of training points ``X`` and their dendrogram."""
    return QueryIndex(np.ascontiguousarray(X, dtype=np.float64), dendrogram)


# ------------------------------------------------------------------ first hops
@njit(nogil=True, cache=True)
def _knn_candidates(tree, x, m, cand_d2, cand_i, stack):
    """The ``m`` nearest training points of ``x``, sorted by (squared distance, index)."""
    points, perm, start, end, left, right, lo, hi = tree
    d = points.shape[1]
    count = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        # Equal box distance is not pruned: a point at the m-th distance may have a lower index.
        if count == m and box_dist2(x, lo, hi, v, d) > cand_d2[m - 1]:
            continue
        if left[v] >= 0:
            top = push_children(x, lo, hi, left, right, v, d, stack, top)
            continue
        for u in range(start[v], end[v]):
            count = insert_sorted(sq_dist(x, points, u, d), perm[u], m, count, cand_d2, cand_i)
    return count


@njit(nogil=True, cache=True)
def _radius_candidates(tree, x, r2, buf_d2, buf_i, stack):
    """Every training point at squared distance ``<= r2`` from ``x``.

    They are written to ``buf_d2``/``buf_i`` sorted by (squared distance,
    index); returns how many.
    """
    points, perm, start, end, left, right, lo, hi = tree
    d = points.shape[1]
    count = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        if box_dist2(x, lo, hi, v, d) > r2:
            continue
        if left[v] >= 0:
            stack[top] = left[v]
            stack[top + 1] = right[v]
            top += 2
            continue
        for u in range(start[v], end[v]):
            acc = sq_dist(x, points, u, d)
            if acc <= r2:
                buf_d2[count] = acc
                buf_i[count] = perm[u]
                count += 1
    # Heapsort by (squared distance, index): compiles in a fraction of np.argsort's time.
    for root in range(count // 2 - 1, -1, -1):
        _sift_down(buf_d2, buf_i, root, count)
    for last in range(count - 1, 0, -1):
        buf_d2[0], buf_d2[last] = buf_d2[last], buf_d2[0]
        buf_i[0], buf_i[last] = buf_i[last], buf_i[0]
        _sift_down(buf_d2, buf_i, 0, last)
    return count


@njit(inline="always")
def _before(d2, ind, a, b):
    return d2[a] < d2[b] or d2[a] == d2[b] and ind[a] < ind[b]


@njit(inline="always")
def _sift_down(d2, ind, root, size):
    """Max-heap sift of ``root`` within the first ``size`` pairs."""
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and _before(d2, ind, child, child + 1):
            child += 1
        if not _before(d2, ind, root, child):
            return
        d2[root], d2[child] = d2[child], d2[root]
        ind[root], ind[child] = ind[child], ind[root]
        root = child


@njit(nogil=True, cache=True)
def _query_chunk(X, Q, k, tree, index, euclidean):
    """LLPD ``k``-neighbours of every row of ``Q`` (see :func:`dendrogram_walk`).

    ``tree`` is the :class:`~geoforest.graph._kdtree.KDTree` of ``X``,
    ``index`` the :class:`~geoforest.llpd._dendrogram_walk.WalkIndex` of its
    dendrogram.
    """
    n = X.shape[0]
    n_q = Q.shape[0]
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    m0 = min(k + 1, n)
    cand_d2 = np.empty(m0)
    cand_i = np.empty(m0, np.int64)
    stack = np.empty(tree.start.shape[0] + 1, np.int64)
    ws = walk_workspace(n, index.parent.shape[0], k, m0)
    buf_d2 = np.empty(0)
    buf_i = np.empty(0, np.int64)
    for qi in range(n_q):
        x = Q[qi]
        m = _knn_candidates(tree, x, m0, cand_d2, cand_i, stack)
        hops = FirstHops(cand_i, cand_d2, np.sqrt(cand_d2[:m]), m)
        rho = dendrogram_walk(X, x, hops, k, euclidean, index, ws, dist[qi], ind[qi])
        if m < n and rho >= np.sqrt(cand_d2[m - 1]):
            # A tie at the last candidate's distance: a point outside the candidates may
            # sit at exactly that distance.  Take every point a hair beyond it (a superset
            # is exact too) and walk again.
            if buf_i.shape[0] == 0:
                buf_d2 = np.empty(n)
                buf_i = np.empty(n, np.int64)
            r2 = cand_d2[m - 1] * (1.0 + 1e-12)
            m2 = _radius_candidates(tree, x, r2, buf_d2, buf_i, stack)
            hops = FirstHops(buf_i, buf_d2, np.sqrt(buf_d2[:m2]), m2)
            wide = widened(ws, m2)
            dendrogram_walk(X, x, hops, k, euclidean, index, wide, dist[qi], ind[qi])
    return dist, ind


def llpd_query(
    X: np.ndarray, Q: np.ndarray, k: int, index: QueryIndex, *, euclidean: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` LLPD neighbours among the training points ``X`` of every row of ``Q``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C order
        Training points.
    Q : ndarray of shape (n_queries, d), float64, C order
        Query points (any; a training point's copy is at LLPD 0 from it).
    k : int
        In ``[1, n]``.
    index : QueryIndex
        Of ``X`` and its dendrogram.
    euclidean : bool
        Ties in LLPD broken by Euclidean distance to the query, then index
        (``True``), or by depth-first position in the dendrogram.

    Returns
    -------
    dist, ind : ndarray of shape (n_queries, k)
    """
    n_q = Q.shape[0]
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    for lo in range(0, n_q, QUERY_CHUNK):
        hi = min(lo + QUERY_CHUNK, n_q)
        Q_chunk = np.ascontiguousarray(Q[lo:hi])
        dist[lo:hi], ind[lo:hi] = _query_chunk(
            X, Q_chunk, int(k), index.kdtree, index.walk, bool(euclidean)
        )
    return dist, ind
