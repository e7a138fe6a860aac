"""LUND's multiscale choice of the diffusion time.

LUND runs at the dyadic times the spectrum makes worth scanning
(:func:`multiscale_times`) and keeps the clustering that agrees best with the
others: the medoid in variation of information (:func:`medoid_clustering`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._progress import progress
from ._lund_labels import LundClustering

__all__ = [
    "medoid_clustering",
    "multiscale_fit",
    "multiscale_times",
    "variation_of_information",
]


def variation_of_information(a, b) -> float:
    """Variation of information ``H(A) + H(B) - 2 I(A; B)`` between two partitions (nats).

    Examples
    --------
    >>> variation_of_information([0, 0, 1, 1], [1, 1, 0, 0])
    0.0
    >>> round(variation_of_information([0, 0, 1, 1], [0, 1, 0, 1]), 4)
    1.3863
    """
    a = np.unique(np.asarray(a).reshape(-1), return_inverse=True)[1].reshape(-1)
    b = np.unique(np.asarray(b).reshape(-1), return_inverse=True)[1].reshape(-1)
    if a.size != b.size:
        raise ValueError("the two partitions must label the same number of points")
    n = a.size
    if n == 0:
        return 0.0
    joint = np.unique(a * (b.max() + 1) + b, return_counts=True)[1] / n
    pa = np.bincount(a) / n
    pb = np.bincount(b) / n

    def entropy(p):
        p = p[p > 0]
        return float(-np.sum(p * np.log(p)))

    return max(0.0, 2.0 * entropy(joint) - entropy(pa) - entropy(pb))


def multiscale_times(eigenvalues: np.ndarray, max_log2_t: int) -> list[float]:
    """Dyadic diffusion times worth scanning, from the spectrum.

    ``t = 2^j`` from the largest power of two at which the last computed
    eigenvalue still holds half its weight (``lambda_m^t >= 1/2``; earlier
    times see no eigenvector decayed) up to the first at which the second
    one has decayed below 1 % (``lambda_2^t < 0.01``; later every point has
    mixed), and at most ``2^max_log2_t``.

    Examples
    --------
    >>> multiscale_times(np.array([1.0, 0.999, 0.9]), 30)
    [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0]
    """
    lam = np.abs(np.asarray(eigenvalues, dtype=np.float64))
    times = []
    last = lam[-1] if lam.size > 1 else 0.0
    second = lam[1] if lam.size > 1 else 0.0
    for j in range(int(max_log2_t) + 1):
        t = float(2**j)
        if j < max_log2_t and last > 0 and last ** (2 * t) >= 0.5:
            continue  # the next time still keeps every eigenvector
        times.append(t)
        if second**t < 0.01:
            break
    return times


def medoid_clustering(labels: list[np.ndarray], n_clusters: np.ndarray) -> tuple[int, np.ndarray]:
    """The clustering with the smallest summed variation of information to the others.

    Clusterings with one cluster are considered only if every one has one;
    ties go to the first.

    Parameters
    ----------
    labels : list of ndarray of shape (n,)
        One clustering per time.
    n_clusters : ndarray of shape (m,)
        The number of clusters of each.

    Returns
    -------
    best : int
        Index of the medoid.
    vi_sum : ndarray of shape (m,)
        Each eligible clustering's summed variation of information to the
        other eligible ones (NaN for the others).
    """
    m = len(labels)
    vi = np.zeros((m, m))
    for a in range(m):
        for b in range(a + 1, m):
            vi[a, b] = vi[b, a] = variation_of_information(labels[a], labels[b])
    ks = np.asarray(n_clusters)
    eligible = np.flatnonzero(ks > 1) if np.any(ks > 1) else np.arange(m)
    vi_sum = vi[np.ix_(eligible, eligible)].sum(axis=1)
    best = int(eligible[np.argmin(vi_sum)])
    total = np.full(m, np.nan)
    total[eligible] = vi_sum
    return best, total


def multiscale_fit(
    at_time: Callable[[float], LundClustering],
    eigenvalues: np.ndarray,
    max_log2_t: int,
    verbose,
) -> tuple[LundClustering, dict]:
    """LUND at every time of :func:`multiscale_times`; the medoid clustering.

    ``at_time(t)`` is LUND's clustering at time ``t``.  Returns that of the
    clustering with the smallest summed variation of information to the
    others (:func:`medoid_clustering`), and the ``multiscale_`` record: the
    times, their ``K``, the sums and labels.
    """
    times = multiscale_times(eigenvalues, int(max_log2_t))
    states = [at_time(t) for t in progress(times, len(times), verbose, "LUND times")]
    ks = np.array([s.k for s in states])
    best, total = medoid_clustering([s.labels for s in states], ks)
    record = {
        "times": np.array(times),
        "n_clusters": ks,
        "vi_sum": total,
        "labels": [s.labels for s in states],
    }
    return states[best], record
