"""Joining the connected components of a graph by a minimum spanning forest between them.

A kNN graph of data with background noise usually falls into several
connected components (groups of noise points whose neighbours are each
other).  On a disconnected graph the top eigenvalue 1 of a random walk is
repeated once per component, the leading eigenvectors are the components'
indicator-like Perron vectors, and a component of a dozen noise points is as
far from everything as a whole cluster.  :func:`bridge_components` joins the
components by the edges of a minimum spanning forest between them (Borůvka
rounds over the components, the engine of the exact Euclidean MST), so the
graph is connected.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ._boruvka import boruvka_forest, no_neighbor_lists
from ._kdtree import LEAF_SIZE
from ._weights import check_lists

__all__ = ["bridge_components"]


def bridge_components(
    X: np.ndarray, G: sp.csr_matrix, neighbors: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Edges of a minimum spanning forest joining the connected components of ``G``.

    Borůvka rounds: every component adds its shortest Euclidean edge to a
    point outside it; components merge; repeat until one is left.  The
    edges are those of the Euclidean minimum spanning tree of the quotient,
    so ``c - 1`` edges join ``c`` components.  Equal lengths are ordered by
    the end points (the smaller end point, then the larger), so the forest
    is unique.  The engine is the component-pruned K-d tree Borůvka of the
    exact Euclidean MST (:mod:`geoforest.graph._boruvka`), started from the
    components of ``G`` instead of single points.

    With ``neighbors`` (every point's nearest neighbours, ascending, e.g.
    the lists the graph was built from), a component's shortest edge is read
    from its members' lists when that is provably exact: the shortest
    outside candidate found is no longer than the last listed distance of
    every member whose list holds no outside point.  Other components search
    the K-d tree.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    G : sparse matrix of shape (n, n)
    neighbors : tuple of ndarray (dist, ind) of shape (n, k), optional

    Raises
    ------
    ValueError
        ``X`` not 2-d, finite and real; ``G`` not square over ``X``'s rows;
        ``neighbors`` of another shape than ``(n, k)`` each, or indices outside
        ``[0, n)``.

    Returns
    -------
    pairs : ndarray of shape (m, 2) of int
        Bridge end points ``(i, j)``, ``i < j``, ``m = components - 1``; by
        Borůvka round, then by length, then by end points.
    lengths : ndarray of shape (m,)
        Their Euclidean lengths (as listed in ``neighbors`` for the edges
        read from there).
    """
    X, G, neighbors = _check_inputs(X, G, neighbors)
    n_comp, component = connected_components(G, directed=False)
    if n_comp == 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    n = X.shape[0]
    # Union-find forest of the components: every point points at its component's first point.
    first = np.empty(n_comp, dtype=np.int64)
    first[component[::-1]] = np.arange(n - 1, -1, -1)
    uf = first[component]
    if neighbors is None:
        lists = no_neighbor_lists()
    else:
        dist, ind = neighbors
        lists = (
            np.ascontiguousarray(dist, dtype=np.float64),
            np.ascontiguousarray(ind, dtype=np.int64),
        )
    lengths, pairs, rounds = boruvka_forest(X, LEAF_SIZE, uf, *lists)
    order = np.lexsort((pairs[:, 1], pairs[:, 0], lengths, rounds))
    return pairs[order].astype(np.intp), lengths[order]


def _check_inputs(X, G, neighbors):
    """``bridge_components``' inputs, refused with a message rather than deep in SciPy."""
    if np.iscomplexobj(X) or (sp.issparse(G) and np.iscomplexobj(G.data)):
        raise ValueError("bridge_components takes real coordinates and a real graph")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be a 2-d (n, d) array of points, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must be finite")
    n = X.shape[0]
    if not sp.issparse(G):
        G = np.asarray(G)
    if G.ndim != 2 or G.shape != (n, n):
        raise ValueError(f"G must be a square ({n}, {n}) graph over X's rows, got {G.shape}")
    if neighbors is not None:
        dist, ind = neighbors
        ind = check_lists(ind, n, "neighbors' indices")
        dist = np.asarray(dist, dtype=np.float64)
        if dist.shape != ind.shape:
            raise ValueError(
                f"neighbors' distances and indices must have one shape, got {dist.shape} "
                f"and {ind.shape}"
            )
        neighbors = (dist, ind)
    return X, G, neighbors
