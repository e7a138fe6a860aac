"""Exact Euclidean minimum spanning trees.

Two exact engines, chosen by dimension (``method="auto"``):

``"kdtree"``
    :func:`quitefastmst.mst_euclid` (sesqui-tree Borůvka over a K-d tree,
    OpenMP-parallel).  quitefastmst's trees exist for ``2 <= d <= 20`` only.
``"boruvka"``
    Our Borůvka over a K-d tree with *component pruning* (numba): each round
    finds, for every component, its exact shortest edge to another component
    (the nearest "alien" point of each of its points, a subtree whose points
    all belong to the query's component is skipped, and the search radius is
    the component's best edge so far).  Any dimension; exact.
``"brute"``
    quitefastmst's Jarník-Prim with distances computed on the fly, run on one
    OpenMP thread (its per-vertex synchronisation made two threads 200x slower
    on a shared machine): ``O(n^2 d)`` time, ``O(n)`` memory, exact in any
    dimension.

``"auto"`` uses ``"kdtree"`` for ``2 <= d <= AUTO_KDTREE_MAX_DIM``,
``"brute"`` above and ``"boruvka"`` for ``d = 1``; measured with
``benchmarks/bench_emst.py`` (docs/benchmarks.md): above d = 20 the
single-thread Prim beat our Borůvka on every data set tried, uniform and LDLN
(clusters of dimension 1-2 plus uniform background noise), up to n = 40,000
(e.g. LDLN, d = 100, n = 40,000: 65 s against 109 s) — uniform background
noise in many dimensions defeats the tree's pruning.  A kNN graph alone is not used: it is usually
disconnected and its spanning forest need not be part of the Euclidean MST.

All engines return the same tree up to the choice among equal-weight edges,
hence the same total weight and the same single-linkage dendrogram heights.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._jit import njit

__all__ = ["AUTO_KDTREE_MAX_DIM", "euclidean_mst"]

#: ``method="auto"`` uses quitefastmst's K-d tree up to this dimension, Prim above (measured).
AUTO_KDTREE_MAX_DIM = 20
#: Points per leaf of our K-d tree.
LEAF_SIZE = 16

EmstMethod = Literal["auto", "kdtree", "boruvka", "brute"]
_METHODS = ("auto", "kdtree", "boruvka", "brute")


# --------------------------------------------------------------------- K-d tree
@njit(nogil=True, cache=True)
def _build_kdtree(X, leaf_size):
    """K-d tree with tight bounding boxes, split at the midpoint of the widest side.

    Returns ``(Xp, perm, start, end, left, right, lo, hi, n_nodes)``: ``Xp`` the
    points in tree order (``Xp[t] = X[perm[t]]``), node ``v`` holds tree
    positions ``start[v]:end[v]``, children ``left[v]``/``right[v]`` (``-1`` at
    a leaf), box ``lo[v], hi[v]``.  Nodes are numbered in pre-order (a parent
    before its children).
    """
    n, d = X.shape
    cap = 2 * n + 1
    perm = np.arange(n)
    start = np.empty(cap, np.int64)
    end = np.empty(cap, np.int64)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    lo = np.empty((cap, d))
    hi = np.empty((cap, d))
    stack = np.empty(cap, np.int64)
    start[0] = 0
    end[0] = n
    n_nodes = 1
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        s, e = start[v], end[v]
        for k in range(d):
            lo[v, k] = X[perm[s], k]
            hi[v, k] = X[perm[s], k]
        for t in range(s + 1, e):
            for k in range(d):
                x = X[perm[t], k]
                if x < lo[v, k]:
                    lo[v, k] = x
                elif x > hi[v, k]:
                    hi[v, k] = x
        if e - s <= leaf_size:
            continue
        dim = 0
        width = -1.0
        for k in range(d):
            if hi[v, k] - lo[v, k] > width:
                width = hi[v, k] - lo[v, k]
                dim = k
        if width <= 0.0:  # all points identical: a leaf of any size
            continue
        mid = 0.5 * (lo[v, dim] + hi[v, dim])
        i, j = s, e - 1
        while i <= j:
            if X[perm[i], dim] < mid:
                i += 1
            else:
                perm[i], perm[j] = perm[j], perm[i]
                j -= 1
        if i == s or i == e:  # rounding put every point on one side: split in half
            i = (s + e) // 2
        a = n_nodes
        b = n_nodes + 1
        n_nodes += 2
        left[v] = a
        right[v] = b
        start[a], end[a] = s, i
        start[b], end[b] = i, e
        stack[top] = b
        stack[top + 1] = a
        top += 2
    Xp = np.empty((n, d))
    for t in range(n):
        for k in range(d):
            Xp[t, k] = X[perm[t], k]
    return Xp, perm, start, end, left, right, lo, hi, n_nodes


@njit(inline="always")
def _box_dist2(x, lo, hi, v, d):
    acc = 0.0
    for k in range(d):
        if x[k] < lo[v, k]:
            t = lo[v, k] - x[k]
            acc += t * t
        elif x[k] > hi[v, k]:
            t = x[k] - hi[v, k]
            acc += t * t
    return acc


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
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        nxt = parent[i]
        parent[i] = root
        i = nxt
    return root


@njit(nogil=True, cache=True)
def _boruvka_kdtree(X, leaf_size):
    """Exact EMST by Borůvka rounds over a component-pruned K-d tree.

    Returns ``(weights, edges)``: ``n - 1`` edges in original indices, in the
    order they were added (unsorted).
    """
    n, d = X.shape
    Xp, perm, start, end, left, right, lo, hi, n_nodes = _build_kdtree(X, leaf_size)
    uf = np.arange(n)  # union-find over original indices
    comp = np.empty(n, np.int64)  # component (root) of each tree position
    node_comp = np.empty(n_nodes, np.int64)
    lower = np.zeros(n)  # lower bound on each position's squared nearest-alien distance
    best_d2 = np.empty(n)
    best_a = np.empty(n, np.int64)
    best_b = np.empty(n, np.int64)
    stack = np.empty(n_nodes + 1, np.int64)
    weights = np.empty(max(n - 1, 0))
    edges = np.empty((max(n - 1, 0), 2), np.int64)
    n_edges = 0
    while n_edges < n - 1:
        for t in range(n):
            comp[t] = _find(uf, perm[t])
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
        best_d2[:] = np.inf
        best_a[:] = -1
        best_b[:] = -1
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
                if _box_dist2(x, lo, hi, v, d) > best_d2[c]:
                    continue
                if left[v] >= 0:
                    # Visit the nearer child first: push it last.
                    da = _box_dist2(x, lo, hi, left[v], d)
                    db = _box_dist2(x, lo, hi, right[v], d)
                    if da <= db:
                        stack[top] = right[v]
                        stack[top + 1] = left[v]
                    else:
                        stack[top] = left[v]
                        stack[top + 1] = right[v]
                    top += 2
                    continue
                for u in range(start[v], end[v]):
                    if comp[u] == c:
                        continue
                    acc = 0.0
                    for k in range(d):
                        diff = x[k] - Xp[u, k]
                        acc += diff * diff
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
        for t in range(n):
            c = comp[t]
            if perm[t] != c or best_a[c] < 0:
                continue
            ra = _find(uf, best_a[c])
            rb = _find(uf, best_b[c])
            if ra == rb:  # the other component chose the same edge
                continue
            uf[ra] = rb
            weights[n_edges] = np.sqrt(best_d2[c])
            edges[n_edges, 0] = min(best_a[c], best_b[c])
            edges[n_edges, 1] = max(best_a[c], best_b[c])
            n_edges += 1
    return weights, edges


# --------------------------------------------------------------------- public
def _resolve_method(method: str, d: int) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if method == "auto":
        if d == 1:
            return "boruvka"
        return "kdtree" if d <= AUTO_KDTREE_MAX_DIM else "brute"
    if method == "kdtree" and not 2 <= d <= AUTO_KDTREE_MAX_DIM:
        raise ValueError(
            f"method='kdtree' (quitefastmst) supports 2 <= d <= {AUTO_KDTREE_MAX_DIM}, "
            f"got d={d}; use 'boruvka' or 'brute'"
        )
    return method


def euclidean_mst(X, *, method: EmstMethod = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Exact Euclidean minimum spanning tree of a point set.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite points (converted to float64, C order); duplicates allowed.
    method : {"auto", "kdtree", "boruvka", "brute"}, default="auto"
        Engine, see the module docstring.  ``"auto"``: quitefastmst's K-d tree
        for ``2 <= d <= 20``, its single-thread Prim above, our Borůvka for
        ``d = 1``.

    Returns
    -------
    weights : ndarray of shape (n_samples - 1,), float64
        Edge lengths, non-decreasing.
    edges : ndarray of shape (n_samples - 1, 2), int64
        End points of each edge, ``edges[i, 0] < edges[i, 1]``; ties in weight
        are ordered by the end points (lexicographically).

    Examples
    --------
    >>> import numpy as np
    >>> weights, edges = euclidean_mst(np.array([[0.0, 0.0], [3.0, 0.0], [1.0, 0.0]]))
    >>> weights
    array([1., 2.])
    >>> edges
    array([[0, 2],
           [1, 2]])
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X.shape}")
    n, d = X.shape
    if n == 0:
        raise ValueError("X has no points")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    if n == 1:
        return np.zeros(0), np.zeros((0, 2), dtype=np.int64)
    resolved = _resolve_method(method, d)
    if resolved == "boruvka":
        weights, edges = _boruvka_kdtree(X, LEAF_SIZE)
    else:
        import quitefastmst

        if resolved == "brute":
            # Jarník-Prim synchronises its OpenMP threads once per added vertex; with a
            # second thread that has to share a core, that took 45 s instead of 0.2 s
            # (n = 10^4, d = 5) here.  One thread, restored afterwards.
            threads = quitefastmst.omp_get_max_threads()
            quitefastmst.omp_set_num_threads(1)
            try:
                weights, edges = quitefastmst.mst_euclid(X, algorithm="brute")
            finally:
                quitefastmst.omp_set_num_threads(threads)
        else:
            weights, edges = quitefastmst.mst_euclid(X, algorithm="auto")
        weights = np.asarray(weights, dtype=np.float64)
        edges = np.asarray(edges, dtype=np.int64)
    edges = np.sort(edges, axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0], weights))
    return np.ascontiguousarray(weights[order]), np.ascontiguousarray(edges[order])
