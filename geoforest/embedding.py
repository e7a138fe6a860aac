"""Spectral embeddings of graphs given by their adjacency matrix."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from sklearn.utils import check_random_state

__all__ = ["adjacency_spectral_embedding"]

# Largest number of nodes for which a dense input is decomposed with a full SVD.
_DENSE_MAX_N = 2000
# Relative tolerance used to decide whether an adjacency matrix is symmetric.
_SYMMETRY_RTOL = 1e-10


def _validate_adjacency(A):
    """Return ``A`` as a float64 ndarray or CSR matrix, after checking it."""
    if sp.issparse(A):
        if A.ndim != 2:
            raise ValueError(f"A must be a 2-D matrix, got a {A.ndim}-D sparse array.")
        if not np.issubdtype(A.dtype, np.number) and A.dtype != np.bool_:
            raise ValueError(f"A must be numeric, got dtype {A.dtype}.")
        if np.issubdtype(A.dtype, np.complexfloating):
            raise ValueError("A must be real-valued, got a complex matrix.")
        A = sp.csr_matrix(A, dtype=np.float64)
        data = A.data
    else:
        A = np.asarray(A)
        if A.ndim != 2:
            raise ValueError(f"A must be a 2-D matrix, got an array with {A.ndim} dimension(s).")
        if A.dtype != np.bool_ and not np.issubdtype(A.dtype, np.number):
            raise ValueError(f"A must be numeric, got dtype {A.dtype}.")
        if np.issubdtype(A.dtype, np.complexfloating):
            raise ValueError("A must be real-valued, got a complex matrix.")
        A = np.asarray(A, dtype=np.float64)
        data = A
    n_rows, n_cols = A.shape
    if n_rows != n_cols:
        raise ValueError(f"A must be square, got shape {A.shape}.")
    if n_rows == 0:
        raise ValueError("A is empty (shape (0, 0)); need at least 2 nodes.")
    if not np.all(np.isfinite(data)):
        raise ValueError("A contains NaN or infinite values.")
    return A


def _is_symmetric(A) -> bool:
    """Symmetry up to a tiny relative tolerance (exact for integer weights)."""
    if sp.issparse(A):
        diff = abs(A - A.T)
        max_diff = diff.max() if diff.nnz else 0.0
        scale = abs(A).max() if A.nnz else 0.0
    else:
        max_diff = np.max(np.abs(A - A.T))
        scale = np.max(np.abs(A))
    return bool(max_diff <= _SYMMETRY_RTOL * scale)


def _top_svd(A, k: int, random_state):
    """Top-``k`` singular triplets ``(U, s, V)`` with ``s`` decreasing."""
    n = A.shape[0]
    if not sp.issparse(A) and n <= _DENSE_MAX_N:
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        return U[:, :k], s[:k], Vt[:k].T
    rng = check_random_state(random_state)
    v0 = rng.uniform(-1.0, 1.0, size=n)
    U, s, Vt = svds(A, k=k, v0=v0, solver="arpack")
    order = np.argsort(s)[::-1]
    return U[:, order], s[order], Vt[order].T


def _fix_signs(U, V):
    """Flip components so the largest-magnitude entry of each column of U is positive.

    The same flip is applied to ``V`` so ``U @ diag(s) @ V.T`` is unchanged.
    """
    rows = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[rows, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs, V * signs


def _positions(A, U, s, V) -> tuple[np.ndarray, np.ndarray]:
    """``U sqrt(s)`` and ``V sqrt(s)``, computed as ``A V / sqrt(s)`` and ``A^T U / sqrt(s)``.

    Equal in exact arithmetic (``A V = U diag(s)``), but the solver's ``U``
    gives nodes with identical edges positions that differ in the last bits,
    enough to keep them apart as distinct points (and to merge them only on a
    float32 cast).  A sparse product sums each row's entries in one order, so
    nodes with identical out-edges (in-edges) get identical positions.
    Directions with a singular value near 0 keep the solver's vectors, which
    the division would amplify.
    """
    root = np.sqrt(s)
    out, into = U * root, V * root
    keep = s > s[0] * max(A.shape) * np.finfo(np.float64).eps
    if np.any(keep):
        rows = sp.csr_array(A, dtype=np.float64)
        out[:, keep] = (rows @ V[:, keep]) / root[keep]
        into[:, keep] = (rows.T.tocsr() @ U[:, keep]) / root[keep]
    return out, into


def adjacency_spectral_embedding(A, n_components=3, *, directed=None, random_state=None):
    """Adjacency spectral embedding (ASE) of a graph.

    Computes the truncated singular value decomposition
    ``A ~ U_d diag(s_d) V_d^T`` of the adjacency matrix and scales the singular
    vectors by the square roots of the singular values, so that the rows of
    ``U_d sqrt(s_d)`` (and ``V_d sqrt(s_d)``) estimate the latent positions of
    a random dot product graph.

    Parameters
    ----------
    A : array-like or scipy sparse matrix of shape (n, n)
        Adjacency matrix of the graph; may be weighted and may contain negative
        entries, but must be finite.
    n_components : int, default=3
        Embedding dimension ``d``; an integer in ``[1, n - 1]``.
    directed : bool or None, default=None
        Whether to treat the graph as directed.  ``None`` infers it: the graph
        is directed iff ``A`` is not symmetric (up to a relative tolerance of
        ``1e-10`` on the largest entry).  ``True`` always returns the out- and
        in-embeddings.  ``False`` requires a symmetric ``A``.
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the iterative sparse solver
        (:func:`scipy.sparse.linalg.svds`), used when ``A`` is sparse or has
        more than 2000 nodes.  Dense inputs with at most 2000 nodes use a full
        dense SVD and ignore it.

    Returns
    -------
    X : ndarray of shape (n, n_components) or (n, 2 * n_components)
        Undirected graph: ``U_d sqrt(s_d)``.  Directed graph:
        ``[U_d sqrt(s_d), V_d sqrt(s_d)]``, where the first ``n_components``
        columns are the "out" latent positions and the last ``n_components``
        the "in" latent positions, so that ``X_out @ X_in.T`` is the best
        rank-``d`` approximation of ``A``.

    Raises
    ------
    ValueError
        If ``A`` is not a 2-D square non-empty finite real matrix, if
        ``n_components`` is not an integer in ``[1, n - 1]``, if ``directed``
        is not a bool or None, or if ``directed=False`` and ``A`` is not
        symmetric.

    Notes
    -----
    Nodes with identical out-edges (in-edges) get identical out-positions
    (in-positions), bit for bit.  Singular values are sorted in decreasing order.  Signs are made
    deterministic: each component is flipped so that the entry of largest
    absolute value of the corresponding column of ``U`` is positive, and the
    same flip is applied to ``V``.  For a symmetric ``A`` the singular vectors
    are the eigenvectors ordered by the absolute value of the eigenvalues.

    References
    ----------
    .. [1] Sussman, D. L., Tang, M., Fishkind, D. E. and Priebe, C. E. (2012).
           A consistent adjacency spectral embedding for stochastic blockmodel
           graphs. Journal of the American Statistical Association, 107(499),
           1119-1128.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.embedding import adjacency_spectral_embedding
    >>> rng = np.random.default_rng(0)
    >>> P = np.kron([[0.8, 0.1], [0.1, 0.6]], np.ones((50, 50)))
    >>> A = (rng.random((100, 100)) < P).astype(float)
    >>> adjacency_spectral_embedding(A, n_components=2).shape
    (100, 4)
    >>> S = np.triu(A, 1) + np.triu(A, 1).T
    >>> adjacency_spectral_embedding(S, n_components=2).shape
    (100, 2)
    """
    A = _validate_adjacency(A)
    n = A.shape[0]

    if (
        isinstance(n_components, bool)
        or not isinstance(n_components, numbers.Integral)
        or not 1 <= n_components <= n - 1
    ):
        if n < 2:
            raise ValueError(f"A must have at least 2 nodes to be embedded, got {n}.")
        raise ValueError(f"n_components must be an integer in [1, {n - 1}], got {n_components!r}.")
    n_components = int(n_components)

    if directed is not None and not isinstance(directed, bool | np.bool_):
        raise ValueError(f"directed must be True, False or None, got {directed!r}.")
    if directed is None:
        directed = not _is_symmetric(A)
    elif not directed and not _is_symmetric(A):
        raise ValueError("directed=False but A is not symmetric; use directed=True or None.")

    U, s, V = _top_svd(A, n_components, random_state)
    U, V = _fix_signs(U, V)
    out, into = _positions(A, U, s, V)
    if directed:
        return np.hstack([out, into])
    return out
