"""Single-linkage dendrogram of a minimum spanning tree, and the LLPD computed on it.

The longest-leg path distance between two points is the height of their
lowest common ancestor in the single-linkage dendrogram (the cophenetic
distance), so everything LLPD needs is a pass over the dendrogram's flat
arrays:

* k-th LLPD neighbour distance of every point: one top-down pass, ``O(n)``;
* ``W @ x`` with ``W_ij = exp(-rho_ij^2 / sigma^2)``: one bottom-up pass (subtree
  sums) and one top-down pass (what each node's ancestors contribute),
  ``O(n m)`` for ``m`` vectors;
* the ``k`` LLPD neighbours of a point: a walk up its ancestors, collecting the
  leaves of each new sibling subtree;
* all pairs (only on request): ``O(n^2)``.

Node numbering follows scipy's linkage format: leaves ``0 .. n-1``, merge
``i`` (in order of non-decreasing height) creates node ``n + i``, so children
always have smaller ids than their parent.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._jit import njit
from ..graph.kernels import find_root, insert_sorted, sq_dist

__all__ = ["DENDROGRAM_DTYPE", "Dendrogram", "single_linkage"]

#: One row per merge: the two merged nodes (``left < right``), the merge height
#: (an MST edge length, the LLPD between any point below ``left`` and any point
#: below ``right``) and the number of points below the new node.
DENDROGRAM_DTYPE = np.dtype(
    [("left", np.int64), ("right", np.int64), ("height", np.float64), ("size", np.int64)]
)


# ------------------------------------------------------------------ construction
@njit(nogil=True, cache=True)
def _union_find_merges(n, edges):
    """scipy-style merges from MST edges already sorted by weight."""
    uf = np.arange(n)
    node_of = np.arange(n)  # dendrogram node of each union-find root
    size = np.ones(2 * n - 1, np.int64)
    left = np.empty(n - 1, np.int64)
    right = np.empty(n - 1, np.int64)
    for i in range(n - 1):
        ra = find_root(uf, edges[i, 0])
        rb = find_root(uf, edges[i, 1])
        a, b = node_of[ra], node_of[rb]
        left[i], right[i] = (a, b) if a < b else (b, a)
        size[n + i] = size[a] + size[b]
        uf[ra] = rb
        node_of[rb] = n + i
    return left, right, size


@njit(nogil=True, cache=True)
def _leaf_layout(n, left, right, size):
    """Parent of every node, and the leaves in depth-first order.

    ``order[start[v] : start[v] + size[v]]`` are the leaves below node ``v``.
    """
    parent = np.full(2 * n - 1, -1, np.int64)
    start = np.zeros(2 * n - 1, np.int64)
    for i in range(n - 1):
        parent[left[i]] = n + i
        parent[right[i]] = n + i
    for i in range(n - 2, -1, -1):
        s = start[n + i]
        start[left[i]] = s
        start[right[i]] = s + size[left[i]]
    order = np.empty(n, np.int64)
    for leaf in range(n):
        order[start[leaf]] = leaf
    return parent, start, order


def single_linkage(n_samples: int, weights: np.ndarray, edges: np.ndarray) -> Dendrogram:
    """The single-linkage dendrogram of a spanning tree.

    Parameters
    ----------
    n_samples : int
        Number of points ``n``.
    weights : ndarray of shape (n - 1,)
        Edge weights, non-decreasing.
    edges : ndarray of shape (n - 1, 2)
        Edge end points (any order within a row).

    Returns
    -------
    Dendrogram
    """
    n = int(n_samples)
    weights = np.asarray(weights, dtype=np.float64)
    edges = np.ascontiguousarray(edges, dtype=np.int64)
    if n < 1 or weights.shape != (n - 1,) or edges.shape != (n - 1, 2):
        raise ValueError("a spanning tree of n points has n - 1 edges")
    if np.any(weights[1:] < weights[:-1]):
        raise ValueError("edge weights must be sorted (non-decreasing)")
    left, right, size = _union_find_merges(n, edges)
    merges = np.empty(n - 1, dtype=DENDROGRAM_DTYPE)
    merges["left"], merges["right"] = left, right
    merges["height"], merges["size"] = weights, size[n:]
    return Dendrogram(merges)


class Dendrogram:
    """A single-linkage dendrogram as flat arrays.

    Parameters
    ----------
    merges : ndarray of dtype :data:`DENDROGRAM_DTYPE`, shape (n - 1,)
        Row ``i`` merges nodes ``left`` and ``right`` (leaves are ``0 .. n-1``,
        merge ``i`` creates node ``n + i``) at ``height`` into a node of
        ``size`` points.  Heights are non-decreasing.

    Attributes
    ----------
    merges : structured ndarray
        As given (fields ``left``, ``right``, ``height``, ``size``).
    n_samples : int
    parent : ndarray of shape (2n - 1,)
        Parent node of every node (``-1`` for the root).
    order : ndarray of shape (n,)
        Leaves in depth-first order: the leaves below node ``v`` are
        ``order[start[v] : start[v] + node_size[v]]``.
    start : ndarray of shape (2n - 1,)
    node_size : ndarray of shape (2n - 1,)
        Points below every node (1 for a leaf).
    node_height : ndarray of shape (2n - 1,)
        Height of every node (0 for a leaf).

    Examples
    --------
    >>> import numpy as np
    >>> tree = single_linkage(3, np.array([1.0, 2.0]), np.array([[0, 2], [1, 2]]))
    >>> tree.merges
    array([(0, 2, 1., 2), (1, 3, 2., 3)],
          dtype=[('left', '<i8'), ('right', '<i8'), ('height', '<f8'), ('size', '<i8')])
    >>> tree.to_scipy_linkage()
    array([[0., 2., 1., 2.],
           [1., 3., 2., 3.]])
    """

    def __init__(self, merges: np.ndarray) -> None:
        merges = np.asarray(merges)
        if merges.dtype != DENDROGRAM_DTYPE or merges.ndim != 1:
            raise ValueError("merges must be a 1-d array of dtype DENDROGRAM_DTYPE")
        self.merges = merges
        n = merges.shape[0] + 1
        self.n_samples = n
        self.left = np.ascontiguousarray(merges["left"])
        self.right = np.ascontiguousarray(merges["right"])
        self.heights = np.ascontiguousarray(merges["height"])
        self.node_size = np.concatenate([np.ones(n, np.int64), merges["size"]])
        self.node_height = np.concatenate([np.zeros(n), self.heights])
        self.parent, self.start, self.order = _leaf_layout(n, self.left, self.right, self.node_size)

    def __repr__(self) -> str:
        return f"Dendrogram(n_samples={self.n_samples})"

    def __len__(self) -> int:
        return self.merges.shape[0]

    def to_scipy_linkage(self) -> np.ndarray:
        """The linkage matrix of :func:`scipy.cluster.hierarchy.linkage`.

        Returns
        -------
        Z : ndarray of shape (n - 1, 4), float64
            Columns: the two merged cluster ids (smaller first), the merge
            height and the size of the new cluster; usable with
            :func:`scipy.cluster.hierarchy.fcluster`, ``cophenet``,
            ``dendrogram``.
        """
        Z = np.empty((len(self), 4), dtype=np.float64)
        Z[:, 0], Z[:, 1] = self.left, self.right
        Z[:, 2], Z[:, 3] = self.heights, self.merges["size"]
        return Z

    def to_pandas(self):
        """The merges as a :class:`pandas.DataFrame` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.merges)

    def cut(self, height: float) -> np.ndarray:
        """Flat clusters: points joined by merges at or below ``height``.

        Parameters
        ----------
        height : float
            Cut height, ``>= 0`` (merge heights are distances): ``0`` joins
            only duplicate points, ``inf`` joins every point (also points an
            approximation left at infinite height).

        Returns
        -------
        labels : ndarray of shape (n_samples,), int
            Cluster ids ``0, 1, ...`` numbered by first appearance.

        Raises
        ------
        TypeError
            ``height`` is not a real number.
        ValueError
            ``height`` is NaN or negative.
        """
        rep = _cut_labels(self.parent, self.node_height, _check_height(height))
        labels = rep[: self.n_samples]
        _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        rank = np.empty(first.size, dtype=np.intp)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return rank[inverse]


