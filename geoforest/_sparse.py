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

from ._jit import njit

__all__ = [
    "ZERO_DISTANCE",
    "as_output_csr",
    "csr_from_rows",
    "distance_data",
    "symmetric_knn_graph",
    "symmetric_union",
]

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


@njit(nogil=True, cache=True)
def _union_rows(ind, dist, tptr, tsrc, tdist, indptr, out_col, out_dist, count_only):
    """Row ``i`` of the union of the kNN graph ``(ind, dist)`` and its
    transpose (``tptr``/``tsrc``/``tdist``): its own neighbours, then those
    that list ``i``, each column once, sorted by (distance, column).  With
    ``count_only`` only ``indptr[i + 1]`` (the row lengths) is written."""
    n, k = ind.shape
    mark = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        pos = 0
        base = 0 if count_only else indptr[i]
        for c in range(k):
            j = ind[i, c]
            if mark[j] != i:
                mark[j] = i
                if not count_only:
                    out_col[base + pos] = j
                    out_dist[base + pos] = dist[i, c]
                pos += 1
        for t in range(tptr[i], tptr[i + 1]):
            j = tsrc[t]
            if mark[j] != i:
                mark[j] = i
                if not count_only:
                    out_col[base + pos] = j
                    out_dist[base + pos] = tdist[t]
                pos += 1
        if count_only:
            indptr[i + 1] = pos
            continue
        # Sort the row by (distance, column): by column, then stably by distance.
        seg_c = out_col[base : base + pos]
        seg_d = out_dist[base : base + pos]
        by_col = np.argsort(seg_c, kind="mergesort")
        c_sorted = seg_c[by_col]
        d_sorted = seg_d[by_col]
        by_dist = np.argsort(d_sorted, kind="mergesort")
        seg_c[:] = c_sorted[by_dist]
        seg_d[:] = d_sorted[by_dist]


@njit(nogil=True, cache=True)
def _transpose(ind, dist, n):
    """The kNN graph's transpose in CSR: who lists each point, at what distance."""
    k = ind.shape[1]
    tptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(ind.shape[0]):
        for c in range(k):
            tptr[ind[i, c] + 1] += 1
    for i in range(n):
        tptr[i + 1] += tptr[i]
    fill = tptr[:-1].copy()
    tsrc = np.empty(ind.size, dtype=np.int32)
    tdist = np.empty(ind.size)
    for i in range(ind.shape[0]):
        for c in range(k):
            j = ind[i, c]
            tsrc[fill[j]] = i
            tdist[fill[j]] = dist[i, c]
            fill[j] += 1
    return tptr, tsrc, tdist


def symmetric_knn_graph(ind: np.ndarray, dist: np.ndarray) -> sp.csr_matrix:
    """The union of the training points' kNN graph and its transpose, in CSR.

    The same entries as :func:`symmetric_union` of the kNN rows (a pair listed
    both ways kept once; rows sorted by distance, then column), built row by
    row from the graph's transpose instead of by sorting every entry: the
    working memory is the transpose (12 bytes an edge) beside the result,
    not several copies of the doubled edge list.  Distances are stored as
    given (zeros kept); ``ind`` holds no point of its own row.
    """
    n = ind.shape[0]
    ind = np.ascontiguousarray(ind, dtype=np.int64)
    dist = np.ascontiguousarray(dist, dtype=np.float64)
    if n >= _INT32_MAX:  # pragma: no cover - the transpose stores int32 sources
        raise ValueError("more than 2**31 - 1 training points")
    tptr, tsrc, tdist = _transpose(ind, dist, n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    empty_c, empty_d = np.empty(0, dtype=np.int64), np.empty(0)
    _union_rows(ind, dist, tptr, tsrc, tdist, indptr, empty_c, empty_d, True)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    dtype = _index_dtype(nnz, n)
    out_col = np.empty(nnz, dtype=np.int64 if dtype is np.int64 else np.int32)
    out_dist = np.empty(nnz)
    _union_rows(ind, dist, tptr, tsrc, tdist, indptr, out_col, out_dist, False)
    del tptr, tsrc, tdist
    return sp.csr_matrix((out_dist, out_col, indptr.astype(dtype)), shape=(n, n))


def neighbors_rows_graph(dist, ind, mode: str, n_train: int) -> sp.csr_matrix:
    """The CSR graph of query rows to their ``k`` neighbours (``kneighbors_graph`` with X)."""
    n_q, k = ind.shape
    rows = np.repeat(np.arange(n_q, dtype=np.int64), k)
    data = np.ones(ind.size) if mode == "connectivity" else distance_data(dist.ravel())
    return csr_from_rows(rows, ind.ravel(), data, (n_q, n_train))
