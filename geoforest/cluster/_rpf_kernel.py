"""rpfCluster's kernel: the forest kernel truncated, thresholded and sharpened, and its vote.

:func:`truncated_kernel` keeps each point's nearest neighbours of a fitted
forest's proximity kernel ``S``; :func:`sharpen_kernel` turns ``S`` into the
affinity rpfCluster clusters (beta_1, beta_2); :func:`kernel_vote` labels
points by their mean similarity to each cluster, for the points the threshold
cuts off (:func:`attach_by_kernel`) and for new points
(:meth:`~geoforest.cluster.ForestSpectralClustering.predict`).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..graph import canonical_labels

__all__ = [
    "attach_by_kernel",
    "forest_kernel",
    "kernel_vote",
    "predict_by_kernel",
    "sharpen_kernel",
    "truncated_kernel",
]


def sharpen_kernel(S, threshold: float, scale: float, *, min_weight: float = 1e-12) -> sp.csr_array:
    """rpfCluster's affinity: zero entries below ``threshold``, map the rest by ``exp``.

    Kept entries ``s`` become ``exp((s - 1) / scale)``, which is the paper's
    ``exp(s / scale)`` divided by the constant ``exp(1 / scale)``: the same
    normalised affinity (and so the same clustering), without overflow for
    small scales.  Zeros stay zero, so the result is as sparse as ``S``.

    Weights below ``min_weight`` are dropped too: next to the diagonal's 1
    they cannot change the clustering, but they leave the graph numerically
    almost disconnected, an eigenvalue 1 repeated to rounding, on which Krylov
    eigensolvers stall.  Dropped, the components are exact and are solved one
    at a time.

    Parameters
    ----------
    S : scipy sparse matrix/array or ndarray of shape (n, n)
        A proximity kernel with values in [0, 1] (1 on the diagonal).
    threshold : float
        ``beta_1``: entries ``< threshold`` are removed.
    scale : float
        ``beta_2 > 0``: the bandwidth of the exponential map.
    min_weight : float, default=1e-12
        Sharpened weights below this are removed (``0`` keeps them all).

    Returns
    -------
    scipy.sparse.csr_array

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1.0, 0.5, 0.05], [0.5, 1.0, 0.0], [0.05, 0.0, 1.0]])
    >>> A = sharpen_kernel(S, threshold=0.1, scale=0.5)
    >>> A.nnz, round(float(A[0, 1]), 4)
    (5, 0.3679)
    """
    return _sharpen_kept(_kept_entries(S, threshold), scale, min_weight)


def entries_from(S: sp.csr_array, threshold: float) -> sp.csr_array:
    """``S`` without its entries below ``threshold`` (nor zeros), dtype kept.

    ``S`` itself when that removes nothing (beta_1 = 0 on a kernel with no
    stored zeros): the callers only read it, and a copy of a large kernel
    costs more than the check.
    """
    drop = (S.data < threshold) | (S.data == 0)
    if not drop.any():
        return S
    A = S.copy()
    A.data[drop] = 0.0
    A.eliminate_zeros()
    return A


def _kept_entries(S, threshold: float) -> sp.csr_array:
    """``S`` as float64 CSR without its entries below ``threshold`` (nor zeros);
    read only (it may share ``S``'s arrays)."""
    return entries_from(sp.csr_array(S, dtype=np.float64), threshold)


def _sharpen_kept(kept: sp.csr_array, scale: float, min_weight: float = 1e-12) -> sp.csr_array:
    """:func:`sharpen_kernel` of a kernel whose entries below beta_1 are already removed.

    ``kept`` (from :func:`_kept_entries`) is not modified: the candidates of
    one beta_1 and several beta_2 share it, which saves removing the same
    entries once per beta_2 (the costlier half of sharpening).
    """
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    A = kept.copy()  # kept may be shared (and may be S itself)
    A.data = np.exp((A.data - 1.0) / scale)
    if min_weight > 0:
        A.data[A.data < min_weight] = 0.0
        A.eliminate_zeros()
    return A


def kept_by_threshold(S):
    """``b1 -> _kept_entries(S, b1)``, computed once for a run of equal ``b1``.

    The candidate grids run beta_1-major, so holding only the last beta_1's
    kernel gives each threshold's entries once without a copy of ``S`` per
    threshold in memory.
    """
    last: dict[float, sp.csr_array] = {}

    def kept(threshold: float) -> sp.csr_array:
        if threshold not in last:
            last.clear()
            last[threshold] = _kept_entries(S, threshold)
        return last[threshold]

    return kept


def truncated_kernel(forest, n_neighbors: int) -> sp.csr_array:
    """A fitted forest's proximity kernel restricted to each point's nearest neighbours.

    Keeps ``S[i, j]`` when ``j`` is among the ``n_neighbors`` points of largest
    proximity to ``i`` or ``i`` among those of ``j`` (the union, so the result
    is symmetric), plus the diagonal of ones.  Memory is at most
    ``n * (2 * n_neighbors + 1)`` entries, where the full kernel holds every
    co-leaf pair (about ``n_estimators * leaf size`` per row, often ten times
    more); the neighbours come from :meth:`kneighbors`, which never forms the
    full kernel.  Ties in proximity go to the lower index, as in
    :meth:`kneighbors`.

    Parameters
    ----------
    forest : fitted geoforest forest
    n_neighbors : int
        Neighbours kept per point, ``1 <= n_neighbors < n_samples``.

    Returns
    -------
    scipy.sparse.csr_array of shape (n_samples, n_samples)
    """
    n = forest.inbag_counts_.shape[0]
    if not isinstance(n_neighbors, numbers.Integral) or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, n_samples - 1 = {n - 1}]")
    dist, ind = forest._proximity_kneighbors(n_neighbors=int(n_neighbors))
    rows = np.repeat(np.arange(n), ind.shape[1])
    S = sp.csr_array((1.0 - dist.ravel(), (rows, ind.ravel())), shape=(n, n))
    S = S.maximum(S.T) + sp.eye_array(n, format="csr")
    S.eliminate_zeros()  # padding neighbours at proximity 0
    S.sort_indices()
    return sp.csr_array(S)


