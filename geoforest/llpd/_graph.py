"""LLPD over a geometry's neighbour graph: its minimum spanning tree, its new points.

Over a graph, the longest-leg path distance of two points is the minimax path
distance: the smallest, over the graph's paths joining them, of the longest
edge, i.e. the largest edge on the path joining them in the graph's minimum
spanning tree.  With ``metric="forest"`` the graph is the symmetrised
``n_neighbors``-NN graph of the geometry (:mod:`geoforest.graph`), edge lengths
the geometry's distances (an edge listed by both end points at two lengths
counts at the shorter), its components joined by ``geometry.bridges`` (a
minimum spanning forest in the same metric); with ``metric="precomputed"`` it
is the user's graph as given (every stored entry an edge), and the components
it leaves apart are joined at infinite height: their points are at LLPD
``inf``, as in the m-scale approximation.  :func:`graph_tree` builds the tree
(Kruskal over the edges sorted by length, ties by end points), on which the
single-linkage dendrogram and every LLPD query run unchanged.

A new point joins the graph by its edges to the training points (its
``n_neighbors`` nearest in the geometry; for ``"precomputed"`` the stored
entries of its row), so ``rho(x, y) = min_j max(d(x, j), rho(j, y))`` over those
first hops ``j``: the dendrogram walk of :mod:`geoforest.llpd._dendrogram_walk`
with these first hops (:func:`graph_query`), exact, ``O(L (k + m))`` per query
for ``L`` LLPD levels, ``k`` neighbours and ``m`` first hops, never ``n x n``.
Ties in LLPD go by depth-first position in the dendrogram (a graph has no
coordinates to rank tied points by).

:class:`SubsetGeometry` is a fitted geometry restricted to some of its
training points (LLPD spectral clustering's kept points): the neighbour lists
of the same metric with the other points left out, never a refit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._jit import njit
from ..graph._geometry import Geometry, sorted_rows
from ..graph._knn import check_query_graph
from ..graph._unionfind import find_root
from ._dendrogram_walk import FirstHops, dendrogram_walk, walk_index, walk_workspace

__all__ = [
    "SubsetGeometry",
    "graph_query",
    "graph_tree",
    "mscale_tree",
    "query_hops",
    "spanning_tree",
]


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


def join_at_infinity(weights, pairs, roots):
    """A spanning forest's trees joined into one tree by edges of infinite length."""
    comps = np.unique(roots)
    if comps.size > 1:
        bridges = np.stack([comps[:-1], comps[1:]], axis=1)
        weights = np.concatenate([weights, np.full(comps.size - 1, np.inf)])
        pairs = np.concatenate([pairs, bridges])
    return weights, pairs


def spanning_tree(n: int, rows, cols, lengths) -> tuple[np.ndarray, np.ndarray]:
    """Minimum spanning tree of an undirected graph given by its edges (Kruskal).

    Parameters
    ----------
    n : int
        Number of vertices.
    rows, cols : array-like of int
        End points of every edge (either direction; self-loops are ignored; an
        edge given twice counts at its shorter length).
    lengths : array-like of float
        Non-negative lengths.

    Returns
    -------
    weights : ndarray of shape (n - 1,)
        Non-decreasing; ``inf`` for the edges joining the graph's components.
    edges : ndarray of shape (n - 1, 2)
        ``(i, j)`` with ``i < j`` for the graph's edges; equal lengths go to
        the smaller end points, so the tree is unique.

    Examples
    --------
    >>> w, e = spanning_tree(4, [0, 1, 0, 2], [1, 2, 2, 0], [1.0, 2.0, 5.0, 3.0])
    >>> w, e.tolist()
    (array([ 1.,  2., inf]), [[0, 1], [1, 2], [2, 3]])
    """
    pairs = np.stack([np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)], 1)
    pairs.sort(axis=1)
    w = np.asarray(lengths, dtype=np.float64)
    loop = pairs[:, 0] == pairs[:, 1]
    pairs, w = pairs[~loop], w[~loop]
    order = np.lexsort((pairs[:, 1], pairs[:, 0], w))
    w, pairs = w[order], np.ascontiguousarray(pairs[order])
    keep, roots = _kruskal(int(n), w, pairs)
    return join_at_infinity(w[keep], pairs[keep], roots)