def _check_height(height) -> float:
    """``height`` as a float in ``[0, inf]``; NaN (every comparison false) and negatives refused."""
    if isinstance(height, bool) or not isinstance(height, numbers.Real):
        raise TypeError(f"height must be a real number in [0, inf], got {height!r}")
    value = float(height)
    if not value >= 0:  # NaN fails too
        raise ValueError(f"height must be in [0, inf] (a distance at which to cut), got {height!r}")
    return value


@njit(nogil=True, cache=True)
def _cut_labels(parent, node_height, height):
    """Representative node of every leaf's cluster when merges above ``height`` are undone."""
    rep = np.empty(parent.shape[0], np.int64)
    for node in range(parent.shape[0] - 1, -1, -1):  # parents before children
        p = parent[node]
        rep[node] = rep[p] if p >= 0 and node_height[p] <= height else node
    return rep


# ------------------------------------------------------------------ LLPD kernels
@njit(nogil=True, cache=True)
def kth_neighbor_heights(n, left, right, node_size, heights, k):
    """LLPD from every point to its k-th LLPD neighbour (itself excluded).

    That is the height of the lowest ancestor holding at least ``k + 1``
    points; a top-down pass gives it to every node in ``O(n)``.
    """
    val = np.empty(2 * n - 1)
    val[2 * n - 2] = heights[n - 2]
    for i in range(n - 2, -1, -1):
        for c in (left[i], right[i]):
            if c >= n and node_size[c] >= k + 1:
                val[c] = heights[c - n]
            else:
                val[c] = val[n + i]
    return val[:n]


