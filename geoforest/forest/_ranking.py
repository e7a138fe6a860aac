"""Ranking a query's proximity candidates under the metric a forest learned.

``_relevance.py`` estimates the metric (which features, in which units) from
the forest's own neighbourhoods; this module holds the fitted metric
(:class:`LearnedMetric`) and what every search does with it: how many
candidates to ask of the proximity search (:func:`candidate_counts`), their
distances (:func:`_metric_distances`) and the rule that makes neighbours of
them (:func:`_rank_rows`), in memory (:class:`Ranker`) and for a search cut
into reference partitions on Dask (:class:`PartitionRanking`).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

#: Proximity candidates ranked per requested neighbour.
CANDIDATES_PER_NEIGHBOR = 6
#: Most candidates, ties with the last one included, as a multiple of the candidates.
TIE_LIMIT = 4


@njit(nogil=True, cache=True)
def _metric_distances(Xq, Xref, cand, n_out, weights, out):
    """``out[i, c]``: the metric's squared distance from query ``i`` to its
    candidate ``cand[i, c]`` (``c < n_out[i]``); ``Xq``, ``Xref`` and
    ``weights`` hold the features of nonzero weight only."""
    for i in range(cand.shape[0]):
        for c in range(n_out[i]):
            acc = 0.0
            r = cand[i, c]
            for j in range(weights.shape[0]):
                t = np.float64(Xq[i, j]) - np.float64(Xref[r, j])
                acc += weights[j] * t * t
            out[i, c] = acc


@njit(nogil=True, cache=True, inline="always")
def _before(key, a, b):
    """Whether position ``a`` sorts before ``b``: by ``key``, then by position."""
    return key[a] < key[b] or (key[a] == key[b] and a < b)


@njit(nogil=True, cache=True)
def _sift(key, order, start, end):
    """Move ``order[start]`` down the max-heap ``order[:end]`` (by :func:`_before`)."""
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and _before(key, order[child], order[child + 1]):
            child += 1
        if not _before(key, order[root], order[child]):
            return
        order[root], order[child] = order[child], order[root]
        root = child


@njit(nogil=True, cache=True)
def _smallest_order(key, items, m, k, out):
    """``out[:j]``: the ``j = min(k, m)`` entries of ``items[:m]`` with the
    smallest ``key``, ascending, equal keys by item; returns ``j``.

    ``items`` are positions into ``key``, listed in increasing order, so the
    result is the first ``j`` of ``items[:m]`` under a stable argsort of their
    keys (keys without nan).  A bounded max-heap of the ``j`` best so far, one
    streaming pass over the items, then a heapsort of the ``j``: O(m log j)
    where a ranking needs ``j = k`` of ``m`` candidates, and it compiles in a
    fraction of the time of numba's merge sort, which a first ``kneighbors``
    would otherwise compile (``docs/benchmarks.md``).
    """
    j = min(k, m)
    if j <= 0:
        return 0
    for c in range(j):
        out[c] = items[c]
    for start in range(j // 2 - 1, -1, -1):
        _sift(key, out, start, j)
    for c in range(j, m):
        p = items[c]
        if _before(key, p, out[0]):  # better than the worst kept: replace it
            out[0] = p
            _sift(key, out, 0, j)
    for end in range(j - 1, 0, -1):
        out[0], out[end] = out[end], out[0]
        _sift(key, out, 0, end)
    return j


@njit(nogil=True, cache=True)
def _rank_rows(cand, sim, n_out, d2, k, out_ind, out_dist):
    """The ``k`` neighbours of each row from its ``n_out`` candidates (best
    proximity first) and their squared metric distances ``d2``.

    Which ``k``: the candidates sharing a leaf with the query, nearest first;
    if fewer than ``k`` share one, the nearest of the others complete the set.
    In what order: ascending distance, always (equal distances keep the
    proximity order, then the lower index).  Candidates sharing no leaf are
    arbitrary points at proximity 0, so they only fill a set the forest left
    short; but once in it, they are placed by their distance like every other
    neighbour, or the distances would not be sorted.
    """
    key = np.empty(cand.shape[1])
    items = np.empty(cand.shape[1], dtype=np.int64)
    pick = np.empty(k, dtype=np.int64)
    slot_key = np.empty(k)
    slots = np.arange(k)
    order = np.empty(k, dtype=np.int64)
    for i in range(cand.shape[0]):
        m = n_out[i]
        n_shared = 0
        for c in range(m):
            key[c] = d2[i, c]
            if sim[i, c] > 0.0:
                items[n_shared] = c
                n_shared += 1
        # Equal distances keep the proximity order (then lower index): stable.
        n_pick = _smallest_order(key, items, n_shared, k, pick)
        if n_pick < k:  # the nearest of the candidates sharing no leaf
            n_rest = 0
            for c in range(m):
                if not sim[i, c] > 0.0:
                    items[n_rest] = c
                    n_rest += 1
            got = _smallest_order(key, items, n_rest, k - n_pick, order)
            for c in range(got):  # no slice copy (see _jit.py)
                pick[n_pick + c] = order[c]
            n_pick += got
        if n_shared < k:  # the completed set, in ascending distance as well
            for c in range(n_pick):  # ties keep the pick order: sort slots
                slot_key[c] = d2[i, pick[c]]
            _smallest_order(slot_key, slots, n_pick, n_pick, order)
            for c in range(n_pick):
                items[c] = pick[order[c]]
            for c in range(n_pick):
                pick[c] = items[c]
        for pos in range(n_pick):
            c = pick[pos]
            out_ind[i, pos] = cand[i, c]
            out_dist[i, pos] = np.sqrt(d2[i, c])


def candidate_counts(k: int, n_train: int, is_train: bool, per_neighbor: int):
    """``(n_cand, n_request)``: the candidates ranked per query and the most
    asked of the proximity search (``n_cand`` and those tied with the last of
    them, up to :data:`TIE_LIMIT` times as many).

    A training point counts itself, so ``kneighbors(X_train, k + 1)`` is each
    point and its ``kneighbors(None, k)``; a tie must not be cut by index, or a
    block of points sharing every leaf would keep only its lowest indices.
    """
    n_cand = min(per_neighbor * (k + is_train) - is_train, n_train - is_train)
    return n_cand, min(TIE_LIMIT * n_cand, n_train - is_train)


class LearnedMetric:
    """The fitted ranking of an ``UnsupervisedForest``: everything it learned
    about ordering proximity candidates, in one place.

    Parameters
    ----------
    relevance : ndarray of float64, shape (n_features,)
        ``rho_j`` (``feature_relevance_``).
    weights : ndarray of float64, shape (n_features,)
        The metric ``d(x, y)^2 = sum_j weights_j (x_j - y_j)^2``.
    kind : str
        What the relevance said (:func:`ranking_kind`).
    per_neighbor : int, default=6
        Proximity candidates ranked per requested neighbour
        (:data:`CANDIDATES_PER_NEIGHBOR`).
    """

    def __init__(self, relevance, weights, kind: str = "sheet", per_neighbor: int = 6):
        self.relevance = relevance
        self.weights = weights
        self.kind = kind
        self.per_neighbor = int(per_neighbor)

    def candidate_counts(self, k: int, n_train: int, is_train: bool):
        """See :func:`candidate_counts`."""
        return candidate_counts(k, n_train, is_train, self.per_neighbor)

    def ranker(self, Xq: np.ndarray, Xref: np.ndarray, k: int, is_train: bool) -> Ranker:
        """A :class:`Ranker` of ``k`` neighbours of the queries ``Xq`` among ``Xref``."""
        return Ranker(self, Xq, Xref, k, is_train)

    def pair_distances(self, X: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Distances between rows ``a[i]`` and ``b[i]`` of ``X``."""
        diff = X[a].astype(np.float64) - X[b]
        return np.sqrt((diff * diff * self.weights).sum(axis=1))


