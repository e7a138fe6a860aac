"""LUND's modes and labels: nearest denser points in diffusion distance, mode scores, propagation.

Every point's nearest point of higher density in the diffusion map ``Psi_t``
(:func:`nearest_denser`, and :func:`nearest_denser_to` for new points) gives
``rho_t``; the modes are the top scorers of ``p rho_t`` (their number from
:func:`estimate_n_modes`), and the other points take their labels down the
chains of nearest denser points (:func:`propagate_labels`).  Nothing is
``n x n``: a K-d tree search among the ``D_t``-neighbours first, an exact
brute-force fallback in blocks.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.neighbors import NearestNeighbors

__all__ = [
    "estimate_n_modes",
    "mode_ratios",
    "nearest_denser",
    "nearest_denser_to",
    "propagate_labels",
    "significant_columns",
]

#: Rows of the exact (brute-force) fallback of the nearest-denser search per block.
_BLOCK = 256


def nearest_denser(Y: np.ndarray, rank: np.ndarray, n_search: int) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean distance from every row of ``Y`` to the nearest row of smaller ``rank``.

    ``rank`` is a permutation of ``0 .. n-1`` (0 = densest).  Each point's
    ``n_search`` nearest neighbours come from a K-d tree; the first of them
    (in distance order) with a smaller rank is the answer, exactly, since
    every closer point has a larger rank.  Points without one among them
    search 8 times as many neighbours, then every denser point (brute force
    in blocks).  The densest point gets its largest distance to any point and
    parent ``-1``.

    Returns
    -------
    rho : ndarray of shape (n,)
    parent : ndarray of shape (n,) of int
    """
    n = Y.shape[0]
    rho = np.zeros(n)
    parent = np.full(n, -1, dtype=np.intp)
    top = int(np.argmin(rank))
    todo = np.setdiff1d(np.arange(n), [top])
    nn = NearestNeighbors().fit(Y)
    k = min(n_search, n - 1)
    while todo.size and k <= max(n_search, 8 * n_search):
        dist, ind = nn.kneighbors(Y[todo], n_neighbors=min(k + 1, n))
        denser = rank[ind] < rank[todo][:, None]
        found = denser.any(axis=1)
        first = np.argmax(denser, axis=1)
        hit = todo[found]
        rho[hit] = dist[found, first[found]]
        parent[hit] = ind[found, first[found]]
        todo = todo[~found]
        if k >= n - 1:
            break
        k = min(8 * k, n - 1)
    order = np.argsort(rank)
    todo = todo[np.argsort(rank[todo], kind="stable")]
    for start in range(0, todo.size, _BLOCK):
        block = todo[start : start + _BLOCK]
        limit = int(rank[block].max())
        cand = order[:limit]  # every point denser than some row of the block
        D = cdist(Y[block], Y[cand])
        D[rank[cand][None, :] >= rank[block][:, None]] = np.inf
        j = np.argmin(D, axis=1)
        rho[block] = D[np.arange(block.size), j]
        parent[block] = cand[j]
    rho[top] = float(np.max(cdist(Y[top : top + 1], Y))) if n > 1 else 0.0
    return rho, parent


