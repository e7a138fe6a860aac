"""LLPD from new points to the training points: the first hop, then the dendrogram.

A path from a new point ``x`` into the training set enters it at some first
point ``j`` (a straight leg of length ``e_j = ||x - x_j||``) and continues
through the training points, so

    rho(x, i) = min over j of max(e_j, rho(j, i))

with ``rho(j, i)`` the height of the lowest common ancestor of ``j`` and ``i``
in the single-linkage dendrogram.  Equivalently, with ``g(v)`` the smallest
``e_j`` over the leaves ``j`` below a node ``v``, ``rho(x, i)`` is the minimum of
``max(g(v), height(v))`` over the ancestors ``v`` of ``i``.  The points within
LLPD ``t`` of ``x`` are therefore the leaves of the "tops": for every training
point ``j`` with ``e_j <= t``, the highest ancestor of ``j`` whose height is at
most ``t``.  :func:`_walk` raises ``t`` through the events (the next first-hop
length, the next merge above a top), and every level adds the leaves of the new
tops that the old ones did not hold, all at LLPD ``t``, until ``k`` are found.

Only the first hops that can matter are looked at.  The ``k``-th LLPD is at
most the ``k``-th Euclidean distance (each of the ``k`` nearest points is
reached directly), so a hop longer than the ``(k + 1)``-th Euclidean neighbour's
cannot reach any of the ``k`` nearest; only when the ``k``-th LLPD equals that
distance (an exact tie) are all the points at that distance added (a radius
search) and the walk repeated.  The Euclidean neighbours come from a K-d tree
(:func:`geoforest.graph._kdtree.build_kdtree`), with squared distances summed
as the EMST engines sum them, so a training point given as a query reproduces
its training LLPDs exactly.

Cost per query: the K-d tree search, then ``O(L (k + m) + k d)`` for ``L``
levels and ``m`` first-hop candidates (``k + 1`` unless there is a tie), plus
the climb through the dendrogram.  The last level can hold many points tied at
one LLPD (a point joining a whole cluster at one height); with the Euclidean
tie-break the nearest of them are usually among the candidates (read off
directly), otherwise every tied point is scanned (``O(t d)`` for ``t`` tied
points, as for the training points); with the tree tie-break the scan stops
after the points needed.  Memory: ``O(n)`` workspace per chunk of queries,
never ``n x n``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._jit import njit
from ..graph._kdtree import (
    LEAF_SIZE,
    box_dist2,
    build_kdtree,
    insert_sorted,
    push_children,
    sq_dist,
)

__all__ = ["QUERY_CHUNK", "QueryIndex", "build_query_index", "llpd_query"]

#: Queries per call of the compiled kernel (one ``O(n)`` workspace per call).
QUERY_CHUNK = 4096


# ------------------------------------------------------------------ index
@njit(nogil=True, cache=True)
def _run_tops(parent, node_height):
    """``run_top[v]``: the highest ancestor of ``v`` (itself included) at ``v``'s height."""
    n_nodes = parent.shape[0]
    run_top = np.arange(n_nodes)
    for v in range(n_nodes - 1, -1, -1):  # parents have larger ids: top-down
        p = parent[v]
        if p >= 0 and node_height[p] == node_height[v]:
            run_top[v] = run_top[p]
    return run_top


class QueryIndex:
    """What out-of-sample LLPD queries need beyond the dendrogram (built once per model).

    Attributes
    ----------
    tree : tuple of ndarray
        K-d tree of the training points (points in tree order, the
        permutation, node ranges, children and bounding boxes).
    position : ndarray of shape (n,)
        Depth-first position of every leaf (``dendrogram.order`` inverted).
    run_top : ndarray of shape (2n - 1,)
        Highest ancestor at the same height, to climb runs of equal merges in one step.
    """

    def __init__(self, X: np.ndarray, dendrogram) -> None:
        Xp, perm, start, end, left, right, lo, hi, n_nodes = build_kdtree(X, LEAF_SIZE)
        self.tree = (
            Xp,
            perm,
            start[:n_nodes].copy(),
            end[:n_nodes].copy(),
            left[:n_nodes].copy(),
            right[:n_nodes].copy(),
            lo[:n_nodes].copy(),
            hi[:n_nodes].copy(),
        )
        self.position = np.empty(dendrogram.n_samples, np.int64)
        self.position[dendrogram.order] = np.arange(dendrogram.n_samples)
        self.run_top = _run_tops(dendrogram.parent, dendrogram.node_height)


def build_query_index(X: np.ndarray, dendrogram) -> QueryIndex:
    """The :class:`QueryIndex` of training points ``X`` and their dendrogram."""
    return QueryIndex(np.ascontiguousarray(X, dtype=np.float64), dendrogram)


