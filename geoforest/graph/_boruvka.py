"""Borůvka's minimum spanning forest over a K-d tree with component pruning.

One kernel serves both users:

* the exact Euclidean MST (:func:`geoforest.graph.euclidean_mst`,
  ``method="boruvka"``) starts from every point on its own;
* the bridges of a kNN graph in pieces (:func:`geoforest.graph.bridge_components`)
  start from the graph's connected components and join them.

A round finds, for every component, its shortest edge to another component:
every point searches the K-d tree for its nearest point of another component
("alien"), skipping subtrees whose points all belong to its own component and
pruning at the component's best edge so far; then the chosen edges are
united.  Rounds repeat until one component is left.  Edges are compared by a
strict total order (squared length, then the smaller end point, then the
larger), so the forest is unique even with ties in length.

Neighbour lists (each point's nearest neighbours, ascending) can stand in for
the tree search of a component when that is provably exact: the shortest
outside edge read from the members' lists (ties to the lower member) is no
longer than the last listed distance of every member whose list holds no
outside point.  An edge read from the lists keeps its listed length, and
stands unless the tree search of a component that was not proven finds a
strictly shorter one (lists computed another way, e.g. by a brute-force
search, may round a length differently).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ._kdtree import box_dist2, build_kdtree, push_children, sq_dist
from ._unionfind import find_root

__all__ = ["boruvka_forest", "no_neighbor_lists"]


@njit(inline="always")
def _pair_less(d2, a, b, best_d2, best_a, best_b):
    """Strict total order on edges: squared length, then (min index, max index)."""
    lo_, hi_ = (a, b) if a < b else (b, a)
    if d2 != best_d2:
        return d2 < best_d2
    blo, bhi = (best_a, best_b) if best_a < best_b else (best_b, best_a)
    if lo_ != blo:
        return lo_ < blo
    return hi_ < bhi


@njit(inline="always")
def _node_components(comp, start, end, left, right, n_nodes, node_comp):
    """``node_comp[v]``: the component of every point below node ``v``, or ``-1`` if mixed."""
    for v in range(n_nodes - 1, -1, -1):  # children after parents: reverse is bottom-up
        if left[v] < 0:
            c = comp[start[v]]
            for t in range(start[v] + 1, end[v]):
                if comp[t] != c:
                    c = -1
                    break
            node_comp[v] = c
        else:
            a = node_comp[left[v]]
            node_comp[v] = a if a == node_comp[right[v]] else -1


@njit(inline="always")
def _edges_from_lists(comp, position, nb_dist, nb_ind, best_d2, list_a, list_b, list_len):
    """Every component's shortest outside edge in its members' lists; marks the proven ones.

    The edge (ties to the lower member) goes to ``list_a``/``list_b`` with its
    listed length in ``list_len`` (``list_a = -1``: none listed).  A proven
    component gets ``best_d2 = -1``, so its points skip the tree search.
    """
    n, k = nb_ind.shape
    list_len[:] = np.inf
    list_a[:] = -1
    bound = np.full(n, np.inf)
    for i in range(n):
        c = comp[position[i]]
        outside = False
        for col in range(k):
            j = nb_ind[i, col]
            if comp[position[j]] != c:
                if nb_dist[i, col] < list_len[c]:
                    list_len[c] = nb_dist[i, col]
                    list_a[c] = i
                    list_b[c] = j
                outside = True
                break
        # A member without an outside neighbour is at least its last listed distance away.
        if not outside and nb_dist[i, k - 1] < bound[c]:
            bound[c] = nb_dist[i, k - 1]
    for i in range(n):
        c = comp[position[i]]
        if c == i and list_a[c] >= 0 and list_len[c] <= bound[c]:
            best_d2[c] = -1.0


@njit(nogil=True, cache=True)
def boruvka_forest(X, leaf_size, uf, nb_dist, nb_ind):
    """Minimum spanning forest joining the components of the union-find forest ``uf``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
    leaf_size : int
        Points per leaf of the K-d tree.
    uf : ndarray of shape (n,), int64
        Union-find parents of the starting components (``arange(n)``: every
        point alone); united in place.
    nb_dist, nb_ind : ndarray of shape (n, k), or (0, 0) for none
        Neighbour lists (ascending distances), see the module docstring.

    Returns
    -------
    weights : ndarray of shape (c - 1,)
        Edge lengths, in the order the edges were added, for ``c`` starting
        components.
    edges : ndarray of shape (c - 1, 2), int64
        End points, smaller first.
    rounds : ndarray of shape (c - 1,), int64
        The Borůvka round (from 0) that added each edge.
    """
    n, d = X.shape
    Xp, perm, start, end, left, right, lo, hi, n_nodes = build_kdtree(X, leaf_size)
    use_lists = nb_ind.shape[0] > 0
    n_sets = 0
    for i in range(n):
        if find_root(uf, i) == i:
            n_sets += 1
    n_out = max(n_sets - 1, 0)
    position = np.empty(n, np.int64)  # tree position of each point
    for t in range(n):
        position[perm[t]] = t
    comp = np.empty(n, np.int64)  # component (root) of each tree position
    node_comp = np.empty(n_nodes, np.int64)
    lower = np.zeros(n)  # lower bound on each position's squared nearest-alien distance
    best_d2 = np.empty(n)
    best_a = np.empty(n, np.int64)
    best_b = np.empty(n, np.int64)
    list_a = np.full(n, -1, np.int64)  # per component: its edge read from the lists
    list_b = np.empty(n, np.int64)
    list_len = np.empty(n)
    seen = np.full(n, -1, np.int64)  # the last round that merged each component
    edge_of = np.empty(n, np.int64)  # the edge each component added this round
    stack = np.empty(n_nodes + 1, np.int64)
    weights = np.empty(n_out)
    edges = np.empty((n_out, 2), np.int64)
    rounds = np.empty(n_out, np.int64)
    n_edges = 0
    n_round = 0
    while n_edges < n_out:
        for t in range(n):
            comp[t] = find_root(uf, perm[t])
        _node_components(comp, start, end, left, right, n_nodes, node_comp)
        best_d2[:] = np.inf
        best_a[:] = -1
        best_b[:] = -1
        edge_of[:] = -1
        if use_lists:
            _edges_from_lists(comp, position, nb_dist, nb_ind, best_d2, list_a, list_b, list_len)
        for t in range(n):
            c = comp[t]
            if lower[t] > best_d2[c]:
                continue
            x = Xp[t]
            top = 1
            stack[0] = 0
            found = np.inf
            while top > 0:
                top -= 1
                v = stack[top]
                if node_comp[v] == c:
                    continue
                if box_dist2(x, lo, hi, v, d) > best_d2[c]:
                    continue
                if left[v] >= 0:
                    top = push_children(x, lo, hi, left, right, v, d, stack, top)
                    continue
                for u in range(start[v], end[v]):
                    if comp[u] == c:
                        continue
                    acc = sq_dist(x, Xp, u, d)
                    if acc < found:
                        found = acc
                    if acc <= best_d2[c] and _pair_less(
                        acc, perm[t], perm[u], best_d2[c], best_a[c], best_b[c]
                    ):
                        best_d2[c] = acc
                        best_a[c] = perm[t]
                        best_b[c] = perm[u]
            # Components only grow, so the nearest-alien distance never shrinks: what this
            # search proved (the distance found, or the radius it was pruned at) bounds it.
            lower[t] = min(found, best_d2[c])
        # Components in the order of their first point; an edge two components chose
        # gets the length the later one found.
        for i in range(n):
            c = comp[position[i]]
            if seen[c] == n_round:
                continue
            seen[c] = n_round
            a, b, w2 = best_a[c], best_b[c], best_d2[c]
            # A listed edge stands unless the tree found a strictly shorter one.
            listed = use_lists and list_a[c] >= 0 and (w2 < 0 or list_len[c] <= np.sqrt(w2))
            if listed:
                a, b = list_a[c], list_b[c]
            elif a < 0:
                continue
            w = list_len[c] if listed else np.sqrt(w2)
            lo_, hi_ = min(a, b), max(a, b)
            ra = find_root(uf, a)
            rb = find_root(uf, b)
            if ra == rb:
                e = edge_of[comp[position[b]]]  # the other component chose this edge
                if e >= 0 and edges[e, 0] == lo_ and edges[e, 1] == hi_:
                    weights[e] = w
                continue
            uf[ra] = rb
            weights[n_edges] = w
            edges[n_edges, 0] = lo_
            edges[n_edges, 1] = hi_
            rounds[n_edges] = n_round
            edge_of[c] = n_edges
            n_edges += 1
        n_round += 1
    return weights, edges, rounds


def no_neighbor_lists() -> tuple[np.ndarray, np.ndarray]:
    """The ``(nb_dist, nb_ind)`` arguments of :func:`boruvka_forest` for no lists."""
    return np.empty((0, 0)), np.empty((0, 0), np.int64)
