"""Normalised spectral clustering on a symmetric affinity.

Every clustering method of geoforest that ends in a spectral step (forest
kernels, longest-leg path distances, precomputed affinities) goes through the
functions here.  The affinity ``W`` may be a dense array, a scipy sparse
matrix/array, or a :class:`scipy.sparse.linalg.LinearOperator` that only
computes ``W @ x``.

We always work with the symmetric normalised affinity
``M = D^{-1/2} W D^{-1/2}`` (``D`` the diagonal degree matrix) rather than the
normalised Laplacian ``L = I - M``: both have the same eigenvectors, the
smallest eigenvalues of ``L`` are ``1 -`` the largest of ``M``, and Krylov
solvers converge more reliably on the largest algebraic eigenvalues of ``M``
than on the smallest of ``L``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Literal

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh, lobpcg
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import Bunch, check_random_state
from threadpoolctl import threadpool_limits

__all__ = [
    "canonical_labels",
    "estimate_n_clusters",
    "normalized_affinity",
    "spectral_clustering",
    "spectral_eigs",
    "spectral_embedding_njw",
    "spectral_partitions",
]

Solver = Literal["auto", "dense", "arpack", "lobpcg"]

#: ``solver="auto"`` uses the dense eigensolver up to this many points.
AUTO_DENSE_MAX_N = 1000
#: ``solver="dense"`` refuses problems larger than this.
DENSE_MAX_N = 2000
#: Columns of the identity applied at once when materialising a LinearOperator.
_MATERIALIZE_BLOCK = 256
#: Residual tolerance of LOBPCG when ``tol=0`` (its own default is much looser).
_LOBPCG_DEFAULT_TOL = 1e-7
_LOBPCG_MAXITER = 1000
#: Restarts of plain Lanczos before the shift-invert fallback (see ``_eigs_arpack``).
_ARPACK_MAXITER = 100
#: Shift above 1 of the shift-invert fallback: ``M - (1 + _SHIFT) I`` is negative definite.
_SHIFT = 1e-6

_SOLVERS = ("auto", "dense", "arpack", "lobpcg")


# --------------------------------------------------------------------- affinity
def _n_nodes(W) -> int:
    shape = getattr(W, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError(f"the affinity must be a 2-d (n, n) matrix, got shape {shape}")
    if shape[0] != shape[1]:
        raise ValueError(f"the affinity must be square, got shape {tuple(shape)}")
    return int(shape[0])


def _inv_sqrt(degree: np.ndarray) -> np.ndarray:
    """``1 / sqrt(d)`` with ``1 / sqrt(0) := 0`` (isolated nodes get a zero row)."""
    scale = np.zeros_like(degree)
    positive = degree > 0
    scale[positive] = 1.0 / np.sqrt(degree[positive])
    return scale


def normalized_affinity(
    W,
) -> tuple[np.ndarray | sp.sparray | sp.spmatrix | LinearOperator, np.ndarray]:
    """The symmetric normalised affinity ``M = D^{-1/2} W D^{-1/2}``.

    Parameters
    ----------
    W : ndarray, scipy sparse matrix/array or LinearOperator of shape (n, n)
        A symmetric affinity with non-negative entries (assumed, not checked;
        :class:`~geoforest.cluster.KernelSpectralClustering` validates its input).

    Returns
    -------
    M : ndarray, sparse matrix/array or LinearOperator of shape (n, n)
        The normalised affinity, in the same kind of container as ``W``: a
        dense array stays dense, a sparse matrix or array stays sparse (CSR, of
        the same matrix/array flavour), a LinearOperator becomes a
        LinearOperator computing ``M @ x`` with one product by ``W``.
    degree : ndarray of shape (n,)
        The degrees ``d = W @ 1``.

    Notes
    -----
    A node of degree zero (an isolated point) would need ``1 / sqrt(0)``; we
    take it to be ``0``, so the node's row and column of ``M`` are zero and
    there are no NaN or inf.  Its indicator vector is then an eigenvector of
    ``M`` with eigenvalue 0 (eigenvalue 1 of the Laplacian ``I - M``), so it is
    never among the leading eigenvectors and its row of any leading
    eigenvector is zero; :func:`spectral_clustering` reports such points.

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> M, degree = normalized_affinity(W)
    >>> degree
    array([1., 1., 0.])
    >>> M
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 0., 0.]])
    """
    n = _n_nodes(W)
    if isinstance(W, LinearOperator):
        degree = np.asarray(W.matvec(np.ones(n)), dtype=np.float64).reshape(-1)
        scale = _inv_sqrt(degree)

        def matvec(x):
            x = np.asarray(x, dtype=np.float64).reshape(-1)
            y = np.asarray(W.matvec(scale * x), dtype=np.float64).reshape(-1)
            return scale * y

        def matmat(X):
            X = np.asarray(X, dtype=np.float64)
            Y = np.asarray(W.matmat(scale[:, None] * X), dtype=np.float64)
            return scale[:, None] * Y

        M = LinearOperator(
            (n, n),
            matvec=matvec,
            rmatvec=matvec,
            matmat=matmat,
            rmatmat=matmat,
            dtype=np.float64,
        )
        return M, degree

    if sp.issparse(W):
        M = W.tocsr(copy=True).astype(np.float64, copy=False)
        M.sum_duplicates()
        degree = np.asarray(M.sum(axis=1), dtype=np.float64).reshape(-1)
        scale = _inv_sqrt(degree)
        row_scale = np.repeat(scale, np.diff(M.indptr))
        M.data *= row_scale * scale[M.indices]
        return M, degree

    W = np.asarray(W, dtype=np.float64)
    degree = W.sum(axis=1)
    scale = _inv_sqrt(degree)
    return scale[:, None] * W * scale[None, :], degree


# ------------------------------------------------------------------ eigensolver
def _resolve_solver(solver: str, n: int) -> str:
    if solver not in _SOLVERS:
        raise ValueError(f"solver must be one of {_SOLVERS}, got {solver!r}")
    if solver == "auto":
        return "dense" if n <= AUTO_DENSE_MAX_N else "arpack"
    return solver


def _check_n_eigs(n_eigs, n: int, solver: str) -> int:
    if not isinstance(n_eigs, numbers.Integral) or isinstance(n_eigs, bool):
        raise TypeError(f"n_eigs must be an integer, got {n_eigs!r}")
    upper = n if solver == "dense" else n - 1
    if not 1 <= n_eigs <= upper:
        raise ValueError(
            f"n_eigs must be in [1, {upper}] for solver={solver!r} with n={n} points, "
            f"got n_eigs={n_eigs}"
        )
    return int(n_eigs)


def _to_dense(M) -> np.ndarray:
    """``M`` as a symmetric dense array (a LinearOperator is applied to the identity)."""
    n = M.shape[0]
    if isinstance(M, LinearOperator):
        dense = np.empty((n, n), dtype=np.float64)
        for start in range(0, n, _MATERIALIZE_BLOCK):
            stop = min(start + _MATERIALIZE_BLOCK, n)
            block = np.zeros((n, stop - start), dtype=np.float64)
            block[np.arange(start, stop), np.arange(stop - start)] = 1.0
            dense[:, start:stop] = M.matmat(block)
    elif sp.issparse(M):
        dense = M.toarray()
    else:
        dense = np.array(M, dtype=np.float64)
    # Remove rounding asymmetry so that eigh sees exactly the matrix we mean.
    return 0.5 * (dense + dense.T)


def _fix_signs(vectors: np.ndarray) -> np.ndarray:
    """Flip each column so that its largest-magnitude entry is positive."""
    if vectors.size == 0:
        return vectors
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return vectors * signs


def _eigs_dense(M, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = M.shape[0]
    if n > DENSE_MAX_N:
        raise ValueError(
            f"solver='dense' is limited to n <= {DENSE_MAX_N} points, got n={n}; "
            "use solver='arpack' or 'lobpcg'"
        )
    dense = _to_dense(M)
    # One BLAS thread: at n <= 2000 threads gain little, and OpenBLAS threads that
    # find the other cores busy (another process, joblib workers) wait for them:
    # a 1000 x 1000 eigh took 7 s with 2 threads and 0.1 s with 1 on a loaded
    # 2-core machine.
    with threadpool_limits(limits=1, user_api="blas"):
        values, vectors = scipy.linalg.eigh(dense, subset_by_index=[n - k, n - 1])
        if values.shape[0] != k:
            # LAPACK's subset driver can return fewer pairs when the top eigenvalue is
            # highly repeated (many connected components); the full decomposition cannot.
            values, vectors = np.linalg.eigh(dense)
            values, vectors = values[n - k :], vectors[:, n - k :]
    return values, vectors


def _eigs_shift_invert(M, k: int, v0: np.ndarray, tol: float):
    """Leading eigenpairs of a symmetric ``M`` (spectrum in [-1, 1]) by shift-invert ARPACK.

    ARPACK runs on ``(M - s I)^-1`` with ``s = 1 + 1e-6`` (a sparse LU,
    SuperLU), which spreads eigenvalues crowded just below 1 apart: ``1 -
    lambda`` of ``1e-7`` and ``1e-6`` become ``-1e6 / 1.1`` and ``-1e6 / 2``.
    Used by :class:`~geoforest.DiffusionMap` above 1,000 points and as the
    fallback of :func:`_eigs_arpack`.  Eigenvalues come out descending.
    """
    values, vectors = eigsh(sp.csc_matrix(M), k=k, sigma=1.0 + _SHIFT, which="LM", v0=v0, tol=tol)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def _eigs_arpack(M, k: int, rng: np.random.RandomState, tol: float):
    """Leading eigenpairs by Lanczos, with a bounded budget and a shift-invert fallback.

    On a connected graph that is almost in pieces (a sharp rpfCluster scale,
    well separated clusters) the top of the spectrum crowds just below 1, gaps
    of ``1e-7`` and less, where plain Lanczos needs tens of thousands of
    restarts: 8 minutes on musk2's 6,598-point forest kernel at
    ``beta_2 = 0.05``, and still the wrong second eigenvalue at ``tol=1e-6``.
    So plain Lanczos gets :data:`_ARPACK_MAXITER` restarts (healthy affinities
    converge in 1-3); past that, a sparse matrix goes to shift-invert ARPACK,
    which separates the crowded eigenvalues (28 s there, most of it the LU,
    0.5 GB: the forest kernel's LU is nearly dense).  A LinearOperator (LLPD's
    affinity) cannot be factorised: it keeps plain Lanczos with ARPACK's
    own budget, then a larger Krylov space.  Problems of at most
    :data:`DENSE_MAX_N` points end with the dense solver if all else fails.
    """
    n = M.shape[0]
    v0 = rng.uniform(-1.0, 1.0, size=n)
    operator = isinstance(M, LinearOperator)
    try:
        # An operator cannot be factorised: its plain Lanczos keeps ARPACK's own
        # budget (10 n restarts), as before the fallback existed (LLPD's results).
        maxiter = None if operator else _ARPACK_MAXITER
        return eigsh(M, k=k, which="LA", v0=v0, tol=tol, maxiter=maxiter)
    except ArpackNoConvergence:
        pass
    try:
        if operator:
            ncv = min(n - 1, max(4 * k + 1, 64))
            return eigsh(M, k=k, which="LA", v0=v0, tol=tol, ncv=ncv, maxiter=20 * n)
        return _eigs_shift_invert(M, k, v0, tol)
    except (ArpackNoConvergence, RuntimeError):
        # RuntimeError: SuperLU found the shifted matrix singular to working precision
        if n <= DENSE_MAX_N:
            return _eigs_dense(M, k)
        raise


def _eigs_lobpcg(M, k: int, rng: np.random.RandomState, tol: float):
    n = M.shape[0]
    X0 = rng.standard_normal((n, k))
    tol = tol if tol > 0 else _LOBPCG_DEFAULT_TOL
    with warnings.catch_warnings():
        # We judge convergence ourselves below and fall back to ARPACK.
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = lobpcg(M, X0, tol=tol, maxiter=_LOBPCG_MAXITER, largest=True)
    values = np.asarray(values, dtype=np.float64)
    vectors = np.asarray(vectors, dtype=np.float64)
    residual = M @ vectors - vectors * values[None, :]
    residual_norms = np.linalg.norm(residual, axis=0) / np.maximum(
        np.linalg.norm(vectors, axis=0), np.finfo(np.float64).tiny
    )
    if not np.all(np.isfinite(residual_norms)) or np.max(residual_norms) > 10.0 * tol:
        warnings.warn(
            f"LOBPCG did not converge in {_LOBPCG_MAXITER} iterations (largest residual "
            f"{np.max(residual_norms):.2e} > tol {tol:.1e}); falling back to ARPACK",
            ConvergenceWarning,
            stacklevel=3,
        )
        return _eigs_arpack(M, k, rng, 0.0)
    return values, vectors


def _eigs_connected(M, k: int, solver: str, rng: np.random.RandomState, tol: float):
    if solver == "dense":
        return _eigs_dense(M, k)
    if solver == "arpack":
        return _eigs_arpack(M, k, rng, tol)
    return _eigs_lobpcg(M, k, rng, tol)


def _eigs_by_component(
    M,
    degree: np.ndarray,
    k: int,
    component: np.ndarray,
    n_components: int,
    solver: str,
    rng,
    tol: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Leading eigenpairs of a block-diagonal ``M``, one connected component at a time.

    The spectrum of ``M`` is the union of its components' spectra, and every
    component of positive volume has top eigenvalue exactly 1 with eigenvector
    ``sqrt(d)`` on the component.  Solving per component is exact, avoids the
    highly repeated eigenvalue 1 that stalls Krylov solvers, and makes the
    choice within that eigenspace deterministic: among equal eigenvalues the
    larger component (then the one with the smaller first index) comes first.
    """
    n = M.shape[0]
    sizes = np.bincount(component, minlength=n_components)
    first = np.full(n_components, n, dtype=np.int64)
    np.minimum.at(first, component, np.arange(n))
    rank = np.empty(n_components, dtype=np.int64)
    rank[np.lexsort((first, -sizes))] = np.arange(n_components)
    volume = np.bincount(component, weights=degree, minlength=n_components)
    positive = np.flatnonzero(volume > 0)
    members = np.argsort(component, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])

    def top_pairs(c: int, kc: int) -> None:
        idx = members[bounds[c] : bounds[c + 1]]
        sub = M[idx][:, idx] if sp.issparse(M) else M[np.ix_(idx, idx)]
        m = idx.size
        if solver == "dense" or m <= max(AUTO_DENSE_MAX_N, kc + 1):
            w, V = _eigs_dense(sub, min(kc, m))
        else:
            w, V = _eigs_connected(sub, min(kc, m - 1), solver, rng, tol)
        for j in range(w.shape[0]):
            v = np.zeros(n)
            v[idx] = V[:, j]
            pairs.append((float(w[j]), int(rank[c]), v))

    pairs: list[tuple[float, int, np.ndarray]] = []
    if positive.size >= k:
        # The top k eigenvalues are all 1, with the k largest components' Perron
        # vectors sqrt(d) (M sqrt(d) = D^{-1/2} W 1 = sqrt(d)): no solve needed.
        root = np.sqrt(np.maximum(degree, 0.0))
        for c in positive[np.argsort(rank[positive])][:k]:
            idx = members[bounds[c] : bounds[c + 1]]
            v = np.zeros(n)
            v[idx] = root[idx] / np.linalg.norm(root[idx])
            pairs.append((1.0, int(rank[c]), v))
    else:
        for c in positive:
            top_pairs(c, k)
        # Zero-degree points: eigenvalue 0, indicator eigenvector (k at most needed).
        for c in np.flatnonzero(volume == 0)[:k]:
            v = np.zeros(n)
            v[members[bounds[c] : bounds[c + 1]]] = 1.0
            pairs.append((0.0, int(rank[c]), v))
    # Descending value; equal values (to rounding) by component rank.
    pairs.sort(key=lambda p: (-round(p[0], 10), p[1]))
    pairs = pairs[:k]
    values = np.array([p[0] for p in pairs], dtype=np.float64)
    vectors = _fix_signs(np.column_stack([p[2] for p in pairs]))
    return values, vectors