# ------------------------------------------------------------------ first hops
@njit(nogil=True, cache=True)
def _knn_candidates(Xp, perm, start, end, left, right, lo, hi, x, m, cand_d2, cand_i, stack):
    """The ``m`` nearest training points of ``x``, sorted by (squared distance, index)."""
    d = Xp.shape[1]
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
            count = insert_sorted(sq_dist(x, Xp, u, d), perm[u], m, count, cand_d2, cand_i)
    return count


@njit(nogil=True, cache=True)
def _radius_candidates(Xp, perm, start, end, left, right, lo, hi, x, r2, buf_d2, buf_i, stack):
    """Every training point at squared distance ``<= r2`` from ``x``.

    They are written to ``buf_d2``/``buf_i`` sorted by (squared distance,
    index); returns how many.
    """
    d = Xp.shape[1]
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
            acc = sq_dist(x, Xp, u, d)
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


# ------------------------------------------------------------------ the walk
@njit(inline="always")
def _inside(node, p, start, node_size):
    return start[node] <= p < start[node] + node_size[node]


@njit(inline="always")
def _next_level(cand_e, c, m, tops, n_tops, parent, node_height):
    """The next LLPD level: the next first hop or the lowest merge above a top.

    Returns ``(t, has_event)``; ``has_event`` is false when neither is left.
    """
    t = np.inf
    has_event = False
    if c < m:
        t = cand_e[c]
        has_event = True
    for q in range(n_tops):
        p = parent[tops[q]]
        if p >= 0:
            has_event = True
            if node_height[p] < t:
                t = node_height[p]
    return t, has_event


@njit(inline="always")
def _climb(u, t, parent, node_height, run_top):
    """The highest ancestor of ``u`` (itself included) whose height is at most ``t``."""
    while parent[u] >= 0 and node_height[parent[u]] <= t:
        u = run_top[parent[u]]
    return u


@njit(inline="always")
def _tops_at_level(
    t, s, c, m, cand_i, cand_e, tops, n_tops, parent, node_height, run_top, start, node_size,
    position, mark, mark_q, climbed, new_tops, new_cov,
):  # fmt: skip
    """The tops at level ``t``: the old tops climbed, then the first hops new within ``t``.

    ``new_cov[q]`` counts the leaves of ``new_tops[q]`` the old tops held.
    Returns ``(n_new, c)``, ``c`` the first candidate not yet used.
    """
    n_new = 0
    for q in range(n_tops):
        u = _climb(tops[q], t, parent, node_height, run_top)
        climbed[q] = u
        if mark[u] != s:
            mark[u] = s
            mark_q[u] = n_new
            new_tops[n_new] = u
            new_cov[n_new] = 0
            n_new += 1
        new_cov[mark_q[u]] += node_size[tops[q]]
    while c < m and cand_e[c] <= t:
        j = cand_i[c]
        c += 1
        pj = position[j]
        covered = False
        for q in range(n_new):
            if _inside(new_tops[q], pj, start, node_size):
                covered = True  # the top holding j is j's highest ancestor within t
                break
        if covered:
            continue
        u = _climb(j, t, parent, node_height, run_top)
        mark[u] = s
        mark_q[u] = n_new
        new_tops[n_new] = u
        new_cov[n_new] = 0
        n_new += 1
    return n_new, c


@njit(inline="always")
def _fresh_candidates(
    take, m, cand_i, cand_d2, tops, n_tops, new_tops, n_new, start, node_size, position,
    sel_key, sel_i,
):  # fmt: skip
    """The first ``take`` candidates among the leaves new at this level, or 0 if too few.

    The candidates precede every other point in (distance, index), so when
    ``take`` of them are new they are the answer.
    """
    sel_n = 0
    for cc in range(m):
        pj = position[cand_i[cc]]
        fresh = False
        for q in range(n_new):
            if _inside(new_tops[q], pj, start, node_size):
                fresh = True
                break
        if not fresh:
            continue
        for q in range(n_tops):
            if _inside(tops[q], pj, start, node_size):
                fresh = False
                break
        if fresh:
            sel_key[sel_n] = cand_d2[cc]
            sel_i[sel_n] = cand_i[cc]
            sel_n += 1
            if sel_n == take:
                return sel_n
    return 0


@njit(inline="always")
def _scan_new_leaves(X, x, take, new_tops, new_cov, n_new, start, node_size, order, skip_to,
                     sel_key, sel_i):  # fmt: skip
    """Every leaf new at this level, ranked by (squared distance to ``x``, index)."""
    d = X.shape[1]
    sel_n = 0
    for q in range(n_new):
        top_node = new_tops[q]
        if node_size[top_node] == new_cov[q]:
            continue
        p = start[top_node]
        end = p + node_size[top_node]
        while p < end:
            if skip_to[p] >= 0:
                p = skip_to[p]
                continue
            j = order[p]
            p += 1
            sel_n = insert_sorted(sq_dist(x, X, j, d), j, take, sel_n, sel_key, sel_i)
    return sel_n