def mscale_tree(X: np.ndarray, n_neighbors: int, n_scales: int):
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
    return spanning_tree(n, pairs[:, 0], pairs[:, 1], w)  # components at infinite height


def graph_tree(geometry: Geometry, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """The minimum spanning tree of a fitted geometry's graph (module docstring)."""
    n = geometry.n_samples_
    if geometry.metric == "precomputed":
        G = geometry.graph_.tocoo()
        return spanning_tree(n, G.row, G.col, G.data)
    dist, ind = geometry.neighbors(int(n_neighbors))
    rows = np.repeat(np.arange(n), ind.shape[1])
    pattern = sp.csr_matrix((np.ones(ind.size), (rows, ind.ravel())), shape=(n, n))
    pairs, lengths = geometry.bridges(pattern + pattern.T, (dist, ind))
    return spanning_tree(
        n,
        np.concatenate([rows, pairs[:, 0]]),
        np.concatenate([ind.ravel(), pairs[:, 1]]),
        np.concatenate([dist.ravel(), lengths]),
    )


# ------------------------------------------------------------------ new points
def query_hops(geometry: Geometry, X, n_neighbors: int, estimator):
    """The first hops of new points into a geometry's graph, ascending.

    Returns ``(dist, ind, counts)``: rows padded with ``inf`` (index 0) past
    ``counts[q]`` hops.  For ``"precomputed"``, ``X`` holds the rows of
    distances from the new points to the training points: every stored entry
    of a sparse row is a hop, every entry of a dense one (a 0 is a copy of
    that training point, at LLPD 0 from it).
    """
    if geometry.metric != "precomputed":
        dist, ind = geometry.query(X, int(n_neighbors))
        dist = np.ascontiguousarray(dist, dtype=np.float64)
        counts = np.isfinite(dist).sum(axis=1).astype(np.int64)  # padding at inf comes last
        return dist, np.ascontiguousarray(ind, dtype=np.int64), counts
    G = check_query_graph(X, geometry.n_samples_, "distance graph", estimator)
    if not sp.issparse(X):  # a dense row: every entry is an edge, a 0 too (a copy)
        D = np.asarray(X, dtype=np.float64)
        ind = np.argsort(D, axis=1, kind="stable")
        counts = np.full(D.shape[0], D.shape[1], dtype=np.int64)
        return np.take_along_axis(D, ind, axis=1), ind.astype(np.int64), counts
    return sorted_rows(G)


@njit(nogil=True, cache=True)
def _graph_query_chunk(hop_d, hop_i, counts, k, index):
    """LLPD ``k``-neighbours of new points from their first hops (ties: dendrogram order).

    ``index`` is the :class:`~geoforest.llpd._dendrogram_walk.WalkIndex` of the dendrogram.
    """
    n = index.order.shape[0]
    n_q, width = hop_d.shape
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), np.int64)
    X = np.empty((1, 0))  # coordinates: read by the Euclidean tie-break only
    ws = walk_workspace(n, index.parent.shape[0], k, width)
    for qi in range(n_q):
        m = counts[qi]
        if m == 0:  # no edge into the graph: every training point at LLPD inf
            dist[qi, :] = np.inf
            ind[qi, :] = index.order[:k]
            continue
        hops = FirstHops(hop_i[qi], hop_d[qi], hop_d[qi], m)
        dendrogram_walk(X, X[0], hops, k, False, index, ws, dist[qi], ind[qi])
    return dist, ind


