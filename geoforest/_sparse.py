"""The library's one sparse output type, and the symmetric neighbour graph.

**Policy.** Every sparse matrix geoforest returns (proximity kernels, neighbour
graphs, leaf embeddings) is a ``scipy.sparse.csr_matrix`` with float64 values
and int32 ``indices`` / ``indptr`` whenever they fit (fewer than 2**31 stored
entries and columns), else int64.  Why: it is what scikit-learn's own
neighbour graphs and transformers return, and the one form every consumer we
test accepts as is — scikit-learn's ``SpectralClustering`` and ``Isomap``
refuse 64-bit indices, and umap-learn's ``metric="precomputed"`` path fails to
compile on the newer ``csr_array``.  Inside the library, code may use either.
Inputs are accepted as any SciPy sparse type.

**Distance 0.** In a sparse *distance* graph a missing entry means "not a
neighbour", so a real distance of 0 (points the forest cannot tell apart:
they share every leaf) must be stored.  SciPy's graph routines
(``minimum_spanning_tree``, ``maximum``, ``eliminate_zeros``) drop stored zeros,
and scikit-learn's HDBSCAN crashes (a segmentation fault in 1.8) when its
minimum spanning tree loses them.  Distance graphs therefore store a distance
0 as :data:`ZERO_DISTANCE`, the smallest positive float64, which every
consumer keeps and which is 0 in any arithmetic that matters.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ZERO_DISTANCE", "as_output_csr", "csr_from_rows", "distance_data", "symmetric_union"]

_INT32_MAX = np.iinfo(np.int32).max

#: How a distance graph stores a distance of exactly 0 (see the module docstring).
ZERO_DISTANCE = float(np.finfo(np.float64).tiny)


def distance_data(dist: np.ndarray) -> np.ndarray:
    """Distances as stored in a sparse distance graph: 0 becomes :data:`ZERO_DISTANCE`."""
    return np.maximum(np.asarray(dist, dtype=np.float64), ZERO_DISTANCE)


def _index_dtype(nnz: int, n_cols: int) -> type:
    return np.int32 if max(nnz, n_cols) <= _INT32_MAX else np.int64


def as_output_csr(M) -> sp.csr_matrix:
    """``M`` as the library's output type: float64 ``csr_matrix``, 32-bit indices when they fit.

    Explicitly stored zeros are kept (in a distance graph they are real
    distance-0 edges, for example between duplicate points).
    """
    M = M.tocsr() if sp.issparse(M) else sp.csr_matrix(M)
    dtype = _index_dtype(M.nnz, M.shape[1])
    return sp.csr_matrix(
        (
            np.asarray(M.data, dtype=np.float64),
            np.asarray(M.indices, dtype=dtype),
            np.asarray(M.indptr, dtype=dtype),
        ),
        shape=M.shape,
    )


def csr_from_rows(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape) -> sp.csr_matrix:
    """A CSR graph from entries already grouped by row in increasing row order (zeros kept)."""
    n_rows = int(shape[0])
    dtype = _index_dtype(rows.size, int(shape[1]))
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return sp.csr_matrix(
        (np.asarray(data, dtype=np.float64), cols.astype(dtype), indptr.astype(dtype)),
        shape=(n_rows, int(shape[1])),
    )


def symmetric_union(
    rows: np.ndarray, cols: np.ndarray, data: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries of the union of a graph and its transpose, for a symmetric distance.

    Every edge ``(i, j, d)`` also gives ``(j, i, d)``; a pair listed both ways
    keeps one entry (the distance is the same both ways, so no value is
    invented).  Rows come out grouped in increasing order and, within a row,
    sorted by distance (then column), as scikit-learn's precomputed sparse
    neighbour graphs expect.  Zeros are kept.
    """
    r = np.concatenate([rows, cols]).astype(np.int64)
    c = np.concatenate([cols, rows]).astype(np.int64)
    d = np.concatenate([data, data])
    _, first = np.unique(r * n + c, return_index=True)
    r, c, d = r[first], c[first], d[first]
    order = np.lexsort((c, d, r))
    return r[order], c[order], d[order]


def neighbors_rows_graph(dist, ind, mode: str, n_train: int) -> sp.csr_matrix:
    """The CSR graph of query rows to their ``k`` neighbours (``kneighbors_graph`` with X)."""
    n_q, k = ind.shape
    rows = np.repeat(np.arange(n_q, dtype=np.int64), k)
    data = np.ones(ind.size) if mode == "connectivity" else distance_data(dist.ravel())
    return csr_from_rows(rows, ind.ravel(), data, (n_q, n_train))