@njit(inline="always")
def _first_new_leaves(take, new_tops, new_cov, n_new, start, node_size, order, skip_to,
                      sel_key, sel_i):  # fmt: skip
    """The first ``take`` new leaves in depth-first order (the new tops sorted by position)."""
    for q in range(1, n_new):  # insertion sort of the tops by first position
        a, b = new_tops[q], new_cov[q]
        r = q
        while r > 0 and start[new_tops[r - 1]] > start[a]:
            new_tops[r] = new_tops[r - 1]
            new_cov[r] = new_cov[r - 1]
            r -= 1
        new_tops[r] = a
        new_cov[r] = b
    sel_n = 0
    for q in range(n_new):
        if sel_n == take:
            break
        top_node = new_tops[q]
        if node_size[top_node] == new_cov[q]:
            continue
        p = start[top_node]
        end = p + node_size[top_node]
        while p < end and sel_n < take:
            if skip_to[p] >= 0:
                p = skip_to[p]
                continue
            sel_key[sel_n] = p
            sel_i[sel_n] = order[p]
            sel_n += 1
            p += 1
    return sel_n


@njit(nogil=True, cache=True)
def _walk(
    X, x, cand_i, cand_d2, cand_e, m, k, parent, node_height, run_top, start, node_size, order,
    position, euclidean, skip_to, mark, mark_q, stamp, tops, climbed, new_tops, new_cov,
    sel_key, sel_i, out_d, out_i,
):  # fmt: skip
    """The ``k`` nearest training points of ``x`` in LLPD, first hops from ``cand_*``.

    ``cand_e`` are the first legs' lengths (ascending; ``sqrt(cand_d2)`` for
    Euclidean queries, the geometry's distances for a graph's), ``cand_d2``
    the keys of the Euclidean tie-break (read only when ``euclidean``).
    Exact when the candidates are every training point within the returned
    ``k``-th LLPD of ``x`` (or more), in (squared distance, index) order and
    prefix-complete (no other point precedes the last one in that order).
    ``skip_to`` (one entry per depth-first position, ``-1`` when unused) holds,
    at the first position of each active top, the position after its last
    leaf; it is all ``-1`` again on return.  ``stamp[0]`` numbers the levels
    (``mark``/``mark_q`` deduplicate the tops of a level).  Returns the
    ``k``-th LLPD.
    """
    n_tops = 0
    count = 0
    c = 0
    while count < k:
        t, has_event = _next_level(cand_e, c, m, tops, n_tops, parent, node_height)
        if not has_event:
            break
        stamp[0] += 1
        n_new, c = _tops_at_level(
            t, stamp[0], c, m, cand_i, cand_e, tops, n_tops, parent, node_height, run_top,
            start, node_size, position, mark, mark_q, climbed, new_tops, new_cov,
        )  # fmt: skip
        # ---- the leaves new at this level, all at LLPD t
        total_new = 0
        for q in range(n_new):
            total_new += node_size[new_tops[q]] - new_cov[q]
        if total_new > 0:
            take = min(k - count, total_new)
            sel_n = 0
            if euclidean and total_new > take:
                sel_n = _fresh_candidates(
                    take, m, cand_i, cand_d2, tops, n_tops, new_tops, n_new, start, node_size,
                    position, sel_key, sel_i,
                )  # fmt: skip
            if sel_n < take and euclidean:
                _scan_new_leaves(X, x, take, new_tops, new_cov, n_new, start, node_size, order,
                                 skip_to, sel_key, sel_i)  # fmt: skip
            elif sel_n < take:
                _first_new_leaves(take, new_tops, new_cov, n_new, start, node_size, order,
                                  skip_to, sel_key, sel_i)  # fmt: skip
            for r in range(take):
                out_d[count + r] = t
                out_i[count + r] = sel_i[r]
            count += take
        # ---- the new tops replace the old ones
        for q in range(n_tops):
            if climbed[q] != tops[q]:
                skip_to[start[tops[q]]] = -1
        for q in range(n_new):
            top_node = new_tops[q]
            skip_to[start[top_node]] = start[top_node] + node_size[top_node]
            tops[q] = top_node
        n_tops = n_new
    for q in range(n_tops):
        skip_to[start[tops[q]]] = -1
    return out_d[k - 1]


