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
``inf``, as in the m-scale approximation.  The geometry builds the tree
(:meth:`geoforest.graph.Geometry.spanning_tree`: Kruskal over the edges
sorted by length, ties by end points), on which the single-linkage dendrogram
and every LLPD query run unchanged.

A new point joins the graph by its edges to the training points (its
``n_neighbors`` nearest in the geometry; for ``"precomputed"`` the stored
entries of its row), so ``rho(x, y) = min_j max(d(x, j), rho(j, y))`` over those
first hops ``j``: the dendrogram walk of :mod:`geoforest.llpd._dendrogram_walk`
with these first hops (:func:`graph_query`, the hops from
:meth:`geoforest.graph.Geometry.query_edges`), exact, ``O(L (k + m))`` per query
for ``L`` LLPD levels, ``k`` neighbours and ``m`` first hops, never ``n x n``.
Ties in LLPD go by depth-first position in the dendrogram (a graph has no
coordinates to rank tied points by).

LLPD spectral clustering's kept points use the same fitted geometry on those
points alone (:meth:`geoforest.graph.Geometry.subset`), never a refit.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit
from ..graph import spanning_tree
from ._dendrogram_walk import FirstHops, dendrogram_walk, walk_index, walk_workspace

__all__ = ["graph_query", "mscale_tree"]


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


# ------------------------------------------------------------------ new points
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