def attach_by_kernel(S, labels: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Give ``points`` the cluster they are most similar to in the kernel ``S``.

    A threshold beta_1 can cut points (or small groups) off the rest of the
    affinity graph; spectral clustering then has no information about them.
    The unthresholded kernel still links them to the others: each such point
    joins the cluster with the largest mean similarity to it.  Points with no
    similarity to any clustered point keep their label.

    Parameters
    ----------
    S : scipy sparse array of shape (n, n)
        The forest kernel.
    labels : ndarray of shape (n,)
        Cluster labels ``0 .. K-1``.
    points : ndarray of int
        The points to (re)assign.

    Returns
    -------
    ndarray of shape (n,)
        A copy of ``labels`` with ``points`` reassigned, in canonical order.
    """
    labels = np.asarray(labels).copy()
    if points.size == 0:
        return labels
    n = labels.shape[0]
    clustered = np.setdiff1d(np.arange(n), points, assume_unique=True)
    if clustered.size == 0:
        return labels
    best, linked = kernel_vote(sp.csr_array(S)[points], labels, clustered)
    labels[points[linked]] = best[linked]
    return canonical_labels(labels)


def kernel_vote(S_rows, labels: np.ndarray, clustered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cluster of largest mean kernel similarity, for each row of ``S_rows``.

    The vote of :func:`attach_by_kernel` (points the threshold cut off) and
    :meth:`ForestSpectralClustering.predict` (new points): row ``q`` scores
    cluster ``c`` by the mean of ``S_rows[q, j]`` over the points ``j`` of
    ``clustered`` labelled ``c``.

    Parameters
    ----------
    S_rows : scipy sparse array or ndarray of shape (n_rows, n)
        Similarities of the rows to the ``n`` labelled points.
    labels : ndarray of shape (n,)
        Cluster labels ``0 .. K-1`` (only those of ``clustered`` are read).
    clustered : ndarray of int
        The points that vote.

    Returns
    -------
    best : ndarray of shape (n_rows,)
        The cluster of the largest mean similarity (ties: the lower label).
    linked : ndarray of shape (n_rows,), bool
        False for the rows with no similarity to any voting point (``best``
        is then 0, meaningless).
    """
    n = labels.shape[0]
    k = int(labels[clustered].max()) + 1
    one_hot = sp.csr_array((np.ones(clustered.size), (clustered, labels[clustered])), shape=(n, k))
    sizes = np.bincount(labels[clustered], minlength=k).astype(np.float64)
    scores = sp.csr_array(S_rows) @ one_hot
    scores = np.asarray(scores.toarray() if sp.issparse(scores) else scores) / np.maximum(sizes, 1)
    return np.argmax(scores, axis=1), scores.max(axis=1) > 0


def forest_kernel(forest, kernel_neighbors, n: int) -> sp.csr_array:
    """The proximity kernel of a forest fitted on ``n`` points, truncated to
    ``kernel_neighbors`` (at most ``n - 1``) when set."""
    if kernel_neighbors is None:
        return sp.csr_array(forest.proximity())
    return truncated_kernel(forest, min(int(kernel_neighbors), n - 1))


#: Queries voted per block: a block's kernel rows are ``PREDICT_CHUNK x n``.
PREDICT_CHUNK = 1024


def predict_by_kernel(forest, labels, X, kernel_neighbors: int | None) -> np.ndarray:
    """Labels of new points by :func:`kernel_vote` over the fitted forest's kernel.

    Each query's proximity to every training point (or, with
    ``kernel_neighbors``, to its ``kernel_neighbors`` most similar ones, as
    the truncated kernel keeps) weighs a vote over ``labels``; a query linked
    to no training point gets the largest cluster.  Blocks of
    :data:`PREDICT_CHUNK` queries bound the memory.
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    voters = np.arange(n)
    fallback = int(np.argmax(np.bincount(labels)))
    out = np.empty(X.shape[0], dtype=np.intp)
    for lo in range(0, X.shape[0], PREDICT_CHUNK):
        rows = X[lo : lo + PREDICT_CHUNK]
        if kernel_neighbors is None:
            S_rows = forest.proximity(rows)
        else:
            k = min(int(kernel_neighbors), n)
            dist, ind = forest._proximity_kneighbors(rows, n_neighbors=k)
            S_rows = sp.csr_array(
                (1.0 - dist.ravel(), (np.repeat(np.arange(rows.shape[0]), k), ind.ravel())),
                shape=(rows.shape[0], n),
            )
        best, linked = kernel_vote(S_rows, labels, voters)
        out[lo : lo + PREDICT_CHUNK] = np.where(linked, best, fallback)
    return out