#: The buffers of :func:`_walk`, allocated once per block of queries.
WalkWorkspace = namedtuple(
    "WalkWorkspace",
    "skip_to mark mark_q stamp sel_key sel_i tops climbed new_tops new_cov",
)


@njit(nogil=True, cache=True)
def walk_workspace(n, n_nodes, k, width):
    """:func:`_walk`'s buffers for ``n`` points, ``n_nodes`` dendrogram nodes, ``k``
    neighbours and up to ``width`` first hops."""
    return WalkWorkspace(
        np.full(n, -1, np.int64),
        np.full(n_nodes, -1, np.int64),
        np.empty(n_nodes, np.int64),
        np.zeros(1, np.int64),
        np.empty(k),
        np.empty(k, np.int64),
        np.empty(width, np.int64),
        np.empty(width, np.int64),
        np.empty(width, np.int64),
        np.empty(width, np.int64),
    )


@njit(nogil=True, cache=True)
def _query_chunk(
    X, Q, k, Xp, perm, kd_start, kd_end, kd_left, kd_right, kd_lo, kd_hi,
    parent, node_height, run_top, start, node_size, order, position, euclidean,
):  # fmt: skip
    """LLPD ``k``-neighbours of every row of ``Q`` (see :func:`_walk`)."""
    n = X.shape[0]
    n_q = Q.shape[0]
    n_nodes = parent.shape[0]
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    m0 = min(k + 1, n)
    cand_d2 = np.empty(m0)
    cand_i = np.empty(m0, np.int64)
    stack = np.empty(kd_start.shape[0] + 1, np.int64)
    ws = walk_workspace(n, n_nodes, k, m0)
    skip_to, mark, mark_q, stamp = ws.skip_to, ws.mark, ws.mark_q, ws.stamp
    sel_key, sel_i, tops, climbed = ws.sel_key, ws.sel_i, ws.tops, ws.climbed
    new_tops, new_cov = ws.new_tops, ws.new_cov
    buf_d2 = np.empty(0)
    buf_i = np.empty(0, np.int64)
    for qi in range(n_q):
        x = Q[qi]
        m = _knn_candidates(
            Xp, perm, kd_start, kd_end, kd_left, kd_right, kd_lo, kd_hi, x, m0,
            cand_d2, cand_i, stack,
        )  # fmt: skip
        rho = _walk(
            X, x, cand_i, cand_d2, np.sqrt(cand_d2[:m]), m, k, parent, node_height, run_top,
            start, node_size, order, position, euclidean, skip_to, mark, mark_q, stamp, tops,
            climbed, new_tops, new_cov, sel_key, sel_i, dist[qi], ind[qi],
        )  # fmt: skip
        if m < n and rho >= np.sqrt(cand_d2[m - 1]):
            # A tie at the last candidate's distance: a point outside the candidates may
            # sit at exactly that distance.  Take every point a hair beyond it (a superset
            # is exact too) and walk again.
            if buf_i.shape[0] == 0:
                buf_d2 = np.empty(n)
                buf_i = np.empty(n, np.int64)
            m2 = _radius_candidates(
                Xp, perm, kd_start, kd_end, kd_left, kd_right, kd_lo, kd_hi, x,
                cand_d2[m - 1] * (1.0 + 1e-12), buf_d2, buf_i, stack,
            )  # fmt: skip
            _walk(
                X, x, buf_i, buf_d2, np.sqrt(buf_d2[:m2]), m2, k, parent, node_height, run_top,
                start, node_size, order, position, euclidean, skip_to, mark, mark_q, stamp,
                np.empty(m2, np.int64), np.empty(m2, np.int64), np.empty(m2, np.int64),
                np.empty(m2, np.int64), sel_key, sel_i, dist[qi], ind[qi],
            )  # fmt: skip
    return dist, ind


def llpd_query(
    X: np.ndarray, Q: np.ndarray, k: int, dendrogram, index: QueryIndex, *, euclidean: bool
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
    dendrogram : Dendrogram
        Of ``X``.
    index : QueryIndex
        Of ``X`` and ``dendrogram``.
    euclidean : bool
        Ties in LLPD broken by Euclidean distance to the query, then index
        (``True``), or by depth-first position in the dendrogram.

    Returns
    -------
    dist, ind : ndarray of shape (n_queries, k)
    """
    t = dendrogram
    n_q = Q.shape[0]
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    for lo in range(0, n_q, QUERY_CHUNK):
        hi = min(lo + QUERY_CHUNK, n_q)
        dist[lo:hi], ind[lo:hi] = _query_chunk(
            X, np.ascontiguousarray(Q[lo:hi]), int(k), *index.tree, t.parent, t.node_height,
            index.run_top, t.start, t.node_size, t.order, index.position, bool(euclidean),
        )  # fmt: skip
    return dist, ind
