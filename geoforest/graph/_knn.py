"""Sparse kNN graphs: neighbours, symmetrisation, Gaussian weights, input checks.

Euclidean nearest neighbours of every row (:func:`knn`) or of every pixel
within a spatial window (:func:`spatial_knn`), the symmetric union of the kNN
sets (:func:`symmetrize`) with ``exp(-d^2 / sigma^2)`` weights
(:func:`gaussian_knn_graph`), the power-of-two input scale that keeps squared
distances in float64 (:func:`feature_scale`), and the checks of a precomputed
graph and of its rows from new points.  A kNN graph of noisy data is usually
in pieces; :func:`geoforest.graph.bridge_components` (``_connect.py``) joins
them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .._validation import check_not_complex

__all__ = [
    "SAFE_RANGE",
    "check_query_graph",
    "check_sparse_graph",
    "feature_scale",
    "gaussian_knn_graph",
    "knn",
    "spatial_knn",
    "symmetrize",
]


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


# ------------------------------------------------------------------ checks and scaling
def check_sparse_graph(G, name: str, *, distances: bool = False) -> sp.csr_matrix:
    """A precomputed ``(n, n)`` graph as float64 CSR: square, finite, non-negative, ``n >= 2``.

    A dense matrix of ``distances`` lists every pair: its off-diagonal zeros are
    edges of length 0 (copies of a point), stored explicitly, where a CSR
    conversion would drop them; its diagonal is no edge.  In a dense affinity
    a zero is no edge.
    """
    if not sp.issparse(G):
        G = np.asarray(G, dtype=np.float64)
        if G.ndim != 2:
            raise ValueError(f"a precomputed {name} must be a 2-d (n, n) matrix, got {G.shape}")
        if distances and G.shape[0] == G.shape[1] and G.shape[0] > 1:
            G = _every_pair(G)
    G = sp.csr_matrix(G, dtype=np.float64)
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"a precomputed {name} must be square, got shape {G.shape}")
    if G.shape[0] < 2:
        raise ValueError(f"a precomputed {name} needs at least 2 points, got {G.shape[0]}")
    if not np.all(np.isfinite(G.data)):
        raise ValueError(f"the precomputed {name} has NaN or infinite entries")
    if np.any(G.data < 0):
        raise ValueError(f"the precomputed {name} has negative entries")
    return G


def _every_pair(D: np.ndarray) -> sp.csr_matrix:
    """The off-diagonal entries of a dense square matrix, zeros included, as CSR."""
    n = D.shape[0]
    cols = np.tile(np.arange(n), n).reshape(n, n)
    off = ~np.eye(n, dtype=bool)
    indptr = np.arange(0, n * (n - 1) + 1, n - 1)
    return sp.csr_matrix((D[off], cols[off], indptr), shape=(n, n))


#: Features with ``max |x|`` outside ``[1e-100, 1e100]`` are divided by a power of two:
#: squared distances would overflow (about 1e154 and up) or underflow otherwise.
SAFE_RANGE = (1e-100, 1e100)


def feature_scale(X: np.ndarray) -> float:
    """A power of two near ``max |X|`` when squared distances would leave float64, else 1.

    The Gaussian kNN graph depends on the features only through ``d / sigma``
    (and ``d^2 / (s_i s_j)``), so dividing the features, the distances and
    ``sigma`` by the same power of two changes nothing (the division is
    exact).
    """
    top = float(np.max(np.abs(X))) if X.size else 0.0
    if top == 0.0 or SAFE_RANGE[0] <= top <= SAFE_RANGE[1]:
        return 1.0
    return float(2.0 ** np.round(np.log2(top)))


def check_query_graph(G, n_train: int, kind: str, estimator) -> sp.csr_matrix:
    """Rows from new points to the training points for a model fitted on a precomputed graph."""
    name = type(estimator).__name__
    check_not_complex(G, estimator)
    if not sp.issparse(G):
        try:
            G = np.asarray(G, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} was fitted on a precomputed {kind}; transform and predict need the "
                f"{kind} from the new points to the {n_train} training points as numbers "
                f"({exc})"
            ) from None
    if G.ndim != 2:
        raise ValueError(
            f"Expected a 2-d (n_queries, {n_train}) {kind} from new points to the training "
            f"points of {name}, got an array of shape {G.shape}"
        )
    if G.shape[0] < 1 or G.shape[1] != n_train:
        raise ValueError(
            f"{name} was fitted on a precomputed {kind} of {n_train} points: pass the "
            f"(n_queries, {n_train}) {kind} from the new points to the training points, "
            f"got shape {G.shape}"
        )
    G = sp.csr_matrix(G, dtype=np.float64)
    if not np.all(np.isfinite(G.data)):
        raise ValueError(f"the {kind} rows passed to {name} have NaN or infinite entries")
    if np.any(G.data < 0):
        raise ValueError(f"the {kind} rows passed to {name} have negative entries")
    G.sort_indices()
    return G
