"""Spectral clustering of a precomputed affinity as a scikit-learn estimator."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import check_not_complex, validate_data
from ..graph import (
    MIN_RELATIVE_GAP,
    eigengap_scores,
    explain_choice,
    label_free_levels,
    spectral_clustering,
)

#: Relative tolerance (to the largest entry) of the symmetry check.
SYMMETRY_RTOL = 1e-8


def _check_symmetric_nonnegative(A) -> None:
    """Raise ``ValueError`` unless the explicit matrix ``A`` is symmetric and >= 0."""
    if sp.issparse(A):
        values = A.data
        asym = abs(A - A.T)
        max_asym = float(asym.max()) if asym.nnz else 0.0
    else:
        values = A
        max_asym = float(np.max(np.abs(A - A.T))) if A.size else 0.0
    if values.size and float(values.min()) < 0:
        raise ValueError(
            "Negative values in data passed to KernelSpectralClustering: the affinity "
            f"must be non-negative, got a minimum entry of {float(values.min()):g}"
        )
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    if max_asym > SYMMETRY_RTOL * max(scale, np.finfo(np.float64).tiny):
        raise ValueError(
            "the affinity must be symmetric: max |A - A.T| = "
            f"{max_asym:.3g} for a largest entry of {scale:.3g}"
        )


_NO_EDGE = (
    "the affinity X has no edge between two different points (every off-diagonal "
    "entry is 0), so it has no cluster structure to find; KernelSpectralClustering "
    "needs positive affinities between similar points"
)


def _check_has_edges(A) -> None:
    """Raise ``ValueError`` when no two different points have a positive affinity."""
    if sp.issparse(A):
        off_diagonal = A.count_nonzero() - np.count_nonzero(A.diagonal())
    else:
        off_diagonal = np.count_nonzero(A) - np.count_nonzero(np.diagonal(A))
    if off_diagonal == 0:
        raise ValueError(_NO_EDGE)


class KernelSpectralClustering(ClusterMixin, BaseEstimator):
    """Normalised spectral clustering of a precomputed affinity (kernel) matrix.

    The affinity ``A`` is normalised to ``M = D^{-1/2} A D^{-1/2}``, its leading
    eigenvectors (the smallest of the normalised Laplacian) are row-normalised
    as in Ng, Jordan & Weiss (2002) and clustered by k-means.  When
    ``n_clusters`` is ``None`` the number of clusters is chosen by
    ``selection``: the largest relative gap ``mu_(K+1) / mu_K`` of the
    normalised Laplacian among the ``K`` whose partition has no cluster under
    ``max(5, 2 % of n)`` points, or 1 when none reaches 2 (``"relgap"``,
    :func:`~geoforest.graph.choose_by_relative_gap`), or the largest gap
    ``lambda_K - lambda_(K+1)`` (``"eigengap"``).  This is the estimator
    behind every spectral method of geoforest (forest kernels, longest-leg path
    distances); see :func:`~geoforest.graph.spectral_clustering`.

    Parameters
    ----------
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it (``selection``).
    max_clusters : int, default=10
        Largest number of clusters the estimate may choose (ignored when
        ``n_clusters`` is given).
    selection : {"relgap", "eigengap"}, default="relgap"
        How ``K`` is estimated: the library's shared rule, or the largest
        eigengap.  A smooth affinity (a raw rpf-kernel, say) shows no gap
        under either rule and gets ``K = 1`` with a warning; sharpen it first,
        as :class:`~geoforest.ForestSpectralClustering` does
        (``docs/choosing-k.md``).
    n_init : int, default=10
        Number of k-means restarts.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg"}, default="auto"
        Eigensolver, see :func:`~geoforest.graph.spectral_eigs`; ``"auto"``
        is dense up to 1000 points and ARPACK beyond.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver start and k-means.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels, numbered by first appearance (point 0 is in cluster 0).
    n_clusters_ : int
        The number of clusters used (given or estimated).
    eigenvalues_ : ndarray
        Leading eigenvalues of ``M``, descending.
    n_clusters_scores_ : ndarray of shape (max_clusters,)
        The scores behind ``n_clusters_``: with ``selection="relgap"`` the
        best relative gap ``mu_(K+1) / mu_K`` per ``K`` among unfragmented
        partitions (:func:`choose_by_relative_gap`), where the entry of
        ``K = c``, the number of connected components of the affinity, holds
        the bar ``MIN_RELATIVE_GAP`` (2.0) and those below it are NaN; with
        ``selection="eigengap"`` (or ``n_clusters`` given) the eigengaps
        ``lambda_K - lambda_(K+1)`` (:func:`eigengap_scores`).  A
        :class:`LabelFreeChoiceWarning` says when ``K = 1`` was chosen or the
        runner-up scored within 10 % of the winner.
    embedding_ : ndarray of shape (n_samples, ``n_clusters_``)
        The row-normalised spectral embedding that k-means clustered.
    affinity_matrix_ : ndarray, sparse matrix or LinearOperator
        The validated affinity (float64; CSR when sparse).
    isolated_ : ndarray of int
        Indices of points with zero degree (zero embedding row, arbitrary cluster).
    n_features_in_ : int
        Number of columns of the affinity, i.e. ``n_samples``.

    See Also
    --------
    geoforest.graph.spectral_clustering : The same method as a function.
    sklearn.cluster.SpectralClustering : scikit-learn's spectral clustering.

    Notes
    -----
    ``fit`` accepts a dense array, a scipy sparse matrix/array or a
    :class:`scipy.sparse.linalg.LinearOperator` of shape ``(n, n)``.  Explicit
    matrices are checked to be finite, non-negative and symmetric (to a
    relative tolerance of ``1e-8``); for a LinearOperator only the shape and
    the degrees ``A @ 1`` (finite, non-negative) can be checked cheaply.
    An affinity with no edge between two different points (all zeros, or a
    diagonal; for a LinearOperator, all degrees 0) has no cluster structure
    and raises ``ValueError``, whether or not ``n_clusters`` is given.  With
    ``n_clusters=None`` every connected component is a cluster, so an
    affinity with more components than ``max_clusters`` (at most
    ``n_samples - 1``) raises ``ValueError`` too: raise ``max_clusters`` or
    pass ``n_clusters``.

    There is no ``n_jobs``: the work is the eigensolver's sparse products
    (threaded, if at all, by the BLAS and SciPy underneath, which a thread
    count here would not reach) and scikit-learn's k-means, which takes no
    thread count either; no step of this estimator runs in parallel on its own.

    References
    ----------
    .. [1] A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering:
           Analysis and an algorithm", Advances in Neural Information
           Processing Systems 14 (NIPS 2001).
    .. [2] J. Shi and J. Malik, "Normalized cuts and image segmentation",
           IEEE Transactions on Pattern Analysis and Machine Intelligence
           22(8), 2000.

    Examples
    --------
    >>> import numpy as np
    >>> from geoforest.cluster import KernelSpectralClustering
    >>> A = np.kron(np.eye(2), np.ones((3, 3)))  # two groups of three points
    >>> A[0, 3] = A[3, 0] = 0.1  # a weak link between the groups
    >>> model = KernelSpectralClustering(random_state=0).fit(A)
    >>> model.n_clusters_
    2
    >>> model.labels_
    array([0, 0, 0, 1, 1, 1])
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "max_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack", "lobpcg"})],
        "selection": [StrOptions({"relgap", "eigengap"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int | None = None,
        *,
        max_clusters: int = 10,
        n_init: int = 10,
        eigen_solver: str = "auto",
        selection: str = "relgap",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.selection = selection
        self.n_init = n_init
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        return tags

    def _validate_affinity(self, A):
        """The affinity checked and converted; returns ``(A, n)``."""
        if isinstance(A, LinearOperator):
            check_not_complex(A, self)
            shape = A.shape
            if len(shape) != 2 or shape[0] != shape[1]:
                raise ValueError(f"the affinity must be square (n, n), got shape {shape}")
            n = int(shape[0])
            if n < 2:
                raise ValueError(f"spectral clustering needs at least 2 samples, got n={n}")
            degree = np.asarray(A.matvec(np.ones(n)), dtype=np.float64).reshape(-1)
            if not np.all(np.isfinite(degree)):
                raise ValueError("the affinity operator gives non-finite degrees A @ 1")
            if np.any(degree < 0):
                raise ValueError(
                    "Negative values in data passed to KernelSpectralClustering: the "
                    "affinity operator gives negative degrees A @ 1"
                )
            if not np.any(degree > 0):
                raise ValueError(_NO_EDGE)
            self.n_features_in_ = n
            return A, n

        A = validate_data(
            self,
            A,
            accept_sparse="csr",
            dtype=np.float64,
            ensure_min_samples=2,
            reset=True,
        )
        if A.shape[0] != A.shape[1]:
            raise ValueError(
                f"the affinity must be a square (n_samples, n_samples) matrix, got shape {A.shape}"
            )
        if sp.issparse(A):
            A = A.copy()
            A.sum_duplicates()
        _check_symmetric_nonnegative(A)
        _check_has_edges(A)
        return A, int(A.shape[0])

    def _relgap_k(self, A, n: int) -> tuple[int, np.ndarray]:
        # The library's one label-free mechanism; an affinity has no coordinates
        # for Gaussian references, so its relative-gap rule decides.
        max_k = int(min(self.max_clusters, n - 1))
        levels = label_free_levels(
            A, max_k, solver=self.eigen_solver, random_state=self.random_state
        )
        out = np.full(int(self.max_clusters), np.nan)
        out[:max_k] = levels.gaps
        out[levels.n_components - 1] = MIN_RELATIVE_GAP  # the bar the others had to reach
        return levels.n_clusters, out

    def fit(self, X, y=None):
        """Cluster the points of the affinity ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix, LinearOperator} of shape (n_samples, n_samples)
            Precomputed symmetric, non-negative affinity between the samples.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        A, n = self._validate_affinity(X)
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(
                f"n_clusters={self.n_clusters} is larger than the number of samples n={n}"
            )
        k, scores, criterion = self.n_clusters, None, "eigengap"
        if self.n_clusters is None and self.selection == "relgap" and n > 2:
            k, scores = self._relgap_k(A, n)
            criterion = "relative gap"
        result = spectral_clustering(
            A,
            k,
            max_clusters=self.max_clusters,
            n_init=self.n_init,
            solver=self.eigen_solver,
            random_state=self.random_state,
        )
        self.affinity_matrix_ = A
        self.labels_ = result.labels
        self.n_clusters_ = result.n_clusters
        self.eigenvalues_ = result.eigenvalues
        if scores is None:
            scores = eigengap_scores(result.eigenvalues, self.max_clusters)
        self.n_clusters_scores_ = scores
        if self.n_clusters is None:
            explain_choice(type(self).__name__, self.n_clusters_, scores, criterion=criterion)
        self.embedding_ = result.embedding
        self.isolated_ = result.isolated
        return self
