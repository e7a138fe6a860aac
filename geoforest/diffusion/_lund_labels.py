"""LUND's labels from its geometry: one diffusion time, partial labels, the spatial vote.

:func:`cluster_at_time` is steps 3-5 of :class:`~geoforest.LUND` at one
diffusion time, built from the pieces of ``_modes.py``: ``rho_t``, the scores,
``K``, the modes and their propagated labels.  The fitted clustering is then
adapted to what the user adds: partial labels (:func:`check_partial_labels`,
:func:`semi_supervised_labels`, and :func:`nearest_given` for the anchors of
fit and predict) and, for images, :func:`spatial_majority_vote`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist

from ._modes import (
    estimate_n_modes,
    mode_ratios,
    nearest_denser,
    propagate_labels,
    significant_columns,
)

__all__ = [
    "LundClustering",
    "check_partial_labels",
    "cluster_at_time",
    "densest_copies",
    "density_rank",
    "nearest_given",
    "semi_supervised_labels",
    "spatial_majority_vote",
]

#: Query rows per block of the exact search for the nearest given label.
_BLOCK = 4096


class LundClustering(NamedTuple):
    """The unsupervised LUND clustering at one diffusion time (:func:`cluster_at_time`).

    Fields are LUND's fitted attributes at that time: ``t`` (``t_``),
    ``rho`` (``rho_t``, maximum 1), ``rho_scale`` (its maximum before the
    division), ``parent``, ``scores`` (``p rho_t``), ``modes`` by decreasing
    score, ``labels`` (``0 .. K-1``), ``k`` and ``ratios``
    (:func:`~geoforest.diffusion._modes.mode_ratios`).
    """

    t: float
    rho: np.ndarray
    rho_scale: float
    parent: np.ndarray
    scores: np.ndarray
    modes: np.ndarray
    labels: np.ndarray
    k: int
    ratios: np.ndarray


def density_rank(density: np.ndarray) -> np.ndarray:
    """Strict density order, ``0`` = densest, ties to the lower index."""
    n = density.shape[0]
    rank = np.empty(n, dtype=np.intp)
    rank[np.lexsort((np.arange(n), -density))] = np.arange(n)
    return rank


def densest_copies(
    knn_distances: np.ndarray | None, knn_indices: np.ndarray | None, rank: np.ndarray
) -> np.ndarray:
    """Each point's densest copy: the lowest-``rank`` point at distance 0 from it (itself if none).

    Copies are the same point, so they belong in one cluster, but a kNN graph
    breaks the ties among their further neighbours by index: copies get
    different edges, different diffusion coordinates, and could become
    separate modes or fall to different clusters.  LUND makes every copy's
    nearest denser point its densest copy, at distance 0.  Copies are read
    from the diffusion map's kNN lists ``knn_distances``, ``knn_indices``
    (``None`` for a precomputed affinity, which has none); a group of copies
    is connected through them whatever its size.
    """
    n = rank.shape[0]
    twin = np.arange(n)
    dist, ind = knn_distances, knn_indices
    if dist is None or ind is None:
        return twin
    rows, slots = np.nonzero(np.asarray(dist) == 0)
    if rows.size == 0:
        return twin
    cols = np.asarray(ind)[rows, slots]
    G = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    _, group = connected_components(G, directed=False)
    best = np.full(group.max() + 1, n, dtype=np.intp)
    np.minimum.at(best, group, rank)  # the lowest rank of each group ...
    by_rank = np.empty(n, dtype=np.intp)
    by_rank[rank] = np.arange(n)
    return by_rank[best[group]]  # ... and the point holding it


def cluster_at_time(
    Psi_t: np.ndarray,
    density: np.ndarray,
    rank: np.ndarray,
    t: float,
    *,
    n_search: int,
    max_clusters: int,
    n_clusters: int | None,
    twin: np.ndarray | None = None,
) -> LundClustering:
    """The unsupervised LUND clustering at one diffusion time (steps 3-5).

    Parameters
    ----------
    Psi_t : ndarray of shape (n, n_components)
        The diffusion map at time ``t``.
    density : ndarray of shape (n,)
        Kernel density ``p``, summing to 1.
    rank : ndarray of shape (n,) of int
        Strict density order, 0 = densest.
    t : float
        The diffusion time of ``Psi_t`` (recorded in the result).
    n_search : int
        ``D_t``-neighbours searched first for the nearest denser point.
    max_clusters : int
        Largest ``K`` the estimate may return (and length of ``ratios``).
    n_clusters : int or None
        ``K``; ``None`` estimates it from the scores.
    twin : ndarray of shape (n,) of int, optional
        Each point's densest copy (:func:`densest_copies`): a copy's nearest
        denser point is its twin, at ``rho_t = 0``.

    Returns
    -------
    LundClustering
    """
    Y = significant_columns(Psi_t)
    rho, parent = nearest_denser(Y, rank, n_search)
    if twin is not None:
        copy = twin != np.arange(twin.shape[0])
        rho[copy], parent[copy] = 0.0, twin[copy]
    scale = float(rho.max()) if rho.max() > 0 else 1.0
    rho = rho / scale
    scores = density * rho
    ratios = mode_ratios(scores, max_clusters)
    if n_clusters is None:
        k = estimate_n_modes(scores, max_clusters)
    else:
        k = int(n_clusters)
    # The densest point has the largest score in exact arithmetic; rounding in the
    # distances must not let a tie unseat it.  Other ties go to the denser point.
    key = -scores
    key[rank == 0] = -np.inf
    modes = np.lexsort((rank, key))[:k]
    labels = propagate_labels(rank, parent, modes, np.arange(k))
    return LundClustering(t, rho, scale, parent, scores, modes, labels, k, ratios)


def check_partial_labels(y, n: int) -> np.ndarray | None:
    """Partial labels ``y`` for ``n`` points as integers, ``-1`` unlabelled; ``None`` stays.

    Integral floats are accepted; anything else, a wrong length or a label
    below ``-1`` raises ``ValueError``.
    """
    if y is None:
        return None
    y = np.asarray(y).reshape(-1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} labels for {n} points")
    if y.dtype.kind not in "iu":
        if y.dtype.kind == "f" and np.all(np.isfinite(y)) and np.all(y == np.round(y)):
            y = y.astype(np.intp)
        else:
            raise ValueError(
                f"Unknown label type {y.dtype}: partial labels y must be integers (-1 = unlabelled)"
            )
    if np.any(y < -1):
        raise ValueError("partial labels must be >= 0, or -1 for unlabelled points")
    return y.astype(np.intp)


def nearest_given(
    Yq: np.ndarray, Y: np.ndarray, known: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ``D_t``-nearest labelled training point of every query row, exactly, in blocks.

    Parameters
    ----------
    Yq : ndarray of shape (m, n_components)
        Query rows of ``Psi_t``.
    Y : ndarray of shape (n, n_components)
        Training rows of ``Psi_t``.
    known : ndarray of int
        Indices of the labelled training points (not empty).

    Returns
    -------
    j : ndarray of shape (m,) of int
        Position in ``known`` of each row's nearest labelled point (ties to
        the first).
    dist : ndarray of shape (m,)
        Its distance.
    """
    j = np.empty(Yq.shape[0], dtype=np.intp)
    dist = np.empty(Yq.shape[0])
    for start in range(0, Yq.shape[0], _BLOCK):
        D = cdist(Yq[start : start + _BLOCK], Y[known])
        jb = np.argmin(D, axis=1)
        j[start : start + _BLOCK] = jb
        dist[start : start + _BLOCK] = D[np.arange(jb.size), jb]
    return j, dist


