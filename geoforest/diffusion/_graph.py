"""Sparse kNN Gaussian graphs for diffusion: neighbours, kernel, connected components.

A kNN graph of data with background noise usually falls into several
connected components (groups of noise points whose neighbours are each
other).  On a disconnected graph the top eigenvalue 1 of the diffusion
operator is repeated once per component, the leading eigenvectors are the
components' indicator-like Perron vectors, and a component of a dozen noise
points is as far from everything as a whole cluster at every time ``t``.
:func:`bridge_components` joins the components by the edges of a minimum
spanning forest between them (Borůvka rounds over the components, exact
nearest pairs from K-d trees), so the diffusion graph is connected.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.neighbors import KDTree, NearestNeighbors

__all__ = ["bridge_components", "gaussian_knn_graph", "knn", "spatial_knn", "symmetrize"]

#: A component this small looks for its nearest outside point among the
#: ``size + 1`` nearest neighbours of its points in one tree of all points.
_SMALL_COMPONENT = 256
#: Bridges get the kernel weight of their length, but at least this.
BRIDGE_MIN_WEIGHT = float(np.exp(-1.0))


def knn(
    X: np.ndarray, n_neighbors: int, nn: NearestNeighbors | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean ``n_neighbors`` nearest neighbours of every row, itself excluded.

    ``nn``, a :class:`~sklearn.neighbors.NearestNeighbors` already fitted on
    ``X``, saves building another tree (build it with ``n_neighbors=n_neighbors
    + 1``: its ``algorithm="auto"`` choice depends on that).

    Returns
    -------
    dist, ind : ndarray of shape (n, n_neighbors)
        Ascending distances and indices; ties to the lower index, and the row
        itself is removed even when duplicates tie with it.
    """
    n = X.shape[0]
    if nn is None:
        nn = NearestNeighbors(n_neighbors=n_neighbors + 1).fit(X)
    dist, ind = nn.kneighbors(X, n_neighbors=n_neighbors + 1)
    # Drop the row itself (or, for exact duplicates, keep k others).
    is_self = ind == np.arange(n)[:, None]
    has_self = is_self.any(axis=1)
    keep = ~is_self
    keep[~has_self, -1] = False
    return dist[keep].reshape(n, n_neighbors), ind[keep].reshape(n, n_neighbors)