@njit(nogil=True, cache=True)
def affinity_matmat(n, left, right, weight, X, out):
    """``out = W @ X`` with ``W_ij = weight[LCA(i, j)]`` and ``W_ii = 1``.

    ``weight[i]`` is the kernel value of merge ``i``.  ``buf[i]`` first holds
    the sum of ``X`` over the leaves of node ``n + i`` (bottom-up), then, going
    top-down, what the ancestors of node ``n + i`` contribute to each of its
    leaves: ``sum_v weight[v] * (sum of X below the sibling of the path)``.
    A node's subtree sum is read by its parent before the slot is overwritten.
    """
    m = X.shape[1]
    if n == 1:
        for j in range(m):
            out[0, j] = X[0, j]
        return out
    buf = np.empty((n - 1, m))
    for i in range(n - 1):
        a, b = left[i], right[i]
        for j in range(m):
            sa = X[a, j] if a < n else buf[a - n, j]
            sb = X[b, j] if b < n else buf[b - n, j]
            buf[i, j] = sa + sb
    for j in range(m):
        buf[n - 2, j] = 0.0
    for i in range(n - 2, -1, -1):
        a, b = left[i], right[i]
        w = weight[i]
        for j in range(m):
            sa = X[a, j] if a < n else buf[a - n, j]
            sb = X[b, j] if b < n else buf[b - n, j]
            acc = buf[i, j]
            if a < n:
                out[a, j] = X[a, j] + acc + w * sb
            else:
                buf[a - n, j] = acc + w * sb
            if b < n:
                out[b, j] = X[b, j] + acc + w * sa
            else:
                buf[b - n, j] = acc + w * sa
    return out


@njit(nogil=True, cache=True)
def cophenetic_matrix(n, left, right, heights, start, node_size, order):
    """Dense LLPD matrix (``n x n``), filled block by block from each merge."""
    D = np.zeros((n, n))
    for i in range(n - 1):
        a, b = left[i], right[i]
        h = heights[i]
        for p in range(start[a], start[a] + node_size[a]):
            u = order[p]
            for q in range(start[b], start[b] + node_size[b]):
                v = order[q]
                D[u, v] = h
                D[v, u] = h
    return D


@njit(nogil=True, cache=True)
def llpd_kneighbors(X, k, parent, node_height, start, node_size, order, queries, euclidean):
    """The ``k`` LLPD neighbours of each query point (a training index).

    Walking up from the leaf, each run of ancestors at one height adds the
    leaves of its new part, all at that LLPD.  Within one LLPD, neighbours are
    ranked by Euclidean distance then index (``euclidean``; every tied point is
    scanned, ``O(t d)`` for ``t`` tied points), or by depth-first position in
    the dendrogram (``O(k)``).  The point itself is excluded.
    """
    d = X.shape[1]
    n_q = queries.shape[0]
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    sel_d2 = np.empty(k)
    sel_i = np.empty(k, np.int64)
    for qi in range(n_q):
        i = queries[qi]
        x = X[i]
        count = 0
        below = i
        while count < k:
            top = parent[below]
            h = node_height[top]
            while parent[top] >= 0 and node_height[parent[top]] == h:
                top = parent[top]
            s0, s1 = start[top], start[top] + node_size[top]
            b0, b1 = start[below], start[below] + node_size[below]
            need = min(k - count, (s1 - s0) - (b1 - b0))
            if not euclidean:
                p = s0
                for _ in range(need):
                    if p == b0:
                        p = b1
                    dist[qi, count] = h
                    ind[qi, count] = order[p]
                    count += 1
                    p += 1
                below = top
                continue
            # Keep the `need` smallest (squared distance, index) pairs, sorted, by insertion.
            m = 0
            for p in range(s0, s1):
                if b0 <= p < b1:
                    continue
                j = order[p]
                m = insert_sorted(sq_dist(x, X, j, d), j, need, m, sel_d2, sel_i)
            for c in range(need):
                dist[qi, count] = h
                ind[qi, count] = sel_i[c]
                count += 1
            below = top
    return dist, ind


def affinity_operator(t: Dendrogram, weight: np.ndarray) -> LinearOperator:
    """``x -> W x``, ``W_ij`` the ``weight`` of the merge joining ``i`` and ``j`` (``W_ii = 1``)."""
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
