"""The K-d tree of the EMST and of the out-of-sample LLPD queries, and its search steps.

:func:`build_kdtree` stores the tree as flat arrays (points in tree order,
node ranges, children, tight bounding boxes).  The searches over it
(:func:`geoforest.graph._boruvka.boruvka_forest`'s nearest point of another
component, :mod:`geoforest.llpd._out_of_sample`'s nearest training points)
share the steps below: the box distance that prunes a node, the squared
distance summed coordinate by coordinate (one summation order everywhere, so
a training point given as a query reproduces its training distances
bit for bit), the descent that visits the nearer child first, and the sorted
insertion that keeps the best candidates.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._jit import njit

__all__ = [
    "LEAF_SIZE",
    "KDTree",
    "box_dist2",
    "build_kdtree",
    "insert_sorted",
    "kdtree",
    "push_children",
    "sq_dist",
]

#: Points per leaf of the K-d tree.
LEAF_SIZE = 16

#: :func:`build_kdtree`'s arrays cut to its nodes, one argument of a search
#: (:func:`kdtree`).
KDTree = namedtuple("KDTree", "points perm start end left right lo hi")


@njit(nogil=True, cache=True)
def build_kdtree(X, leaf_size):
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


def kdtree(X: np.ndarray, leaf_size: int = LEAF_SIZE) -> KDTree:
    """The :class:`KDTree` of ``X`` (float64, C order), its node arrays trimmed to size."""
    points, perm, start, end, left, right, lo, hi, n_nodes = build_kdtree(X, leaf_size)
    nodes = (a[:n_nodes].copy() for a in (start, end, left, right, lo, hi))
    return KDTree(points, perm, *nodes)


@njit(inline="always")
def box_dist2(x, lo, hi, v, d):
    """Squared distance from ``x`` to the bounding box of node ``v`` (0 inside it)."""
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
def sq_dist(x, Y, u, d):
    """Squared Euclidean distance from ``x`` to row ``u`` of ``Y``."""
    acc = 0.0
    for t in range(d):
        diff = x[t] - Y[u, t]
        acc += diff * diff
    return acc


@njit(inline="always")
def push_children(x, lo, hi, left, right, v, d, stack, top):
    """Push the children of inner node ``v``, the nearer to ``x`` last (popped first).

    Returns the new stack height.
    """
    da = box_dist2(x, lo, hi, left[v], d)
    db = box_dist2(x, lo, hi, right[v], d)
    if da <= db:
        stack[top] = right[v]
        stack[top + 1] = left[v]
    else:
        stack[top] = left[v]
        stack[top + 1] = right[v]
    return top + 2


@njit(inline="always")
def insert_sorted(key, j, take, count, keys, ids):
    """Keep the ``take`` smallest pairs ``(key, j)`` in ``keys``/``ids``, sorted.

    ``count`` pairs are held; returns the new count.  Ties in ``key`` go to the
    lower ``j``.
    """
    if count == take and (key > keys[take - 1] or key == keys[take - 1] and j > ids[take - 1]):
        return count
    pos = count if count < take else take - 1
    while pos > 0 and (key < keys[pos - 1] or key == keys[pos - 1] and j < ids[pos - 1]):
        keys[pos] = keys[pos - 1]
        ids[pos] = ids[pos - 1]
        pos -= 1
    keys[pos] = key
    ids[pos] = j
    return count + 1 if count < take else count