def symmetrize(G: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """``max(G, G^T)`` as CSR with sorted indices, diagonal removed."""
    G = sp.csr_matrix(G, dtype=np.float64)
    S = G.maximum(G.T).tocsr()
    S.setdiag(0.0)
    S.eliminate_zeros()
    S.sort_indices()
    return S


def gaussian_knn_graph(dist: np.ndarray, ind: np.ndarray, sigma: float) -> sp.csr_matrix:
    """Symmetric kNN graph with weights ``exp(-d^2 / sigma^2)`` (union of the kNN sets)."""
    n, k = ind.shape
    w = np.exp(-((dist / sigma) ** 2))
    # A weight that underflows would silently drop an edge of the kNN graph.
    w = np.maximum(w, np.finfo(np.float64).tiny)
    G = sp.csr_matrix((w.ravel(), ind.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    return symmetrize(G)


def _from_lists(component, n_comp, neighbors, best_d, best_i, best_j) -> np.ndarray:
    """Shortest outside edges from neighbour lists; the components where that is exact."""
    dist, ind = neighbors
    outside = component[ind] != component[:, None]
    found = outside.any(axis=1)
    col = np.argmax(outside, axis=1)
    rows = np.flatnonzero(found)
    _keep_best(component[rows], dist[rows, col[rows]], rows, ind[rows, col[rows]], best_d,
               best_i, best_j)  # fmt: skip
    # A member without an outside neighbour is at least its last listed distance away.
    bound = np.full(n_comp, np.inf)
    miss = np.flatnonzero(~found)
    np.minimum.at(bound, component[miss], dist[miss, -1])
    return best_d <= bound


def _shortest_outgoing(
    X: np.ndarray,
    tree: KDTree | None,
    component: np.ndarray,
    n_comp: int,
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[tuple[float, int, int]]:
    """For every component, its shortest edge ``(d, i, j)`` to a point outside it.

    Components of at most ``_SMALL_COMPONENT`` points are handled in batches
    by size (powers of two): the first outside point of a member is among its
    ``size + 1`` nearest neighbours in the tree of all points.  Larger ones
    query a K-d tree of the points outside them.
    """
    sizes = np.bincount(component, minlength=n_comp)
    best_d = np.full(n_comp, np.inf)
    best_i = np.zeros(n_comp, dtype=np.intp)
    best_j = np.zeros(n_comp, dtype=np.intp)
    n = X.shape[0]
    todo = np.ones(n_comp, dtype=bool)
    if neighbors is not None:
        todo = ~_from_lists(component, n_comp, neighbors, best_d, best_i, best_j)
        if not todo.any():
            return [(float(best_d[c]), int(best_i[c]), int(best_j[c])) for c in range(n_comp)]
        if tree is None:
            tree = KDTree(X)
    small_size = np.where(todo[component], sizes[component], 0)
    lo = 0
    cap = 1
    while lo < _SMALL_COMPONENT:
        rows = np.flatnonzero((small_size > lo) & (small_size <= cap))
        lo, cap = cap, 2 * cap
        if rows.size == 0:
            continue
        k = min(lo + 1, n)
        dist, ind = tree.query(X[rows], k=k)
        dist = np.where(component[ind] != component[rows][:, None], dist, np.inf)
        col = np.argmin(dist, axis=1)
        d = dist[np.arange(rows.size), col]
        _keep_best(component[rows], d, rows, ind[np.arange(rows.size), col], best_d, best_i,
                   best_j)  # fmt: skip
    for c in np.flatnonzero((sizes > _SMALL_COMPONENT) & todo):
        members = np.flatnonzero(component == c)
        rest = np.flatnonzero(component != c)
        dist, ind = KDTree(X[rest]).query(X[members], k=1)
        _keep_best(np.full(members.size, c), dist[:, 0], members, rest[ind[:, 0]], best_d,
                   best_i, best_j)  # fmt: skip
    return [(float(best_d[c]), int(best_i[c]), int(best_j[c])) for c in range(n_comp)]


def _keep_best(comp, d, i, j, best_d, best_i, best_j) -> None:
    """Per component, keep the shortest of the candidate edges ``(d, i, j)``."""
    order = np.lexsort((i, d, comp))
    first = np.ones(order.size, dtype=bool)
    first[1:] = comp[order][1:] != comp[order][:-1]
    sel = order[first]
    better = d[sel] < best_d[comp[sel]]
    sel = sel[better]
    best_d[comp[sel]] = d[sel]
    best_i[comp[sel]] = i[sel]
    best_j[comp[sel]] = j[sel]


def _find(parent: np.ndarray, a: int) -> int:
    """Union-find root with path halving."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def bridge_components(
    X: np.ndarray, G: sp.csr_matrix, neighbors: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Edges of a minimum spanning forest joining the connected components of ``G``.

    Borůvka rounds: every component adds its shortest Euclidean edge to a
    point outside it; components merge; repeat until one is left.  The
    edges are those of the Euclidean minimum spanning tree of the quotient
    (ties aside), so at most ``c - 1`` edges join ``c`` components.

    With ``neighbors`` (every point's nearest neighbours, ascending, e.g.
    the lists the graph was built from), a component's shortest edge is read
    from its members' lists when that is provably exact: the shortest
    outside candidate found is no longer than the last listed distance of
    every member whose list holds no outside point.  Other components query
    K-d trees as above.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    G : sparse matrix of shape (n, n)
    neighbors : tuple of ndarray (dist, ind) of shape (n, k), optional

    Returns
    -------
    pairs : ndarray of shape (m, 2) of int
        Bridge end points ``(i, j)``, ``m = components - 1``.
    lengths : ndarray of shape (m,)
        Their Euclidean lengths.
    """
    n_comp, component = connected_components(G, directed=False)
    pairs: list[tuple[int, int]] = []
    lengths: list[float] = []
    if n_comp == 1:
        return np.zeros((0, 2), dtype=np.intp), np.zeros(0)
    tree = None if neighbors is not None else KDTree(X)
    while n_comp > 1:
        best = _shortest_outgoing(X, tree, component, n_comp, neighbors)
        # Union the chosen edges (one pair may be chosen by both of its ends).
        chosen = {(min(i, j), max(i, j)): d for d, i, j in best}
        rows = np.array([p[0] for p in chosen])
        cols = np.array([p[1] for p in chosen])
        quotient = sp.csr_matrix(
            (np.ones(rows.size), (component[rows], component[cols])), shape=(n_comp, n_comp)
        )
        merged, relabel = connected_components(quotient, directed=False)
        # Keep only edges that join different groups (Borůvka never closes a cycle
        # except through equal-length ties; drop any such duplicate).
        parent = np.arange(n_comp)
        for (i, j), d in sorted(chosen.items(), key=lambda item: (item[1], item[0])):
            a, b = _find(parent, component[i]), _find(parent, component[j])
            if a != b:
                parent[a] = b
                pairs.append((i, j))
                lengths.append(d)
        component = relabel[component]
        n_comp = merged
    return np.array(pairs, dtype=np.intp), np.array(lengths)


def spatial_knn(
    X: np.ndarray, image_shape: tuple[int, int], radius: int, n_neighbors: int
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest neighbours in feature space among the pixels of a spatial window.

    For an image of ``h x w`` pixels stored row-major in ``X`` (one feature
    vector per pixel), the candidates of pixel ``(r, c)`` are the other pixels
    ``(r', c')`` with ``|r - r'| <= radius`` and ``|c - c'| <= radius``; the
    ``n_neighbors`` of them nearest in Euclidean feature distance are kept
    (ties to the earlier window offset).  Cost ``O(n (2 radius + 1)^2 d)``.

    Returns
    -------
    dist, ind : ndarray of shape (h * w, n_neighbors)
        Ascending feature distances and pixel indices.
    """
    h, w = image_shape
    n = X.shape[0]
    if h * w != n:
        raise ValueError(f"image_shape {image_shape} holds {h * w} pixels, X has {n} rows")
    corner = (min(radius, h - 1) + 1) * (min(radius, w - 1) + 1) - 1
    if n_neighbors > corner:
        raise ValueError(
            f"n_neighbors={n_neighbors} exceeds the {corner} pixels a corner pixel has "
            f"within spatial radius {radius}; raise spatial_radius or lower n_neighbors"
        )
    offsets = [
        (dr, dc)
        for dr in range(-radius, radius + 1)
        for dc in range(-radius, radius + 1)
        if (dr, dc) != (0, 0)
    ]
    rows, cols = np.divmod(np.arange(n), w)
    dist = np.full((n, len(offsets)), np.inf)
    ind = np.zeros((n, len(offsets)), dtype=np.intp)
    for j, (dr, dc) in enumerate(offsets):
        r2, c2 = rows + dr, cols + dc
        valid = (r2 >= 0) & (r2 < h) & (c2 >= 0) & (c2 < w)
        other = np.where(valid, r2 * w + c2, 0)
        d = np.sqrt(np.sum((X - X[other]) ** 2, axis=1))
        dist[:, j] = np.where(valid, d, np.inf)
        ind[:, j] = other
    part = np.argsort(dist, axis=1, kind="stable")[:, :n_neighbors]
    return np.take_along_axis(dist, part, 1), np.take_along_axis(ind, part, 1)
