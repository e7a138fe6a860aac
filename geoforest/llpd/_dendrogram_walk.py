"""LLPD from a new point to the training points, given its first hops: the dendrogram walk.

A path from a new point ``x`` into the training set enters it at some first
point ``j`` (a leg of length ``e_j``: ``||x - x_j||`` for Euclidean queries, the
geometry's distance for a graph's) and continues through the training points,
so

    rho(x, i) = min over j of max(e_j, rho(j, i))

with ``rho(j, i)`` the height of the lowest common ancestor of ``j`` and ``i``
in the single-linkage dendrogram.  Equivalently, with ``g(v)`` the smallest
``e_j`` over the leaves ``j`` below a node ``v``, ``rho(x, i)`` is the minimum of
``max(g(v), height(v))`` over the ancestors ``v`` of ``i``.  The points within
LLPD ``t`` of ``x`` are therefore the leaves of the "tops": for every first hop
``j`` with ``e_j <= t``, the highest ancestor of ``j`` whose height is at most
``t``.  :func:`dendrogram_walk` raises ``t`` through the events (the next
first-hop length, the next merge above a top), and every level adds the leaves
of the new tops that the old ones did not hold, all at LLPD ``t``, until ``k``
are found.

Cost per query: ``O(L (k + m))`` for ``L`` levels and ``m`` first hops, plus
the climb through the dendrogram.  The last level can hold many points tied at
one LLPD (a point joining a whole cluster at one height); with the Euclidean
tie-break the nearest of them are usually among the first hops (read off
directly), otherwise every tied point is scanned (``O(t d)`` for ``t`` tied
points, as for the training points); with the tree tie-break the scan stops
after the points needed.  Memory: the ``O(n)`` :class:`WalkWorkspace`, reused
by every query of a chunk.

The arguments travel in three named tuples, built once per chunk of queries
(:class:`WalkIndex`, :class:`WalkWorkspace`) or per query (:class:`FirstHops`);
the steps of one level are inlined into the walk, so reading a field costs no
call.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._engine.borrow import borrowed
from .._jit import njit
from ..graph.kernels import insert_sorted, sq_dist

__all__ = [
    "FirstHops",
    "WalkIndex",
    "WalkWorkspace",
    "dendrogram_walk",
    "walk_index",
    "walk_workspace",
    "widened",
]

#: The dendrogram as the walk reads it (:func:`walk_index`): the
#: :class:`~geoforest.llpd._dendrogram.Dendrogram`'s ``parent``,
#: ``node_height``, ``start``, ``node_size`` and ``order``, with ``run_top``
#: (the highest ancestor at a node's height, to climb runs of equal merges in
#: one step) and ``position`` (every leaf's depth-first position, ``order``
#: inverted).
WalkIndex = namedtuple("WalkIndex", "parent node_height run_top start node_size order position")

#: A query's first hops into the training points: their indices ``ind`` in
#: ascending ``length`` (the first legs), the keys of the Euclidean tie-break
#: ``key`` (squared distances, read only by a Euclidean walk) and how many are
#: used, ``count``.
FirstHops = namedtuple("FirstHops", "ind key length count")

#: The buffers of :func:`dendrogram_walk` (:func:`walk_workspace`).
WalkWorkspace = namedtuple(
    "WalkWorkspace",
    "skip_to mark mark_q stamp sel_key sel_i tops climbed new_tops new_cov",
)


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


def walk_index(dendrogram) -> WalkIndex:
    """The :class:`WalkIndex` of a dendrogram (``O(n)``, once per model)."""
    t = dendrogram
    position = np.empty(t.n_samples, np.int64)
    position[t.order] = np.arange(t.n_samples)
    run_top = _run_tops(t.parent, t.node_height)
    return WalkIndex(t.parent, t.node_height, run_top, t.start, t.node_size, t.order, position)


@njit(nogil=True, cache=True)
def walk_workspace(n, n_nodes, k, width):
    """The buffers of a walk over ``n`` points, ``n_nodes`` dendrogram nodes, ``k``
    neighbours and up to ``width`` first hops.

    ``skip_to`` (one entry per depth-first position, ``-1`` when unused) holds,
    at the first position of each active top, the position after its last
    leaf; every walk leaves it all ``-1``.  ``stamp[0]`` numbers the levels
    (``mark``/``mark_q`` deduplicate the tops of a level); ``sel_key`` and
    ``sel_i`` rank the leaves new at a level; ``tops``, ``climbed``,
    ``new_tops`` and ``new_cov`` hold one entry per top (at most one per first
    hop).
    """
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


@njit(inline="always")
def widened(ws, width):
    """``ws`` with its per-top buffers replaced by new ones for ``width`` first hops."""
    return WalkWorkspace(
        ws.skip_to,
        ws.mark,
        ws.mark_q,
        ws.stamp,
        ws.sel_key,
        ws.sel_i,
        np.empty(width, np.int64),
        np.empty(width, np.int64),
        np.empty(width, np.int64),
        np.empty(width, np.int64),
    )


# ------------------------------------------------------------------ one level
# The steps below are inlined into the walk.  Each reads the fields of the bundles it
# needs into locals once, at its top: a field read, or a bundle passed, inside a loop
# would count references to its arrays at every turn.
@njit(inline="always")
def _inside(node, p, start, node_size):
    """Whether depth-first position ``p`` is a leaf below ``node``."""
    return start[node] <= p < start[node] + node_size[node]


@njit(inline="always")
def _next_level(hops, c, n_tops, index, ws):
    """The next LLPD level: the next first hop or the lowest merge above a top.

    Returns ``(t, has_event)``; ``has_event`` is false when neither is left.
    """
    parent, node_height, tops = index.parent, index.node_height, ws.tops
    t = np.inf
    has_event = False
    if c < hops.count:
        t = hops.length[c]
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
def _tops_at_level(t, c, hops, n_tops, index, ws):
    """The tops at level ``t``: the old tops climbed, then the first hops new within ``t``.

    ``ws.new_cov[q]`` counts the leaves of ``ws.new_tops[q]`` the old tops held.
    Returns ``(n_new, c)``, ``c`` the first hop not yet used.
    """
    parent, node_height, run_top = index.parent, index.node_height, index.run_top
    start, node_size, position = index.start, index.node_size, index.position
    tops, climbed, new_tops, new_cov = ws.tops, ws.climbed, ws.new_tops, ws.new_cov
    mark, mark_q = ws.mark, ws.mark_q
    hop_ind, hop_len, m = hops.ind, hops.length, hops.count
    s = ws.stamp[0]
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
    while c < m and hop_len[c] <= t:
        j = hop_ind[c]
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


# ------------------------------------------------------------------ the new leaves
@njit(inline="always")
def _fresh_candidates(take, hops, n_tops, n_new, index, ws):
    """The first ``take`` first hops among the leaves new at this level, or 0 if too few.

    The first hops precede every other point in (distance, index), so when
    ``take`` of them are new they are the answer.
    """
    start, node_size, position = index.start, index.node_size, index.position
    tops, new_tops, sel_key, sel_i = ws.tops, ws.new_tops, ws.sel_key, ws.sel_i
    hop_ind, hop_key = hops.ind, hops.key
    sel_n = 0
    for cc in range(hops.count):
        pj = position[hop_ind[cc]]
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
            sel_key[sel_n] = hop_key[cc]
            sel_i[sel_n] = hop_ind[cc]
            sel_n += 1
            if sel_n == take:
                return sel_n
    return 0


@njit(inline="always")
def _scan_new_leaves(X, x, take, n_new, index, ws):
    """Every leaf new at this level, ranked by (squared distance to ``x``, index)."""
    start, node_size, order = index.start, index.node_size, index.order
    new_tops, new_cov, skip_to = ws.new_tops, ws.new_cov, ws.skip_to
    sel_key, sel_i = ws.sel_key, ws.sel_i
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
def _first_new_leaves(take, n_new, index, ws):
    """The first ``take`` new leaves in depth-first order (the new tops sorted by position)."""
    start, node_size, order = index.start, index.node_size, index.order
    new_tops, new_cov, skip_to = ws.new_tops, ws.new_cov, ws.skip_to
    sel_key, sel_i = ws.sel_key, ws.sel_i
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


@njit(inline="always")
def _replace_tops(n_tops, n_new, index, ws):
    """The new tops replace the old ones (and their ``skip_to`` entries); returns their count."""
    start, node_size = index.start, index.node_size
    tops, climbed, new_tops, skip_to = ws.tops, ws.climbed, ws.new_tops, ws.skip_to
    for q in range(n_tops):
        if climbed[q] != tops[q]:
            skip_to[start[tops[q]]] = -1
    for q in range(n_new):
        top_node = new_tops[q]
        skip_to[start[top_node]] = start[top_node] + node_size[top_node]
        tops[q] = top_node
    return n_new


# ------------------------------------------------------------------ the walk
@njit(nogil=True, cache=True)
def dendrogram_walk(X, x, hops, k, euclidean, index, ws, out_d, out_i):
    """The ``k`` nearest training points of ``x`` in LLPD, from its first hops.

    Writes them to ``out_d``/``out_i`` and returns the ``k``-th LLPD.
    ``hops`` (:class:`FirstHops`) is exact when it holds every training point
    within the returned ``k``-th LLPD of ``x`` (or more), in (squared distance,
    index) order and prefix-complete (no other point precedes the last one in
    that order).  ``X``/``x`` (the coordinates) and ``hops.key`` are read only
    when ``euclidean`` (ties in LLPD by Euclidean distance, then index;
    otherwise by depth-first position).  ``index`` is the :class:`WalkIndex`,
    ``ws`` a :class:`WalkWorkspace` whose per-top buffers hold ``hops.count``.
    """
    # The caller holds the bundles' arrays: read through views it does not count.
    hops, index, ws = borrowed(hops), borrowed(index), borrowed(ws)
    start, node_size = index.start, index.node_size
    stamp, tops, new_tops, new_cov = ws.stamp, ws.tops, ws.new_tops, ws.new_cov
    sel_i, skip_to = ws.sel_i, ws.skip_to
    n_tops = 0
    count = 0
    c = 0
    while count < k:
        t, has_event = _next_level(hops, c, n_tops, index, ws)
        if not has_event:
            break
        stamp[0] += 1
        n_new, c = _tops_at_level(t, c, hops, n_tops, index, ws)
        total_new = 0  # the leaves new at this level, all at LLPD t
        for q in range(n_new):
            total_new += node_size[new_tops[q]] - new_cov[q]
        if total_new > 0:
            take = min(k - count, total_new)
            # Rank the first `take` new leaves into ws.sel_i.  Euclidean tie-break: from the
            # first hops when enough of them are new, else by scanning every new leaf; tree
            # tie-break: in depth-first order.
            sel_n = 0
            if euclidean and total_new > take:
                sel_n = _fresh_candidates(take, hops, n_tops, n_new, index, ws)
            if sel_n < take and euclidean:
                _scan_new_leaves(X, x, take, n_new, index, ws)
            elif sel_n < take:
                _first_new_leaves(take, n_new, index, ws)
            for r in range(take):
                out_d[count + r] = t
                out_i[count + r] = sel_i[r]
            count += take
        n_tops = _replace_tops(n_tops, n_new, index, ws)
    for q in range(n_tops):
        skip_to[start[tops[q]]] = -1
    return out_d[k - 1]