def semi_supervised_labels(
    Y: np.ndarray,
    y: np.ndarray,
    clusters: np.ndarray,
    modes: np.ndarray,
    parent: np.ndarray,
    rho_dist: np.ndarray,
    rank: np.ndarray,
) -> np.ndarray:
    """Propagate partial labels ``y`` through a fitted LUND clustering (see ``LUND.fit``).

    Parameters
    ----------
    Y : ndarray of shape (n, n_components)
        ``Psi_t`` of the training points at the fitted time.
    y : ndarray of shape (n,) of int
        Partial labels, ``-1`` unlabelled, at least one given.
    clusters : ndarray of shape (n,) of int
        The unsupervised labels, ``0 .. K-1`` in the order of ``modes``.
    modes : ndarray of shape (K,) of int
        The modes, by decreasing score.
    parent : ndarray of shape (n,) of int
        Nearest denser point, ``-1`` for the densest.
    rho_dist : ndarray of shape (n,)
        ``D_t`` from every point to its nearest denser point (``rho_t``
        before the division by its maximum).
    rank : ndarray of shape (n,) of int
        Strict density order, 0 = densest.

    Returns
    -------
    labels : ndarray of shape (n,) of int
        The given labels where given; clusters holding no given label in
        their mode's basin get new ids above ``y.max()``.
    """
    given = y >= 0
    next_id = int(y.max()) + 1
    cluster_class = np.empty(modes.size, dtype=np.intp)
    # A given label names its cluster's mode only from inside the mode's basin:
    # D_t-nearer to the mode than the mode is to any denser point.  A label
    # farther out belongs to a region the cluster absorbed (it relabels that
    # region through propagation) and says nothing about the mode's class.
    vote = given.copy()
    for c, mode in enumerate(modes):
        members = np.flatnonzero(given & (clusters == c))
        if members.size and parent[mode] >= 0:
            d = np.linalg.norm(Y[members] - Y[mode], axis=1)
            vote[members[d >= rho_dist[mode]]] = False
    for c in range(modes.size):
        inside = y[vote & (clusters == c)]
        if inside.size:
            values, counts = np.unique(inside, return_counts=True)
            cluster_class[c] = values[np.argmax(counts)]
        else:
            cluster_class[c] = next_id
            next_id += 1
    seeds = np.union1d(np.flatnonzero(given), modes)
    seed_labels = np.where(given[seeds], y[seeds], cluster_class[clusters[seeds]])
    # Given labels are anchors at any density: a point whose D_t-nearest given
    # label is nearer than its nearest denser point takes that label directly.
    known = np.flatnonzero(given)
    j, anchor_dist = nearest_given(Y, Y, known)
    anchor = known[j]
    parent = parent.copy()
    use_anchor = (anchor_dist < rho_dist) & ~given
    use_anchor[modes] = False
    parent[use_anchor] = anchor[use_anchor]
    labels = np.full(Y.shape[0], -1, dtype=np.intp)
    labels[seeds] = seed_labels
    labels[use_anchor] = y[anchor[use_anchor]]
    order = np.argsort(rank)
    for i in order:
        if labels[i] < 0:
            labels[i] = labels[parent[i]]
    return labels


