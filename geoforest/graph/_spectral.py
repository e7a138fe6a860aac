"""Normalised (Ng-Jordan-Weiss) spectral clustering on a symmetric affinity.

Every clustering method of geoforest that ends in a spectral step (forest
kernels, longest-leg path distances, precomputed affinities) goes through the
functions here: the leading eigenvectors of the normalised affinity
``M = D^{-1/2} W D^{-1/2}`` (:mod:`geoforest.graph._eigensolvers`), the
number of clusters from the eigengap when not given, the NJW row
normalisation and k-means.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.sparse.linalg import LinearOperator
from sklearn.cluster import KMeans
from sklearn.utils import Bunch, check_random_state

from ._canonical import canonical_order
from ._eigensolvers import (
    Solver,
    _leading_eigs,
    _n_nodes,
    _one_thread,
    _resolve_solver,
    normalized_affinity,
)

__all__ = [
    "canonical_labels",
    "estimate_n_clusters",
    "spectral_clustering",
    "spectral_embedding_njw",
    "spectral_partitions",
]


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
        Symmetric non-negative affinity (only its row sums are checked, for
        NaN and inf; :class:`~geoforest.cluster.KernelSpectralClustering`
        validates the rest).
    n_clusters : int or None, default=None
        Number of clusters; ``None`` estimates it with
        :func:`estimate_n_clusters` from ``max_clusters + 1`` eigenvalues.
    max_clusters : int, default=10
        Largest number of clusters the eigengap may choose.
    n_init : int, default=10
        k-means restarts.
    solver : {"auto", "dense", "arpack", "lobpcg", "shift-invert"}, default="auto"
        Eigensolver, see :func:`spectral_eigs`.
    random_state : int, RandomState instance or None, default=None
        Seeds the eigensolver start and k-means; an int makes the result
        reproducible, also for ``W`` with its nodes reordered (k-means reads
        them in ``W``'s canonical order, ``graph/_canonical.py``).
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

    with np.errstate(invalid="ignore", over="ignore"):  # said below, in one line
        M, degree = normalized_affinity(W)
    if not np.all(np.isfinite(degree)):  # the one check that costs nothing: row sums
        raise ValueError("the affinity has NaN or infinite entries (non-finite row sums)")
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

    labels, embedding, unembedded = _njw_kmeans(
        vectors, isolated, k, n_init, random_state, rank=_canonical_rank(W)
    )
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


def _njw_embedding(vectors, isolated, k: int, rows=None) -> np.ndarray:
    """The NJW embedding of the first ``k`` eigenvectors (of ``rows`` only)."""
    leading = vectors[:, :k].copy()
    # Exactly zero in theory (for non-zero eigenvalues); remove the rounding
    # noise so that the NJW normalisation does not blow it up to unit length.
    leading[isolated] = 0.0
    if rows is not None:
        leading = leading[rows]
    return spectral_embedding_njw(leading)


def _canonical_rank(W) -> np.ndarray | None:
    """Each node's position in :func:`canonical_order` of ``W`` (``None`` for an
    operator, whose entries cannot be read)."""
    if isinstance(W, LinearOperator):
        return None
    rank = np.empty(_n_nodes(W), dtype=np.intp)
    rank[canonical_order(W)] = np.arange(rank.shape[0])
    return rank


def _njw_kmeans(vectors, isolated, k: int, n_init: int, random_state, rows=None, rank=None):
    """k-means on the NJW embedding of the first ``k`` eigenvectors (of ``rows`` only).

    With ``rank`` (:func:`_canonical_rank` of the affinity) k-means reads the
    rows in the graph's canonical order, so that the same seed draws the same
    centres for any order of the data's rows.
    """
    embedding = _njw_embedding(vectors, isolated, k, rows)
    n = embedding.shape[0]
    # Rows that are exactly zero: isolated points, and the points of connected
    # components none of the K leading eigenvectors covers (more components than K).
    unembedded = np.flatnonzero(~np.any(embedding != 0.0, axis=1))
    labels = np.zeros(n, dtype=np.intp)
    embedded = np.setdiff1d(np.arange(n), unembedded, assume_unique=True)
    if rank is not None:
        nodes = embedded if rows is None else rows[embedded]
        embedded = embedded[np.argsort(rank[nodes], kind="stable")]
    if k > 1 and embedded.size >= k:
        groups = _separated_groups(embedding[embedded], k, random_state, unembedded.size > 0)
        if groups is not None:
            labels[embedded] = groups
        else:
            km = KMeans(n_clusters=k, n_init=n_init, random_state=random_state)
            # One OpenMP thread: the embedding has K columns, threads gain nothing, and
            # OpenMP threads that find the other cores busy wait for them
            # (docs/results/rpf-cluster.md, "Thread limits").
            with _one_thread("openmp"):
                labels[embedded] = km.fit_predict(embedding[embedded])
        labels[unembedded] = np.argmax(np.bincount(labels[embedded], minlength=k))
    return canonical_labels(labels), embedding, unembedded


#: Smallest squared distance between the ``K`` distinct embedding rows for which
#: :func:`_separated_groups` answers for k-means (the rows have unit length).
_SEPARATION = 1e-6


def _separated_groups(Y, k: int, random_state, tie_matters: bool):
    """The k-means partition of ``Y`` when it has only one: ``K`` distinct, separated rows.

    When an affinity falls apart into at least ``K`` connected components, the
    leading eigenvectors are the components' ``sqrt(d)`` vectors and every
    embedded row is one of ``K`` orthonormal vectors: k-means can only put
    each value in a cluster of its own (inertia 0; k-means++ never seeds a
    centre on a row equal to a centre, and any other seeding scores worse).
    Most rpfCluster candidates are of this kind, and scikit-learn's k-means
    with its restarts costs more than the rest of such a candidate.  The
    labels are those k-means gives, up to the numbering that
    :func:`canonical_labels` removes.  ``None`` (run k-means) when the rows
    take more values or two values lie closer than :data:`_SEPARATION`; when
    the random state is not an integer (k-means must draw from a shared
    generator as before); and when ``tie_matters`` (points outside the
    embedding join the largest cluster) and the largest cluster is tied, as
    the lowest k-means label would win the tie.
    """
    if not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool):
        return None
    groups = np.full(Y.shape[0], -1, dtype=np.intp)
    values = np.empty((k, Y.shape[1]))
    for g in range(k):  # a group per distinct row, by first appearance
        first = np.flatnonzero(groups < 0)
        if first.size == 0:
            return None  # fewer than K values (not possible with K embedded rows)
        values[g] = Y[first[0]]
        groups[np.all(Y == values[g], axis=1)] = g
    if np.any(groups < 0):
        return None  # more than K values: the usual case
    gaps = np.sum((values[:, None, :] - values[None, :, :]) ** 2, axis=2)
    if np.min(gaps[~np.eye(k, dtype=bool)]) < _SEPARATION:
        return None
    sizes = np.bincount(groups, minlength=k)
    if tie_matters and np.sum(sizes == sizes.max()) > 1:
        return None
    return groups


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
    extend: bool = False,
) -> Bunch:
    """Eigenvalues and the NJW partitions for every ``K`` from 2 to ``max_clusters`` at once.

    One eigensolve of ``max_clusters + 1`` pairs, then k-means on the first
    ``K`` eigenvectors for each ``K``: what a label-free choice of ``K``
    needs to judge the candidates (:func:`~geoforest.graph.choose_by_relative_gap`).
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
    extend : bool, default=False
        Above ``max_samples`` points, label every other point too: the
        nearest centre (in the NJW embedding) of the sample's clusters, as a
        k-means ``predict`` would, at ``O(n K^2)`` per ``K``.  ``rows`` is
        then every point.

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
    with np.errstate(invalid="ignore", over="ignore"):  # said below, in one line
        M, degree = normalized_affinity(W)
    if not np.all(np.isfinite(degree)):  # the one check that costs nothing: row sums
        raise ValueError("the affinity has NaN or infinite entries (non-finite row sums)")
    isolated = np.flatnonzero(~(degree > 0))
    values, vectors = _leading_eigs(M, degree, n_eigs, resolved, rng, tol)
    rank = _canonical_rank(W)
    rows = None
    if max_samples is not None and n > max_samples:
        # Drawn among canonical positions: the same nodes for any row order.
        drawn = rng.choice(n, size=int(max_samples), replace=False)
        rows = np.sort(drawn if rank is None else np.argsort(rank)[drawn])
    seed = rng.randint(np.iinfo(np.int32).max)
    labels = {
        k: _njw_kmeans(vectors, isolated, k, n_init, seed, rows, rank)[0]
        for k in range(2, min(int(max_clusters), vectors.shape[1]) + 1)
    }
    if extend and rows is not None:
        labels = {k: _nearest_centre(vectors, isolated, k, rows, lab) for k, lab in labels.items()}
        rows = None
    return Bunch(eigenvalues=values, rows=np.arange(n) if rows is None else rows, labels=labels)


def _nearest_centre(vectors, isolated, k: int, rows, sample_labels) -> np.ndarray:
    """Labels of every point from the ``K``-way partition of the sample ``rows``:
    each other point joins the cluster whose centre in the NJW embedding is
    nearest (the sample's own labels are kept), then canonical numbering.

    Points outside the embedding (isolated, or in components the ``K``
    leading eigenvectors miss) join the sample's largest cluster, as in
    :func:`_njw_kmeans`.
    """
    embedding = _njw_embedding(vectors, isolated, k)
    centres = np.zeros((k, k))
    for c in range(k):
        members = embedding[rows[sample_labels == c]]
        if members.shape[0]:
            centres[c] = members.mean(axis=0)
    d2 = (
        (embedding * embedding).sum(axis=1)[:, None]
        - 2.0 * embedding @ centres.T
        + (centres * centres).sum(axis=1)[None, :]
    )
    labels = np.argmin(d2, axis=1).astype(np.intp)
    unembedded = ~np.any(embedding != 0.0, axis=1)
    labels[unembedded] = np.argmax(np.bincount(sample_labels, minlength=k))
    labels[rows] = sample_labels
    return canonical_labels(labels)
