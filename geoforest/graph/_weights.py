"""Edge weights of neighbour graphs that hold whatever the geometry's units."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .._jit import njit

__all__ = ["check_lists", "knn_affinity"]


def check_lists(ind, n, what: str = "ind") -> np.ndarray:
    """Neighbour lists as an ``(n, k)`` integer array of points in ``[0, n)``.

    The graph helpers take lists from users too; a bad index would otherwise
    fail deep inside SciPy, or silently wrap around as a negative index.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    arr = np.asarray(ind)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{what} must have shape (n, k) = ({n}, k), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} must hold integer point indices, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(
            f"{what} must hold point indices in [0, {n}), got {arr.min()}..{arr.max()}"
        )
    return arr.astype(np.int64, copy=False)


def knn_affinity(ind: np.ndarray, n: int) -> sp.csr_matrix:
    """Symmetric shared-nearest-neighbour affinity of kNN lists.

    Points ``i`` and ``j`` are joined when one lists the other; the edge weighs
    ``|N(i) ∩ N(j)| / |N(i) ∪ N(j)|`` with ``N(i)`` the list of ``i`` and
    ``i`` itself (at least ``1 / (2k + 1)``: a listed pair always shares the
    listing point), so a weight is in ``(0, 1]`` and the graph has the kNN
    graph's edges.

    Parameters
    ----------
    ind : ndarray of shape (n, k)
        Each point's neighbours (itself excluded).
    n : int

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)

    Raises
    ------
    ValueError
        ``ind`` is not a 2-d array of integers in ``[0, n)`` with ``n`` rows.

    Examples
    --------
    >>> ind = np.array([[1, 2], [0, 2], [0, 1], [2, 1]])
    >>> A = knn_affinity(ind, 4)
    >>> bool((A != A.T).nnz == 0), round(float(A[0, 1]), 3), round(float(A[3, 2]), 3)
    (True, 1.0, 0.5)
    """
    ind = check_lists(ind, n)
    k = ind.shape[1]
    lists = np.concatenate([np.arange(n)[:, None], ind], axis=1)
    rows = np.repeat(np.arange(n), k + 1)
    B = sp.csr_matrix((np.ones(rows.size), (rows, lists.ravel())), shape=(n, n))
    B.data[:] = 1.0  # a point listed twice counts once
    edges = B + B.T
    edges.setdiag(0.0)
    edges.eliminate_zeros()
    edges = edges.tocoo()
    # Each edge's overlap by merging the two sorted lists: memory of the edges
    # only (rows of B gathered per edge took (k + 1) entries per edge, twice).
    lists.sort(axis=1)
    shared = np.empty(edges.row.shape[0])
    _shared_counts(lists, edges.row.astype(np.int64), edges.col.astype(np.int64), shared)
    size = np.diff(B.indptr).astype(np.float64)
    w = shared / (size[edges.row] + size[edges.col] - shared)
    return sp.csr_matrix((w, (edges.row, edges.col)), shape=(n, n))


@njit(nogil=True, cache=True)
def _shared_counts(lists, row, col, out):
    """``out[e]``: the distinct points the sorted lists of ``row[e]`` and
    ``col[e]`` share (a point listed twice in one list counts once)."""
    m = lists.shape[1]
    for e in range(row.shape[0]):
        a, b = lists[row[e]], lists[col[e]]
        p = q = c = 0
        while p < m and q < m:
            x, y = a[p], b[q]
            if x < y:
                p += 1
            elif y < x:
                q += 1
            else:
                c += 1
                while p < m and a[p] == x:
                    p += 1
                while q < m and b[q] == x:
                    q += 1
        out[e] = c