def significant_columns(Y: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """The columns of a diffusion map that can change a distance by more than ``rtol``.

    A column spanning ``ptp`` (max - min) changes any distance by at most
    ``ptp``; columns with ``ptp < rtol * max ptp`` (decayed eigenvectors, the
    constant one) are dropped, so neighbour searches run in fewer dimensions.
    """
    return np.ascontiguousarray(Y[:, _significant_mask(Y, rtol)])


def _significant_mask(Y: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """The columns :func:`significant_columns` keeps (the first one if all are constant)."""
    span = np.ptp(Y, axis=0)
    if span.size == 0 or span.max() <= 0:
        return np.arange(Y.shape[1]) < 1
    return span >= rtol * span.max()


def nearest_denser_to(
    Yq: np.ndarray, density_q: np.ndarray, Y: np.ndarray, density: np.ndarray, n_search: int
) -> tuple[np.ndarray, np.ndarray]:
    """For every query row, the nearest row of ``Y`` of strictly higher density.

    The search of :meth:`LUND.predict`, as :func:`nearest_denser` does it for
    the training points: each query's ``n_search`` nearest rows of ``Y`` come
    from a K-d tree, and the first of them (in distance order) denser than
    the query is the answer, exactly; queries without one there search 8
    times as many, then every denser row (brute force in blocks).  A query
    at least as dense as every row of ``Y`` gets its nearest row.

    Parameters
    ----------
    Yq : ndarray of shape (m, d)
    density_q : ndarray of shape (m,)
    Y : ndarray of shape (n, d)
    density : ndarray of shape (n,)
    n_search : int

    Returns
    -------
    dist : ndarray of shape (m,)
    ind : ndarray of shape (m,) of int

    Examples
    --------
    >>> Y, density = np.array([[0.0], [1.0], [3.0]]), np.array([1.0, 0.2, 0.3])
    >>> # 1.2: its nearest row (1.0) is sparser, the nearest denser one is 0.0;
    >>> # 0.9: denser than every row, it takes its nearest one.
    >>> nearest_denser_to(np.array([[1.2], [0.9]]), np.array([0.25, 9.0]), Y, density, 1)
    (array([1.2, 0.1]), array([0, 1]))
    """
    m, n = Yq.shape[0], Y.shape[0]
    dist = np.empty(m)
    ind = np.empty(m, dtype=np.intp)
    nn = NearestNeighbors().fit(Y)
    densest = density_q >= density.max()
    if np.any(densest):
        d, j = nn.kneighbors(Yq[densest], n_neighbors=1)
        dist[densest], ind[densest] = d[:, 0], j[:, 0]
    todo = np.flatnonzero(~densest)
    for k in sorted({min(n_search, n), min(8 * n_search, n)}):
        if todo.size == 0:
            break
        d, j = nn.kneighbors(Yq[todo], n_neighbors=k)
        denser = density[j] > density_q[todo][:, None]
        found = denser.any(axis=1)
        first = np.argmax(denser, axis=1)
        dist[todo[found]] = d[found, first[found]]
        ind[todo[found]] = j[found, first[found]]
        todo = todo[~found]
    order = np.argsort(-density, kind="stable")  # densest first
    todo = todo[np.argsort(-density_q[todo], kind="stable")]
    for start in range(0, todo.size, _BLOCK):
        block = todo[start : start + _BLOCK]
        cand = order[: int(np.count_nonzero(density > density_q[block].min()))]
        D = cdist(Yq[block], Y[cand])
        D[density[cand][None, :] <= density_q[block][:, None]] = np.inf
        j = np.argmin(D, axis=1)
        dist[block] = D[np.arange(block.size), j]
        ind[block] = cand[j]
    return dist, ind


def estimate_n_modes(scores, max_clusters: int) -> int:
    """``K`` at the largest ratio of consecutive sorted scores.

    With the scores sorted descending, ``S_1 >= S_2 >= ...``, the estimate is
    ``argmax_{k = 1 .. K_max} S_k / S_(k+1)`` (ties to the smaller ``k``; a
    zero ``S_(k+1)`` after a positive ``S_k`` is an infinite ratio).

    Examples
    --------
    >>> estimate_n_modes([1.0, 0.9, 0.8, 0.1, 0.09, 0.05], 5)
    3
    >>> estimate_n_modes([1.0, 0.2, 0.19, 0.01], 1)
    1
    """
    ratio = mode_ratios(scores, max_clusters)
    if not np.any(np.isfinite(ratio) | np.isinf(ratio)):
        return 1
    return int(np.nanargmax(ratio)) + 1


def mode_ratios(scores, max_clusters: int) -> np.ndarray:
    """The ratios ``S_K / S_(K+1)`` of the sorted scores behind :func:`estimate_n_modes`.

    Returns
    -------
    ndarray of shape (max_clusters,)
        Entry ``K - 1`` is the ratio for ``K`` (``inf`` after a zero score,
        1 between zeros, NaN where there is no ``S_(K+1)``).

    Examples
    --------
    >>> mode_ratios([1.0, 0.5, 0.25, 0.0], 4)
    array([ 2.,  2., inf, nan])
    """
    s = np.sort(np.asarray(scores, dtype=np.float64).reshape(-1))[::-1]
    out = np.full(int(max_clusters), np.nan)
    k_max = min(int(max_clusters), s.size - 1)
    if k_max < 1:
        return out
    num, den = s[:k_max], s[1 : k_max + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    ratio[(num <= 0)] = 1.0
    out[:k_max] = ratio
    return out


def propagate_labels(
    rank: np.ndarray, parent: np.ndarray, seeds: np.ndarray, seed_labels: np.ndarray
) -> np.ndarray:
    """Label points in decreasing density from their nearest denser point.

    ``seeds`` keep ``seed_labels``; every other point, in increasing ``rank``,
    copies the label of ``parent`` (denser, hence already labelled).  The
    densest point must be a seed.
    """
    n = rank.size
    labels = np.full(n, -1, dtype=np.intp)
    labels[seeds] = seed_labels
    order = np.argsort(rank)
    if labels[order[0]] < 0:
        raise ValueError("the densest point must be a seed")
    is_seed = np.zeros(n, dtype=bool)
    is_seed[seeds] = True
    for i in order:
        if not is_seed[i]:
            labels[i] = labels[parent[i]]
    return labels