def spatial_majority_vote(labels: np.ndarray, image_shape: tuple[int, int], radius: int):
    """Replace each pixel's label by a strict majority of its spatial window, if one exists.

    The window is the ``(2 radius + 1)^2`` square around the pixel (clipped
    at the border), the pixel itself included.  A label changes only when
    another label holds more than half of the window's pixels; ties and
    pluralities keep the pixel's own label.  One pass, computed from the
    input labels (not updated in place).
    """
    h, w = image_shape
    lab = np.asarray(labels).reshape(h, w)
    values, codes = np.unique(lab, return_inverse=True)
    codes = codes.reshape(h, w)
    counts = np.zeros((values.size, h, w))
    # Summed-area tables: window counts for every label in O(h w L).
    for c in range(values.size):
        table = np.zeros((h + 1, w + 1))
        table[1:, 1:] = np.cumsum(np.cumsum(codes == c, axis=0), axis=1)
        r0 = np.clip(np.arange(h) - radius, 0, h)
        r1 = np.clip(np.arange(h) + radius + 1, 0, h)
        c0 = np.clip(np.arange(w) - radius, 0, w)
        c1 = np.clip(np.arange(w) + radius + 1, 0, w)
        counts[c] = (
            table[np.ix_(r1, c1)]
            - table[np.ix_(r0, c1)]
            - table[np.ix_(r1, c0)]
            + table[np.ix_(r0, c0)]
        )
    size = counts.sum(axis=0)
    best = np.argmax(counts, axis=0)
    strict = np.take_along_axis(counts, best[None], 0)[0] * 2 > size
    out = np.where(strict, best, codes)
    return values[out].reshape(-1)