class Ranker:
    """Ranks blocks of proximity candidates of the queries ``Xq`` under a
    :class:`LearnedMetric`: ``n_cand`` candidates per query and up to
    ``n_request`` with ties (:func:`candidate_counts`)."""

    def __init__(self, metric: LearnedMetric, Xq, Xref, k: int, is_train: bool):
        self.n_cand, self.n_request = metric.candidate_counts(k, Xref.shape[0], is_train)
        weights = metric.weights
        active = np.flatnonzero(weights > 0)
        # The features that count, gathered once: the kernel then reads rows
        # contiguously (the same values, summed in the same order).
        self.all_active = active.size == weights.size
        self.Xref = Xref if self.all_active else np.ascontiguousarray(Xref[:, active])
        self.Xq, self.active, self.weights, self.k = Xq, active, weights[active], k

    def rank(self, rows: np.ndarray, cand: np.ndarray, sim: np.ndarray, n_out: np.ndarray):
        """``(ind, dist)`` of the queries ``Xq[rows]`` from their candidates
        ``cand`` (best proximity first, ``sim`` their proximities, the first
        ``n_out[i]`` of row ``i`` valid)."""
        Xq = self.Xq[rows] if self.all_active else self.Xq[np.ix_(rows, self.active)]
        d2 = np.empty(cand.shape, dtype=np.float64)
        _metric_distances(Xq, self.Xref, cand, n_out, self.weights, d2)
        n_q = cand.shape[0]
        ind = np.empty((n_q, self.k), dtype=np.int64)
        dist = np.empty((n_q, self.k), dtype=np.float64)
        _rank_rows(cand, sim, n_out, d2, self.k, ind, dist)
        return ind, dist


class PartitionRanking:
    """A :class:`LearnedMetric` in the pieces a search cut into reference
    partitions needs (``forest/_dask/_neighbors.py``): the candidate counts,
    the features that count, each partition's squared distances to its
    candidates, and the ranking of the merged candidates, each computing what
    :class:`Ranker` computes (the same values, summed in the same order).
    Handed to the Dask paths, which import nothing of the forest's own.
    """

    def __init__(self, metric: LearnedMetric):
        self.metric = metric
        self.active = np.flatnonzero(metric.weights > 0)
        self.all_active = self.active.size == metric.weights.size
        self.weights = metric.weights[self.active]

    def candidate_counts(self, k: int, n_train: int, is_train: bool):
        """See :func:`candidate_counts`."""
        return self.metric.candidate_counts(k, n_train, is_train)

    def columns(self, X: np.ndarray) -> np.ndarray:
        """``X``'s features of nonzero weight, contiguous (what the distances read)."""
        return np.ascontiguousarray(X if self.all_active else X[:, self.active])

    def distances(self, Xq, Xref, cand, n_out, out) -> None:
        """``out[i, c]``: the squared distance from ``Xq[i]`` to ``Xref[cand[i, c]]``
        (``c < n_out[i]``; both :meth:`columns`)."""
        _metric_distances(Xq, Xref, cand, n_out, self.weights, out)

    def rank(self, cand, sim, n_out, d2, k: int):
        """``(ind, dist)``: the ``k`` neighbours of each row from its candidates
        (best proximity first), by the rule of :class:`Ranker`."""
        n_q = cand.shape[0]
        ind = np.empty((n_q, k), dtype=np.int64)
        dist = np.empty((n_q, k), dtype=np.float64)
        _rank_rows(cand, sim, n_out, d2, k, ind, dist)
        return ind, dist
