"""The normalised affinity ``M = D^{-1/2} W D^{-1/2}`` and its leading eigenpairs.

The affinity ``W`` may be a dense array, a scipy sparse matrix/array, or a
:class:`scipy.sparse.linalg.LinearOperator` that only computes ``W @ x``.

We always work with ``M`` rather than the normalised Laplacian ``L = I - M``:
both have the same eigenvectors, the smallest eigenvalues of ``L`` are ``1 -``
the largest of ``M``, and Krylov solvers converge more reliably on the largest
algebraic eigenvalues of ``M`` than on the smallest of ``L``.  The solvers
here (dense, ARPACK with a shift-invert fallback, LOBPCG, and a disconnected
affinity one connected component at a time) serve every spectral method of
the library (:mod:`geoforest.graph._spectral`, ``DiffusionMap``).
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
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import ThreadpoolController

__all__ = ["AUTO_DENSE_MAX_N", "normalized_affinity", "spectral_eigs", "walk_eigenpairs"]

Solver = Literal["auto", "dense", "arpack", "lobpcg", "shift-invert"]

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

_SOLVERS = ("auto", "dense", "arpack", "lobpcg", "shift-invert")

_CONTROLLER: ThreadpoolController | None = None


def _one_thread(user_api: str):
    """A context that runs ``user_api`` ("blas" or "openmp") on one thread.

    ``threadpoolctl.threadpool_limits`` looks up the loaded native libraries
    on every call, which costs milliseconds: more than a k-means of a
    thousand points, and the spectral step enters such a context for every
    candidate.  The libraries are looked up once here, the first time
    (numpy's and scipy's BLAS and scikit-learn's OpenMP are loaded by this
    package's imports by then).
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api=user_api)


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
    # find the other cores busy (another process, joblib workers) wait for them
    # (docs/results/rpf-cluster.md, "Thread limits").
    with _one_thread("blas"):
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
    restarts and can still return a wrong second eigenvalue at ``tol=1e-6``.
    So plain Lanczos gets :data:`_ARPACK_MAXITER` restarts (healthy affinities
    converge in a few); past that, a sparse matrix goes to shift-invert ARPACK,
    which separates the crowded eigenvalues at the price of a sparse LU (nearly
    dense for a forest kernel); figures in ``docs/results/rpf-cluster.md``
    ("The eigensolver fix").  A LinearOperator (LLPD's affinity) cannot be
    factorised: it keeps plain Lanczos with ARPACK's own budget, then a larger
    Krylov space.  Problems of at most :data:`DENSE_MAX_N` points end with the
    dense solver if all else fails.
    """
    n = M.shape[0]
    v0 = rng.uniform(-1.0, 1.0, size=n)
    operator = isinstance(M, LinearOperator)
    try:
        # An operator cannot be factorised: its plain Lanczos keeps ARPACK's own
        # budget (10 n restarts), which LLPD's results rely on.
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
    if solver == "shift-invert":
        return _eigs_shift_invert(M, k, rng.uniform(-1.0, 1.0, size=M.shape[0]), tol)
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
    if solver == "shift-invert" and isinstance(M, LinearOperator):
        raise ValueError("solver='shift-invert' factorises M: it needs a matrix, not an operator")
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
    solver : {"auto", "dense", "arpack", "lobpcg", "shift-invert"}, default="auto"
        ``"dense"``: :func:`scipy.linalg.eigh` on the materialised ``M``
        (``n <= 2000`` only; a LinearOperator is applied to the identity in
        blocks).  ``"arpack"``: :func:`scipy.sparse.linalg.eigsh` with
        ``which="LA"``; on a matrix that has not converged after 100 restarts
        (top eigenvalues crowded just below 1), shift-invert ARPACK, which
        factorises ``M`` (sparse LU); a LinearOperator keeps ARPACK's own
        budget.  ``"lobpcg"``: :func:`scipy.sparse.linalg.lobpcg` with
        ``largest=True``, falling back to ARPACK with a
        :class:`~sklearn.exceptions.ConvergenceWarning` if it does not reach the
        tolerance.  ``"shift-invert"``: ARPACK on ``(M - (1 + 1e-6) I)^-1``
        straight away (a sparse LU of ``M``; not for a LinearOperator), the
        fallback of ``"arpack"`` and the solver of
        :class:`~geoforest.DiffusionMap` above 1,000 points.  ``"auto"``:
        dense for ``n <= 1000``, otherwise ARPACK.
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


def walk_eigenpairs(
    W,
    n_eigs: int,
    *,
    solver: Solver = "auto",
    random_state: int | np.random.RandomState | None = None,
    tol: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leading eigenpairs of a random walk's symmetric form, for diffusion maps.

    As :func:`spectral_eigs`, but ``"auto"`` (and any iterative solver asked
    for every eigenpair) is dense up to :data:`AUTO_DENSE_MAX_N` points and
    shift-invert ARPACK above: the top of a diffusion spectrum crowds just
    below 1, where plain Lanczos needs thousands of restarts
    (``docs/paths-and-diffusion.md``).

    Returns
    -------
    eigenvalues : ndarray of shape (n_eigs,)
        Descending.
    phi : ndarray of shape (n, n_eigs)
        Unit eigenvectors of ``M = D^{-1/2} W D^{-1/2}``, signs fixed.
    degree : ndarray of shape (n,)
        ``W 1``.
    """
    M, degree = normalized_affinity(W)
    n = M.shape[0]
    if solver == "auto" or (solver != "dense" and n_eigs >= n):
        solver = "dense" if n <= AUTO_DENSE_MAX_N or n_eigs >= n else "shift-invert"
    if solver == "shift-invert":
        v0 = check_random_state(random_state).uniform(-1.0, 1.0, n)
        values, phi = _eigs_shift_invert(M, n_eigs, v0, tol)
        return values, _fix_signs(phi), degree
    values, phi = _leading_eigs(M, degree, n_eigs, solver, random_state, tol)
    return values, phi, degree