def graph_query(dendrogram, hops, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(dist, ind)`` of shape (n_queries, k): exact LLPD neighbours through the first hops.

    ``hops`` is :func:`query_hops`'s ``(dist, ind, counts)``.
    """
    hop_d, hop_i, counts = hops
    if hop_d.shape[0] == 0:
        return np.empty((0, k)), np.empty((0, k), dtype=np.int64)
    return _graph_query_chunk(hop_d, hop_i, counts, int(k), walk_index(dendrogram))


# ------------------------------------------------------------------ kept points
class SubsetGeometry(Geometry):
    """A fitted geometry restricted to some of its training points, never refitted.

    Neighbour lists are the base geometry's with the other points left out
    (read deeper where too few kept points are listed), so the kept points'
    ``k``-NN graph and its bridges are those of the same metric on the kept
    points alone.  Indices are positions among the kept points.

    Parameters
    ----------
    base : Geometry
        Fitted, ``"euclidean"`` or ``"forest"``.
    rows : ndarray of int
        The kept training points, increasing.
    X : ndarray
        The base geometry's training data (for deeper lists).
    """

    def __init__(self, base: Geometry, rows: np.ndarray, X) -> None:
        self.base = base
        self.metric = base.metric
        self.rows = np.asarray(rows, dtype=np.int64)
        self.X = X
        self.n_samples_ = int(self.rows.size)
        self.position = np.full(base.n_samples_, -1, dtype=np.int64)
        self.position[self.rows] = np.arange(self.rows.size)

    def fit(self, X=None) -> SubsetGeometry:
        return self

    def _kept(self, dist, ind, k, exclude, pad):
        """The first ``k`` kept entries of every row, padded with ``(inf, pad)``.

        ``exclude``: each row's own point (not its own neighbour), or None.
        """
        pos = self.position[ind]
        ok = pos >= 0
        if exclude is not None:
            ok &= ind != exclude[:, None]
        out_d = np.full((ind.shape[0], k), np.inf)
        out_i = np.repeat(np.asarray(pad, dtype=np.int64)[:, None], k, axis=1)
        counts = np.zeros(ind.shape[0], dtype=np.int64)
        for r in range(ind.shape[0]):
            sel = np.flatnonzero(ok[r])[:k]
            out_d[r, : sel.size], out_i[r, : sel.size] = dist[r, sel], pos[r, sel]
            counts[r] = sel.size
        return out_d, out_i, counts

    def _deeper(self, Q, k, exclude, pad, found, depth):
        """Rows still short of ``k`` kept neighbours, read again from lists twice as deep."""
        n_base = self.base.n_samples_
        d, i, counts = found
        pending = np.flatnonzero(counts < k)
        while pending.size and depth < n_base:
            depth = min(2 * depth, n_base)
            qd, qi = self.base.query(Q[pending], depth)
            ex = None if exclude is None else exclude[pending]
            pd, pi, pc = self._kept(qd, qi, k, ex, pad[pending])
            d[pending], i[pending], counts[pending] = pd, pi, pc
            pending = pending[pc < k]
        return d, i

    def neighbors(self, k: int):
        k = min(int(k), self.n_samples_ - 1)
        depth = min(2 * k, self.base.n_samples_ - 1)
        dist, ind = self.base.neighbors(depth)
        pad = np.arange(self.n_samples_)
        found = self._kept(dist[self.rows], ind[self.rows], k, None, pad)
        return self._deeper(self.X[self.rows], k, self.rows, pad, found, depth + 1)

    def _lists(self, rows, k):
        k = min(int(k), self.n_samples_ - 1)
        rows = np.asarray(rows, dtype=np.int64)
        base_rows = self.rows[rows]
        # Deep enough to hold k kept points when the left-out ones are spread evenly.
        depth = min(-(-(k + 1) * self.base.n_samples_ // self.n_samples_), self.base.n_samples_)
        qd, qi = self.base.query(self.X[base_rows], depth)
        found = self._kept(qd, qi, k, base_rows, rows)
        return self._deeper(self.X[base_rows], k, base_rows, rows, found, depth)

    def query(self, X, k: int):
        k = min(int(k), self.n_samples_)
        depth = min(k, self.base.n_samples_)
        qd, qi = self.base.query(X, depth)
        pad = np.zeros(qd.shape[0], dtype=np.int64)
        found = self._kept(qd, qi, k, None, pad)
        return self._deeper(np.asarray(X), k, None, pad, found, depth)
