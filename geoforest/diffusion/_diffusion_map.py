"""Diffusion maps: the random walk on a sparse kNN graph, its eigenpairs, distances ``D_t``."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import check_not_complex, validate_data
from ..cluster._spectral import (
    _eigs_shift_invert,
    _fix_signs,
    _leading_eigs,
    normalized_affinity,
)
from ._graph import bridge_components, knn, symmetrize

__all__ = ["DiffusionMap"]

#: ``eigen_solver="auto"`` is dense up to this many points, shift-invert ARPACK above.
AUTO_DENSE_MAX_N = 1000
#: Eigenvalues smaller than this (in absolute value) are not used to re-average ``psi``.
_MIN_STABLE_EIGENVALUE = 1e-3


def _check_sparse_graph(G, name: str) -> sp.csr_matrix:
    if not sp.issparse(G):
        G = np.asarray(G, dtype=np.float64)
        if G.ndim != 2:
            raise ValueError(f"a precomputed {name} must be a 2-d (n, n) matrix, got {G.shape}")
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


class DiffusionMap(BaseEstimator):
    """Diffusion map of a sparse kNN graph: eigenpairs of ``P = D^-1 W`` and distances ``D_t``.

    The kernel ``W`` is the symmetric kNN graph with Gaussian weights
    ``W_ij = exp(-||x_i - x_j||^2 / sigma^2)`` when ``x_j`` is among the
    ``n_neighbors`` nearest neighbours of ``x_i`` or the reverse, or a
    precomputed sparse affinity or distance graph (for example a forest's
    ``kneighbors_graph``).  ``P = D^-1 W`` is the random walk on it, with
    stationary distribution ``pi = d / sum(d)``.  Its leading eigenpairs come
    from the symmetric ``M = D^{-1/2} W D^{-1/2}`` (eigenvectors ``phi``,
    same eigenvalues) through :mod:`geoforest.cluster`'s eigensolvers; the
    right eigenvectors of ``P`` are ``psi = phi / sqrt(pi)`` (the textbook
    normalisation, ``sum_i pi_i psi_k(i)^2 = 1``).  The diffusion map at time
    ``t`` is ``Psi_t(x) = (lambda_k^t psi_k(x))_k`` and the diffusion distance

    ``D_t(x_i, x_j)^2 = sum_l (P^t_il - P^t_jl)^2 / pi_l = ||Psi_t(x_i) - Psi_t(x_j)||^2``

    is exact when all eigenpairs are kept and truncated to the leading
    ``n_components`` otherwise (the others decay like ``lambda^t``).

    Parameters
    ----------
    n_neighbors : int, default=15
        Neighbours per point in the kNN graph (``affinity="gaussian"``).
    sigma : "auto" or float, default="auto"
        Kernel scale; ``"auto"`` is the median over the points of the distance
        to their ``n_neighbors``-th neighbour (of the largest stored distance
        of every row for ``"precomputed_distance"``).
    n_components : int, default=10
        Eigenpairs kept, the trivial one (``lambda = 1``, ``psi`` constant on
        a connected graph) included; at most ``n_samples``.
    affinity : {"gaussian", "precomputed", "precomputed_distance"}, default="gaussian"
        ``"gaussian"``: ``fit(X)`` with features.  ``"precomputed"``:
        ``fit(W)`` with a sparse non-negative affinity, used as
        ``max(W, W^T)``.  ``"precomputed_distance"``: ``fit(G)`` with a sparse
        graph of distances (stored entries are edges, an explicitly stored 0
        is distance 0), turned into ``exp(-d^2 / sigma^2)`` and symmetrised.
    normalization : {"textbook", "symmetric"}, default="textbook"
        ``"textbook"``: ``psi = phi / sqrt(pi)`` (distances equal the
        definition above).  ``"symmetric"``: the unit eigenvectors ``phi`` of
        ``M`` themselves, as in the public LUND code; distances then weigh
        points by ``sqrt(pi)`` and are not the diffusion distance.
    connect : bool, default=True
        With ``affinity="gaussian"``, join the connected components of the
        kNN graph by the edges of a minimum spanning forest between them,
        weighted ``exp(-min(d / sigma, cutoff)^2)`` (see Notes).
        Precomputed graphs are used as given.
    kernel : {"gaussian", "adaptive"}, default="gaussian"
        ``"gaussian"``: one scale ``sigma`` for every edge.  ``"adaptive"``:
        self-tuning weights ``exp(-d^2 / (s_i s_j))``, ``s_i`` the distance
        to the ``local_scale_neighbor``-th neighbour (Zelnik-Manor & Perona);
        measured worse for LUND on noisy data (``docs/results/lund.md``).
    local_scale_neighbor : int, default=7
        Neighbour rank of the local scales of ``kernel="adaptive"``.
    cutoff : float or None, default=2.0
        With ``kernel="gaussian"``, edges longer than ``cutoff * sigma``
        (weight below ``exp(-cutoff^2)``) are dropped before the components
        are bridged, and bridges weigh at least ``exp(-cutoff^2)``; ``None``
        keeps every kNN edge (bridges then weigh at least ``exp(-1)``).
    eigen_solver : {"auto", "dense", "shift-invert", "arpack", "lobpcg"}, default="auto"
        ``"shift-invert"``: ARPACK on ``(M - (1 + 1e-6) I)^-1`` (sparse LU),
        fast on the crowded top of a diffusion spectrum; the others as in
        :func:`geoforest.cluster.spectral_eigs`.  ``"auto"``: dense up to
        1,000 points, shift-invert above.
    eigen_tol : float, default=1e-8
        Tolerance of the iterative eigensolvers.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver's starting vector.

    Attributes
    ----------
    affinity_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The symmetric affinity ``W`` (bridges included).
    degree_ : ndarray of shape (n_samples,)
        ``d = W 1``.
    stationary_ : ndarray of shape (n_samples,)
        ``pi = d / sum(d)``.
    eigenvalues_ : ndarray of shape (n_components,)
        Leading eigenvalues of ``P``, descending.
    eigenvectors_ : ndarray of shape (n_samples, n_components)
        ``psi`` (or ``phi`` with ``normalization="symmetric"``), one column per
        eigenvalue.
    sigma_ : float
        Kernel scale used (``nan`` for ``affinity="precomputed"``).
    n_bridges_ : int
        Edges added to connect the graph.
    n_graph_components_ : int
        Connected components of ``W`` (1 after bridging).
    kernel_density_ : ndarray of shape (n_samples,)
        Row sums of the kernel before symmetrisation: ``sum_{j in NN_k(i)}
        exp(-d_ij^2 / sigma^2)`` (the degree of a precomputed affinity);
        :class:`~geoforest.LUND` uses it as the density.

    Notes
    -----
    Three things go wrong on noisy data with a plain kNN graph, and are
    handled here:

    * *Disconnected graphs.*  Groups of background points are often their
      own connected components.  Each then has eigenvalue exactly 1 and
      stays at a constant, large ``D_t`` from everything for every ``t``,
      and a few leading eigenvectors are spent on them.  ``connect=True``
      adds the ``c - 1`` bridges of a Euclidean minimum spanning forest of
      the components.  Edges longer than ``cutoff * sigma`` are dropped
      first and a bridge weighs at least ``exp(-cutoff^2)``, so every edge
      weighs between ``exp(-cutoff^2)`` and 1: no group of points hangs on
      edges far weaker than its own (such a group has an eigenvalue next to
      1 and an eigenvector living on it alone), a small component mixes
      with its neighbour within a few steps (its volume is small), while a large
      cluster attached by one bridge stays apart for a long time (its volume
      is large) — the distinction diffusion is meant to make.
    * *Huge ``1/sqrt(pi)`` for low-degree points.*  ``psi = phi / sqrt(pi)``
      amplifies the eigensolver's absolute error ``epsilon`` to
      ``epsilon / sqrt(pi_i)``.  Since ``psi`` is a right eigenvector,
      ``psi = P psi / lambda``: every point's value is recomputed as the
      ``P``-average of its neighbours' (for ``|lambda| > 1e-3``), which is
      exact for exact eigenvectors and bounded by the neighbours' values.
    * Non-integer ``t`` with a negative eigenvalue uses
      ``sign(lambda) |lambda|^t``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.RandomState(0)
    >>> X = np.vstack([rng.normal(0, 0.1, (30, 2)), rng.normal(3, 0.1, (30, 2))])
    >>> dm = DiffusionMap(n_neighbors=5, n_components=4, random_state=0).fit(X)
    >>> dm.n_bridges_
    1
    >>> D = dm.distances(t=8, rows=[0, 30])
    >>> bool(D[0, 1] < D[0, 35])  # same cluster closer than the other cluster
    True
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "sigma": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "affinity": [StrOptions({"gaussian", "precomputed", "precomputed_distance"})],
        "normalization": [StrOptions({"textbook", "symmetric"})],
        "connect": ["boolean"],
        "kernel": [StrOptions({"gaussian", "adaptive"})],
        "cutoff": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "local_scale_neighbor": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "shift-invert", "arpack", "lobpcg"})],
        "eigen_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_neighbors: int = 15,
        *,
        sigma: str | float = "auto",
        n_components: int = 10,
        affinity: str = "gaussian",
        normalization: str = "textbook",
        connect: bool = True,
        kernel: str = "gaussian",
        cutoff: float | None = 2.0,
        local_scale_neighbor: int = 7,
        eigen_solver: str = "auto",
        eigen_tol: float = 1e-8,
        random_state=None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.n_components = n_components
        self.affinity = affinity
        self.normalization = normalization
        self.connect = connect
        self.kernel = kernel
        self.cutoff = cutoff
        self.local_scale_neighbor = local_scale_neighbor
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.random_state = random_state

    # ------------------------------------------------------------------ graph
    def _gaussian_graph(
        self, X: np.ndarray, neighbors: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        n = X.shape[0]
        if self.n_neighbors >= n:
            raise ValueError(f"n_neighbors={self.n_neighbors} must be smaller than n_samples={n}")
        dist, ind = knn(X, self.n_neighbors) if neighbors is None else neighbors
        self.knn_distances_, self.knn_indices_ = dist, ind
        sigma = self._resolve_sigma(dist[:, -1])
        K = sp.csr_matrix(
            (np.exp(-((dist / sigma) ** 2)).ravel(), ind.ravel(),
             np.arange(0, ind.size + 1, ind.shape[1])),
            shape=(n, n),
        )  # fmt: skip
        if self.kernel == "adaptive":
            local = np.maximum(dist[:, min(self.local_scale_neighbor, dist.shape[1]) - 1], 1e-300)
            w = np.exp(-(dist**2) / (local[:, None] * local[ind]))
            G = sp.csr_matrix(
                (w.ravel(), ind.ravel(), np.arange(0, ind.size + 1, ind.shape[1])), shape=(n, n)
            )
            return K, self._connect(X, symmetrize(G), sigma, (dist, ind))
        G = K.copy()
        if self.cutoff is not None:
            # Edges longer than cutoff * sigma carry (almost) no weight; keeping them
            # leaves far points nearly isolated (eigenvalue ~1, localised eigenvectors).
            G.data[G.data < np.exp(-(float(self.cutoff) ** 2))] = 0.0
            G.eliminate_zeros()
        return K, self._connect(X, symmetrize(G), sigma, (dist, ind))

    def _resolve_sigma(self, kth: np.ndarray) -> float:
        if self.sigma != "auto":
            self.sigma_ = float(self.sigma)
            return self.sigma_
        sigma = float(np.median(kth))
        if not sigma > 0:
            positive = kth[kth > 0]
            if positive.size == 0:
                raise ValueError(
                    "every point coincides with its neighbours (all kNN distances are 0); "
                    "sigma cannot be estimated — pass sigma or remove duplicates"
                )
            sigma = float(np.median(positive))
        self.sigma_ = sigma
        return sigma

    def _connect(self, X: np.ndarray, W: sp.csr_matrix, sigma: float, neighbors) -> sp.csr_matrix:
        self.n_bridges_ = 0
        if not self.connect:
            return W
        pairs, lengths = bridge_components(X, W, neighbors)
        if lengths.size == 0:
            return W
        c = 1.0 if self.cutoff is None else float(self.cutoff)
        w = np.exp(-(np.minimum(lengths / sigma, c) ** 2))
        n = X.shape[0]
        B = sp.csr_matrix((w, (pairs[:, 0], pairs[:, 1])), shape=(n, n))
        self.n_bridges_ = int(lengths.size)
        return symmetrize(W + B + B.T)

    def _precomputed_graph(self, G) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        self.n_bridges_ = 0
        check_not_complex(G, self)  # a float64 cast would drop the imaginary part
        if self.affinity == "precomputed":
            K = _check_sparse_graph(G, "affinity")
            self.sigma_ = float("nan")
            return K, symmetrize(K)
        D = _check_sparse_graph(G, "distance graph")
        row_max = np.zeros(D.shape[0])
        np.maximum.at(row_max, np.repeat(np.arange(D.shape[0]), np.diff(D.indptr)), D.data)
        sigma = self._resolve_sigma(row_max[np.diff(D.indptr) > 0])
        K = D.copy()
        K.data = np.exp(-((K.data / sigma) ** 2))  # explicit zeros become weight 1
        return K, symmetrize(K)

    # -------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Build the graph and compute the leading eigenpairs of the random walk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or sparse (n_samples, n_samples)
            Features, or the precomputed affinity / distance graph.
        y : None
            Ignored.

        Returns
        -------
        self : DiffusionMap
        """
        return self._fit(X)

    def _fit(self, X, neighbors: tuple[np.ndarray, np.ndarray] | None = None):
        """``fit``, optionally on given (e.g. spatially restricted) kNN lists of ``X``."""
        self._validate_params()
        if self.affinity == "gaussian":
            X = validate_data(self, X, dtype=np.float64, order="C", ensure_min_samples=2)
            K, W = self._gaussian_graph(X, neighbors)
        else:
            K, W = self._precomputed_graph(X)
            self.n_features_in_ = K.shape[0]
        n = W.shape[0]
        if self.n_components > n:
            raise ValueError(f"n_components={self.n_components} exceeds n_samples={n}")
        self.kernel_density_ = np.asarray(K.sum(axis=1)).ravel()
        self.affinity_ = W
        self._eigendecompose(W)
        return self

    def _eigendecompose(self, W: sp.csr_matrix) -> None:
        n = W.shape[0]
        M, degree = normalized_affinity(W)
        if np.any(degree <= 0):
            raise ValueError(
                f"{int(np.sum(degree <= 0))} point(s) have no edge in the affinity; "
                "the random walk is undefined there"
            )
        self.n_graph_components_ = int(connected_components(W, directed=False)[0])
        if self.n_graph_components_ > 1:
            warnings.warn(
                f"the affinity has {self.n_graph_components_} connected components; "
                "each keeps eigenvalue 1 and its points stay apart at every t",
                UserWarning,
                stacklevel=3,
            )
        solver = self.eigen_solver
        if solver == "auto" or (solver != "dense" and self.n_components >= n):
            solver = "dense" if n <= AUTO_DENSE_MAX_N or self.n_components >= n else "shift-invert"
        if solver == "shift-invert":
            # The top of a diffusion spectrum is crowded just below 1, where plain
            # Lanczos needs thousands of restarts (194 s for 20 pairs at n = 20,000,
            # tol 1e-8); shift-invert: 1.1 s (``docs/results/lund.md``).
            v0 = check_random_state(self.random_state).uniform(-1.0, 1.0, n)
            values, phi = _eigs_shift_invert(M, self.n_components, v0, float(self.eigen_tol))
            phi = _fix_signs(phi)
        else:
            values, phi = _leading_eigs(M, degree, self.n_components, solver,
                                        self.random_state, float(self.eigen_tol))  # fmt: skip
        self.degree_ = degree
        self.stationary_ = degree / degree.sum()
        self.eigenvalues_ = values
        if self.normalization == "symmetric":
            self.eigenvectors_ = phi
            return
        psi = phi * np.sqrt(degree.sum() / degree)[:, None]
        # psi = P psi / lambda: recompute every value as the average of its neighbours'
        # (bounded, and exact for exact eigenvectors), see the class Notes.
        stable = np.abs(values) > _MIN_STABLE_EIGENVALUE
        if np.any(stable):
            P_psi = (W @ psi[:, stable]) / degree[:, None]
            psi[:, stable] = P_psi / values[stable]
        self.eigenvectors_ = psi

    # ------------------------------------------------------------------ query
    def transform(self, t: float = 1.0) -> np.ndarray:
        """The diffusion map ``Psi_t`` of the training points.

        Parameters
        ----------
        t : float, default=1.0
            Diffusion time, ``t >= 0``.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            ``lambda_k^t psi_k(x_i)``; Euclidean distances between rows are
            ``D_t``.
        """
        check_is_fitted(self, "eigenvectors_")
        if not isinstance(t, numbers.Real) or not np.isfinite(t) or t < 0:
            raise ValueError(f"t must be a finite number >= 0, got {t!r}")
        lam = self.eigenvalues_
        power = np.sign(lam) * np.abs(lam) ** float(t)
        return self.eigenvectors_ * power[None, :]

    def distances(self, t: float = 1.0, rows=None, cols=None) -> np.ndarray:
        """Diffusion distances ``D_t`` between the training points ``rows`` and ``cols``.

        Parameters
        ----------
        t : float, default=1.0
        rows : array-like of int or None
            Row points (default: all; beware ``n x n``).
        cols : array-like of int or None
            Column points (default: all).

        Returns
        -------
        ndarray of shape (len(rows), len(cols))
        """
        Y = self.transform(t)
        n = Y.shape[0]
        r = np.arange(n) if rows is None else self._indices(rows, n)
        c = np.arange(n) if cols is None else self._indices(cols, n)
        return cdist(Y[r], Y[c])

    @staticmethod
    def _indices(idx, n: int) -> np.ndarray:
        idx = np.asarray(idx).reshape(-1)
        if idx.dtype.kind not in "iu":
            raise TypeError("point indices must be integers")
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"point index out of range for {n} points")
        return idx % n

    def kneighbors(
        self, t: float = 1.0, n_neighbors: int = 10, return_distance: bool = True
    ) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """The ``n_neighbors`` nearest training points of every training point in ``D_t``.

        Exact: a K-d tree (scikit-learn's ``NearestNeighbors``) on ``Psi_t``,
        whose Euclidean distances are ``D_t``; nothing is ``n x n``.

        Parameters
        ----------
        t : float, default=1.0
        n_neighbors : int, default=10
            Neighbours per point, itself excluded (``< n_samples``).
        return_distance : bool, default=True

        Returns
        -------
        dist : ndarray of shape (n_samples, n_neighbors)
            Only with ``return_distance=True``.
        ind : ndarray of shape (n_samples, n_neighbors)
        """
        Y = self.transform(t)
        n = Y.shape[0]
        if not isinstance(n_neighbors, numbers.Integral) or not 1 <= n_neighbors < n:
            raise ValueError(f"n_neighbors must be in [1, {n - 1}], got {n_neighbors!r}")
        dist, ind = knn(Y, int(n_neighbors))
        return (dist, ind) if return_distance else ind

    def nearest_neighbors(self, t: float = 1.0) -> NearestNeighbors:
        """A fitted :class:`~sklearn.neighbors.NearestNeighbors` on ``Psi_t`` (custom queries)."""
        return NearestNeighbors().fit(self.transform(t))