def _leading_eigs(
    M, degree: np.ndarray, n_eigs: int, solver: str, random_state, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Leading ``n_eigs`` eigenpairs of an already normalised ``M``, descending."""
    n = M.shape[0]
    solver = _resolve_solver(solver, n)
    k = _check_n_eigs(n_eigs, n, solver)
    if tol < 0:
        raise ValueError(f"tol must be non-negative, got {tol}")
    if solver == "dense" and n > DENSE_MAX_N:
        raise ValueError(
            f"solver='dense' is limited to n <= {DENSE_MAX_N} points, got n={n}; "
            "use solver='arpack' or 'lobpcg'"
        )
    rng = check_random_state(random_state)
    n_components, component = (
        (1, None) if isinstance(M, LinearOperator) else connected_components(M, directed=False)
    )
    if n_components > 1:
        return _eigs_by_component(M, degree, k, component, n_components, solver, rng, tol)
    values, vectors = _eigs_connected(M, k, solver, rng, tol)
    order = np.argsort(values, kind="stable")[::-1]
    values = np.asarray(values[order], dtype=np.float64)
    vectors = _fix_signs(np.asarray(vectors[:, order], dtype=np.float64))
    return values, vectors


def spectral_eigs(
    W,
    n_eigs: int,
    *,
    solver: Solver = "auto",
    random_state: int | np.random.RandomState | None = None,
    tol: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Largest eigenpairs of the normalised affinity ``M = D^{-1/2} W D^{-1/2}``.

    Parameters
    ----------
    W : ndarray, scipy sparse matrix/array or LinearOperator of shape (n, n)
        Symmetric non-negative affinity (see :func:`normalized_affinity`).
    n_eigs : int
        Number of eigenpairs: in ``[1, n]`` for the dense solver, ``[1, n - 1]``
        for the iterative ones.
    solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        ``"dense"``: :func:`scipy.linalg.eigh` on the materialised ``M``
        (``n <= 2000`` only; a LinearOperator is applied to the identity in
        blocks).  ``"arpack"``: :func:`scipy.sparse.linalg.eigsh` with
        ``which="LA"``; on a matrix that has not converged after 100 restarts
        (top eigenvalues crowded just below 1), shift-invert ARPACK, which
        factorises ``M`` (sparse LU); a LinearOperator keeps ARPACK's own
        budget.  ``"lobpcg"``: :func:`scipy.sparse.linalg.lobpcg` with
        ``largest=True``, falling back to ARPACK with a
        :class:`~sklearn.exceptions.ConvergenceWarning` if it does not reach the
        tolerance.  ``"auto"``: dense for ``n <= 1000``, otherwise ARPACK.
    random_state : int, RandomState instance or None, default=None
        Seeds the starting vector of ARPACK and the starting block of LOBPCG.
    tol : float, default=0.0
        Convergence tolerance of the iterative solvers; ``0`` means machine
        precision for ARPACK and a residual norm of ``1e-7`` for LOBPCG.

    Returns
    -------
    eigenvalues : ndarray of shape (n_eigs,)
        The largest eigenvalues of ``M``, in descending order (``1 -`` the
        smallest eigenvalues of the normalised Laplacian ``I - M``).
    eigenvectors : ndarray of shape (n, n_eigs)
        Orthonormal eigenvectors, column ``j`` for ``eigenvalues[j]``, each with
        its largest-magnitude entry positive (a deterministic sign; within a
        repeated eigenvalue the basis of the eigenspace is solver-dependent).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.kron(np.eye(2), np.ones((3, 3)))  # two disconnected triangles
    >>> values, vectors = spectral_eigs(W, 3)
    >>> np.round(values, 6) + 0.0
    array([1., 1., 0.])
    """
    M, degree = normalized_affinity(W)
    return _leading_eigs(M, degree, n_eigs, solver, random_state, tol)


# ------------------------------------------------------------------ clustering
def estimate_n_clusters(eigenvalues, *, max_clusters: int | None = None) -> int:
    """Number of clusters from the largest eigengap.

    With the eigenvalues of the normalised affinity ``M`` sorted descending,
    ``lambda_1 >= lambda_2 >= ...`` (1-based; equivalently the normalised
    Laplacian eigenvalues ``1 - lambda_k`` ascending), the estimate is::

        K = argmax_{k = 1..K_max} (lambda_k - lambda_{k+1})

    i.e. the number of eigenvalues before the largest drop.  Ties go to the
    smallest ``k``.  For ``c`` connected components ``lambda_1 = ... = lambda_c
    = 1`` and, when the components are well connected inside, the largest drop
    follows ``lambda_c``.

    Parameters
    ----------
    eigenvalues : array-like of shape (m,)
        Eigenvalues of ``M`` (sorted descending here if they are not already).
    max_clusters : int or None, default=None
        Largest ``K`` considered, ``K_max``; ``None`` or anything above
        ``m - 1`` means ``m - 1`` (the last gap needs ``lambda_{K_max + 1}``).

    Returns
    -------
    int
        The estimate ``K``, at least 1 (1 when fewer than two eigenvalues are
        given).

    Examples
    --------
    >>> estimate_n_clusters([1.0, 0.99, 0.97, 0.4, 0.35])
    3
    >>> estimate_n_clusters([1.0, 0.99, 0.97, 0.4, 0.35], max_clusters=2)
    2
    """
    values = np.asarray(eigenvalues, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(values)):
        raise ValueError("eigenvalues must be finite")
    if max_clusters is not None and (
        not isinstance(max_clusters, numbers.Integral)
        or isinstance(max_clusters, bool)
        or max_clusters < 1
    ):
        raise ValueError(f"max_clusters must be a positive integer or None, got {max_clusters!r}")
    if values.size < 2:
        return 1
    values = np.sort(values)[::-1]
    k_max = values.size - 1 if max_clusters is None else min(int(max_clusters), values.size - 1)
    gaps = values[:k_max] - values[1 : k_max + 1]
    return max(1, int(np.argmax(gaps)) + 1)


def spectral_embedding_njw(vectors) -> np.ndarray:
    """Ng-Jordan-Weiss row normalisation of an eigenvector matrix.

    Parameters
    ----------
    vectors : array-like of shape (n, k)
        Leading eigenvectors, one column each.

    Returns
    -------
    ndarray of shape (n, k)
        Each row divided by its Euclidean norm; rows that are exactly zero
        (e.g. isolated points) stay zero.

    Examples
    --------
    >>> spectral_embedding_njw([[3.0, 4.0], [0.0, 0.0]])
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    V = np.asarray(vectors, dtype=np.float64)
    if V.ndim != 2:
        raise ValueError(f"vectors must be 2-d, got shape {V.shape}")
    norms = np.linalg.norm(V, axis=1)
    out = np.zeros_like(V)
    nonzero = norms > 0
    out[nonzero] = V[nonzero] / norms[nonzero, None]
    return out


def canonical_labels(labels) -> np.ndarray:
    """Relabel so that cluster ids appear in order ``0, 1, 2, ...`` along the points.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Any cluster labels.

    Returns
    -------
    ndarray of shape (n,) of int
        The same partition, with the cluster of point 0 labelled 0, the next new
        cluster met labelled 1, and so on.

    Examples
    --------
    >>> canonical_labels([2, 2, 0, 1, 0])
    array([0, 0, 1, 2, 1])
    """
    labels = np.asarray(labels).reshape(-1)
    if labels.size == 0:
        return np.zeros(0, dtype=np.intp)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def spectral_clustering(
    W,
    n_clusters: int | None = None,
    *,
    max_clusters: int = 10,
    n_init: int = 10,
    solver: Solver = "auto",
    random_state: int | np.random.RandomState | None = None,
    n_eigenvalues: int | None = None,
    tol: float = 0.0,
) -> Bunch:
    """Normalised (Ng-Jordan-Weiss) spectral clustering of a symmetric affinity.

    The leading eigenvectors of ``M = D^{-1/2} W D^{-1/2}`` (the smallest of
    the normalised Laplacian) are computed, the number of clusters is
    estimated from the largest eigengap when not given, the first ``K``
    eigenvectors are row-normalised and clustered by k-means.

    Parameters
    ----------
    W : ndarray, scipy sparse matrix/array or LinearOperator of shape (n, n)
        Symmetric non-negative affinity (not validated here; see
        :class:`~geoforest.cluster.KernelSpectralClustering`).
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it with
        :func:`estimate_n_clusters` from ``max_clusters + 1`` eigenvalues.
    max_clusters : int, default=10
        Largest number of clusters the eigengap may choose.
    n_init : int, default=10
        k-means restarts.
    solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        Eigensolver, see :func:`spectral_eigs`.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver start and k-means; an int makes the result
        reproducible.
    n_eigenvalues : int or None, default=None
        Eigenpairs to compute, at least the number the clustering needs
        (``n_clusters``, or ``max_clusters + 1`` when estimating); ``None``
        computes just that many.  Ask for ``n_clusters + 1`` to read the
        eigengap after ``K`` from ``eigenvalues``.
    tol : float, default=0.0
        Tolerance of the iterative eigensolvers, see :func:`spectral_eigs`.

    Returns
    -------
    Bunch
        ``labels`` (n,) int, in canonical order (clusters numbered by first
        appearance); ``n_clusters`` the ``K`` used; ``eigenvalues`` of ``M``,
        descending (``n_clusters`` of them, or up to ``max_clusters + 1`` when
        estimating, or ``n_eigenvalues``); ``embedding`` (n, K) the
        NJW-normalised eigenvectors; ``isolated`` the indices of zero-degree
        points; ``unembedded`` the indices of the points whose embedding row
        is zero: the isolated ones and, when the affinity has more connected
        components than ``K``, the points of the components the leading
        eigenvectors leave out (the eigenvalue 1 of ``M`` is then repeated,
        and the larger components are taken first).  k-means runs on the
        other points; unembedded points join the largest cluster (a warning
        says how many there are).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.kron(np.eye(3), np.ones((4, 4)))  # three disconnected cliques
    >>> result = spectral_clustering(W, random_state=0)
    >>> result.n_clusters
    3
    >>> result.labels
    array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    """
    n = _n_nodes(W)
    if n < 2:
        raise ValueError(f"spectral clustering needs at least 2 points, got n={n}")
    if not isinstance(max_clusters, numbers.Integral) or max_clusters < 1:
        raise ValueError(f"max_clusters must be a positive integer, got {max_clusters!r}")
    if n_clusters is not None:
        if not isinstance(n_clusters, numbers.Integral) or isinstance(n_clusters, bool):
            raise TypeError(f"n_clusters must be an integer or None, got {n_clusters!r}")
        if not 1 <= n_clusters <= n:
            raise ValueError(f"n_clusters must be in [1, n={n}], got {n_clusters}")
    resolved = _resolve_solver(solver, n)
    # The eigensolver start comes from ``rng``; k-means gets ``random_state`` itself
    # (an int seeds both reproducibly, a RandomState instance is shared).
    rng = check_random_state(random_state)

    M, degree = normalized_affinity(W)
    isolated = np.flatnonzero(~(degree > 0))
    if isolated.size:
        warnings.warn(
            f"{isolated.size} point(s) have zero degree (isolated in the affinity); "
            "they get a zero embedding row and an arbitrary cluster",
            UserWarning,
            stacklevel=2,
        )

    if n_clusters is not None:
        if resolved != "dense" and n_clusters > n - 1:
            raise ValueError(
                f"n_clusters={n_clusters} needs n_clusters <= n - 1 = {n - 1} with the "
                f"iterative solver {resolved!r}; use solver='dense'"
            )
        n_eigs = int(n_clusters)
    else:
        n_eigs = min(int(max_clusters) + 1, n if resolved == "dense" else n - 1)
    if n_eigenvalues is not None:
        if not isinstance(n_eigenvalues, numbers.Integral) or n_eigenvalues < n_eigs:
            raise ValueError(
                f"n_eigenvalues must be an integer >= {n_eigs} (what the clustering "
                f"needs), got {n_eigenvalues!r}"
            )
        n_eigs = int(n_eigenvalues)
    values, vectors = _leading_eigs(M, degree, n_eigs, resolved, rng, tol)
    if n_clusters is None:
        k = estimate_n_clusters(values, max_clusters=int(max_clusters))
    else:
        k = int(n_clusters)

    labels, embedding, unembedded = _njw_kmeans(vectors, isolated, k, n_init, random_state)
    outside = np.setdiff1d(unembedded, isolated)
    if outside.size:
        warnings.warn(
            f"{outside.size} point(s) lie in connected components of the affinity that "
            f"none of the {k} leading eigenvectors covers; they join the largest cluster",
            UserWarning,
            stacklevel=2,
        )
    return Bunch(
        labels=labels,
        n_clusters=k,
        eigenvalues=values,
        embedding=embedding,
        isolated=isolated,
        unembedded=unembedded,
    )


def _njw_kmeans(vectors, isolated, k: int, n_init: int, random_state, rows=None):
    """k-means on the NJW embedding of the first ``k`` eigenvectors (of ``rows`` only)."""
    leading = vectors[:, :k].copy()
    # Exactly zero in theory (for non-zero eigenvalues); remove the rounding
    # noise so that the NJW normalisation does not blow it up to unit length.
    leading[isolated] = 0.0
    if rows is not None:
        leading = leading[rows]
    n = leading.shape[0]
    embedding = spectral_embedding_njw(leading)
    # Rows that are exactly zero: isolated points, and the points of connected
    # components none of the K leading eigenvectors covers (more components than K).
    unembedded = np.flatnonzero(~np.any(embedding != 0.0, axis=1))
    labels = np.zeros(n, dtype=np.intp)
    embedded = np.setdiff1d(np.arange(n), unembedded, assume_unique=True)
    if k > 1 and embedded.size >= k:
        km = KMeans(n_clusters=k, n_init=n_init, random_state=random_state)
        # One OpenMP thread: the embedding has K columns, threads gain nothing, and
        # on a loaded 2-core machine scikit-learn's OpenMP k-means took 3-6 s per
        # fit of 1,000 points with 2 threads and 0.1 s with 1 (same result).
        with threadpool_limits(limits=1, user_api="openmp"):
            labels[embedded] = km.fit_predict(embedding[embedded])
        labels[unembedded] = np.argmax(np.bincount(labels[embedded], minlength=k))
    return canonical_labels(labels), embedding, unembedded


#: :func:`spectral_partitions` checks partitions on at most this many points.
PARTITION_SAMPLE = 5000


def spectral_partitions(
    W,
    max_clusters: int,
    *,
    n_init: int = 4,
    solver: Solver = "auto",
    random_state: int | np.random.RandomState | None = None,
    tol: float = 0.0,
    max_samples: int | None = PARTITION_SAMPLE,
) -> Bunch:
    """Eigenvalues and the NJW partitions for every ``K`` from 2 to ``max_clusters`` at once.

    One eigensolve of ``max_clusters + 1`` pairs, then k-means on the first
    ``K`` eigenvectors for each ``K``: what a label-free choice of ``K``
    needs to judge the candidates (:func:`~geoforest.cluster.choose_by_relative_gap`).
    Above ``max_samples`` points the k-means runs on a random subset of the
    rows (the cluster *sizes* are what is judged; 5,000 rows estimate them
    to about 1 %).

    Parameters
    ----------
    W : ndarray, scipy sparse matrix/array or LinearOperator of shape (n, n)
        Symmetric non-negative affinity.
    max_clusters : int
        Largest ``K``.
    n_init : int, default=4
        k-means restarts per ``K``.
    solver, random_state, tol
        As in :func:`spectral_clustering`.
    max_samples : int or None, default=5000
        Rows the partitions are computed on (``None``: all).

    Returns
    -------
    Bunch
        ``eigenvalues`` (descending, up to ``max_clusters + 1``), ``rows``
        (indices of the points partitioned) and ``labels`` (dict ``K ->``
        labels of ``rows``, for ``K = 2 ..`` as many as the eigenvalues allow).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.kron(np.eye(3), np.ones((4, 4))) + 0.01
    >>> parts = spectral_partitions(W, 4, random_state=0)
    >>> parts.labels[3]
    array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    """
    n = _n_nodes(W)
    resolved = _resolve_solver(solver, n)
    n_eigs = min(int(max_clusters) + 1, n if resolved == "dense" else n - 1)
    rng = check_random_state(random_state)
    M, degree = normalized_affinity(W)
    isolated = np.flatnonzero(~(degree > 0))
    values, vectors = _leading_eigs(M, degree, n_eigs, resolved, rng, tol)
    rows = None
    if max_samples is not None and n > max_samples:
        rows = np.sort(rng.choice(n, size=int(max_samples), replace=False))
    seed = rng.randint(np.iinfo(np.int32).max)
    labels = {
        k: _njw_kmeans(vectors, isolated, k, n_init, seed, rows)[0]
        for k in range(2, min(int(max_clusters), vectors.shape[1]) + 1)
    }
    return Bunch(eigenvalues=values, rows=np.arange(n) if rows is None else rows, labels=labels)
