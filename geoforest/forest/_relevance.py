"""The relevance distance of unsupervised forests: forest candidates ranked by a learned metric.

Why.  Forest proximity (the fraction of trees in which two points share a
leaf) finds the right *region* of a point even under many noise dimensions,
but it is coarse inside that region: every point of a leaf is equally close,
and ranks among the few dozen candidates that share leaves with a query are
decided by counts out of ``n_estimators`` and by ties.  On clean data
Euclidean distance ranks those candidates better; under noise dimensions it
does not, because every noise feature adds to it.

What.  The forest also tells which features its neighbourhoods hold fixed.
For a point, take its :data:`ESTIMATE_POOL` highest-proximity training points
(the candidate pool of a 30-neighbour query) that share a leaf with it, and
the first sixth of them (:data:`ESTIMATE_NEIGHBORS` of a full pool).  For
feature ``j`` let ``r_j`` be the mean of ``(x_ij - x_cj)^2`` over the near
ones, divided by that mean over the whole pool, ``s2_j`` (averaged over up
to :data:`ESTIMATE_ROWS` points).  A feature along which the forest's
nearest are no closer than the rest of the pool (``r_j >= 1``, e.g. a noise
column) carries nothing the forest found
*at the scale the ranking works at*; one along which they are much closer
(``r_j`` near 0) carries the structure.  The relevance of ``j`` is
``rho_j = max(0, 1 - r_j)`` and the forest's distance is the weighted
Euclidean distance

    d(x, y)^2 = sum_j rho_j^POWER (x_j - y_j)^2 / s2_j,

each feature measured in units of its spread within a pool, structureless
features faded out.  The neighbours of a query are its
:data:`CANDIDATES_PER_NEIGHBOR` ``x k`` highest-proximity training points
ranked by ``d`` (points that share no leaf with the query come after every
point that shares one).  So proximity picks where to look and the learned
metric orders what it finds.  The cube ``POWER = 3`` sharpens the fade-out:
noise features the trees did split on keep a small relevance, and a thousand
of them would otherwise add up.

Why the pool and not the feature's variance: against random pairs
(``2 var_j``), every feature, noise columns included, looks tight among the
forest's nearest once there are many points, so every ``rho`` nears 1 and the
ranking becomes z-scored Euclid.  Against the pool, the comparison is made at
the scale the ranking works at.  Only the pool's points that share a leaf
with the point count: where a point has fewer of them, the pool is padded
with arbitrary points at proximity 0, and a few such rows would dominate the
spread along the structure's features and let the noise features decide the
ranking.  Measurements and the choice of the constants: ``docs/defaults.md``
(``studies/relevance_distance.py``, ``benchmarks/bench_million.py``).

When every relevance is 0 (no feature is closer among forest neighbours than
among random pairs, e.g. trees that never split a small data set) the
ranking is by the z-scored Euclidean distance (weights ``1 / var_j``).
Features of relevance 0 cost nothing in the ranking (they are skipped).
"""

from __future__ import annotations

import numpy as np

from .._counted_search import counted_rows
from .._jit import njit
from ._flat import kneighbors_rows

#: Proximity candidates ranked per requested neighbour.
CANDIDATES_PER_NEIGHBOR = 6
#: Most candidates, ties with the last one included, as a multiple of the candidates.
TIE_LIMIT = 4
#: Proximity neighbours per point in the relevance estimate: the nearest ...
ESTIMATE_NEIGHBORS = 30
#: ... against this many, the candidate pool of a 30-neighbour query.
ESTIMATE_POOL = CANDIDATES_PER_NEIGHBOR * ESTIMATE_NEIGHBORS
#: Most points whose neighbours enter the relevance estimate.
ESTIMATE_ROWS = 2000
#: Exponent of the relevance in the metric's weights.
POWER = 3


def column_variances(X: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """float64 variance of each column of float32 ``X``, accumulated in row blocks
    (no float64 copy of ``X``)."""
    n = X.shape[0]
    mean = X.mean(axis=0, dtype=np.float64)
    acc = np.zeros(X.shape[1])
    for lo in range(0, n, block):
        acc += ((X[lo : lo + block] - mean) ** 2).sum(axis=0)
    return acc / n


@njit(nogil=True, cache=True)
def _near_pool_sums(X, rows, neighbors, n_shared, n_near, n_pool):
    """Per feature ``j``: the sums of ``(X[rows[i], j] - X[c, j])^2`` over each
    row's near neighbours and over its pool, and how many pairs each holds.

    Row ``i`` counts only its ``n_shared[i]`` first neighbours (those sharing a
    leaf with it), its near ones being the first ``ceil(n_shared[i] * n_near /
    n_pool)``; a row whose near ones would be its whole pool is skipped.
    """
    p = X.shape[1]
    near = np.zeros(p)
    pool = np.zeros(p)
    n_near_pairs = 0
    n_pool_pairs = 0
    for i in range(rows.shape[0]):
        m = min(n_shared[i], neighbors.shape[1])
        h = (m * n_near + n_pool - 1) // n_pool
        if h >= m:
            continue
        a = rows[i]
        for c in range(m):
            b = neighbors[i, c]
            for j in range(p):
                t = np.float64(X[a, j]) - np.float64(X[b, j])
                pool[j] += t * t
                if c < h:
                    near[j] += t * t
        n_near_pairs += h
        n_pool_pairs += m
    return near, pool, n_near_pairs, n_pool_pairs


def relevance(X: np.ndarray, rows: np.ndarray, neighbors: np.ndarray, n_shared: np.ndarray,
              var: np.ndarray, n_near: int):  # fmt: skip
    """Relevance ``rho_j`` of every feature from ``neighbors[i]``, the forest
    neighbours of training row ``rows[i]`` (self excluded, best first), of
    which the first ``n_shared[i]`` share a leaf with it: the first
    ``n_near / neighbors.shape[1]`` of those against all of them (the pool).

    Why only those sharing a leaf: the others are padding at proximity 0,
    arbitrary points of the data set.  Even a few padded rows would dominate
    the pool's mean squared difference along the structure's features, shrink
    their weights and let the noise features decide the ranking
    (measurements: ``docs/defaults.md``).

    Returns ``(rho, weights)``: ``weights = rho**POWER / s2`` with ``s2`` the
    pool's mean squared difference (0 where it is 0), or ``1 / var``
    (z-scores) when every ``rho`` is 0.
    """
    p = X.shape[1]
    near, pool, n_near_pairs, n_pool_pairs = _near_pool_sums(
        X, rows, neighbors, n_shared.astype(np.int64), n_near, neighbors.shape[1]
    )
    rho = np.zeros(p)
    weights = np.zeros(p)
    if n_pool_pairs > 0:
        near /= n_near_pairs
        pool /= n_pool_pairs
        spread = pool > 0
        rho[spread] = np.clip(1.0 - near[spread] / pool[spread], 0.0, 1.0)
        weights[spread] = rho[spread] ** POWER / pool[spread]
    if not np.any(weights > 0):
        # Nothing learned (e.g. trees too small to split): z-scored Euclid.
        varying = var > 0
        weights[varying] = 1.0 / var[varying]
    return rho, weights


def estimate_rows(order: np.ndarray) -> np.ndarray:
    """At most :data:`ESTIMATE_ROWS` training rows, evenly spaced in the canonical
    row order (``order``), so the estimate does not depend on the input's row order."""
    n = order.shape[0]
    if n <= ESTIMATE_ROWS:
        return np.sort(order)
    return np.sort(order[np.linspace(0, n - 1, ESTIMATE_ROWS).astype(np.int64)])


def drop_self(ind: np.ndarray, dist: np.ndarray, rows: np.ndarray, k: int):
    """The first ``k`` entries of each row of ``ind`` (and their ``dist``) other
    than the row's own index."""
    keep = ind != rows[:, None]
    first = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(ind, first, axis=1), np.take_along_axis(dist, first, axis=1)


@njit(nogil=True, cache=True)
def _rank_rows(Xq, Xref, cand, sim, n_out, weights, k, out_ind, out_dist):
    """Rank each row's ``n_out`` candidates (best proximity first); ``Xq``,
    ``Xref`` and ``weights`` hold the features of nonzero weight only."""
    d = np.empty(cand.shape[1])
    key = np.empty(cand.shape[1])
    for i in range(cand.shape[0]):
        m = n_out[i]
        n_shared = 0
        for c in range(m):
            acc = 0.0
            r = cand[i, c]
            for j in range(weights.shape[0]):
                t = np.float64(Xq[i, j]) - np.float64(Xref[r, j])
                acc += weights[j] * t * t
            d[c] = acc
            # Candidates sharing no leaf go after every one that shares a leaf.
            if sim[i, c] > 0.0:
                key[c] = acc
                n_shared += 1
            else:
                key[c] = np.inf
        # Stable: equal distances keep the proximity order (then lower index).
        order = np.argsort(key[:m], kind="mergesort")
        pos = 0
        for c in order[:n_shared]:
            if pos == k:
                break
            out_ind[i, pos] = cand[i, c]
            out_dist[i, pos] = np.sqrt(d[c])
            pos += 1
        if pos < k:
            rest = np.argsort(d[:m], kind="mergesort")
            for c in rest:
                if pos == k:
                    break
                if not sim[i, c] > 0.0:
                    out_ind[i, pos] = cand[i, c]
                    out_dist[i, pos] = np.sqrt(d[c])
                    pos += 1


class Ranker:
    """Ranks blocks of proximity candidates of the queries ``Xq`` under the metric.

    ``n_request`` candidates are asked of the proximity search per query: the
    first ``n_cand`` (``CANDIDATES_PER_NEIGHBOR x k``; a training point counts
    itself, so ``kneighbors(X_train, k + 1)`` is each point and its
    ``kneighbors(None, k)``) and up to ``TIE_LIMIT`` times as many tied in
    proximity with the last of them: a tie must not be cut by index, or a
    block of points sharing every leaf would keep only its lowest indices.
    """

    def __init__(self, Xq, Xref, weights, k: int, is_train: bool):
        n_train = Xref.shape[0]
        n_cand = CANDIDATES_PER_NEIGHBOR * (k + is_train) - is_train
        self.n_cand = min(n_cand, n_train - is_train)
        self.n_request = min(TIE_LIMIT * self.n_cand, n_train - is_train)
        active = np.flatnonzero(weights > 0)
        # The features that count, gathered once: the kernel then reads rows
        # contiguously (the same values, summed in the same order).
        self.all_active = active.size == weights.size
        self.Xref = Xref if self.all_active else np.ascontiguousarray(Xref[:, active])
        self.Xq, self.active, self.weights, self.k = Xq, active, weights[active], k

    def search(self, qleaves, qmask, qorder, lo, hi, offset, ptr, members, ref_order, n_train,
               is_train):  # fmt: skip
        """``(ind, dist)`` of queries ``qorder[lo:hi]``: their candidates, ranked."""
        n_q = hi - lo
        if qmask.shape[0] == 0:
            cand, sim, n_out = counted_rows(
                qleaves, qorder, lo, hi, offset, ptr, members, ref_order, n_train, self.n_cand,
                self.n_request, is_train,
            )  # fmt: skip
        else:  # tree masks (method="inbag"/"oob"): proximities are not counts of one T
            cand, sim = kneighbors_rows(
                qleaves, qmask, qorder, lo, hi, offset, ptr, members, ref_order, n_train,
                self.n_request, is_train,
            )  # fmt: skip
            # The n_cand first, and the next ones while tied with the last of them.
            tied = np.hstack(
                [sim[:, self.n_cand :] == sim[:, self.n_cand - 1 : self.n_cand],
                 np.zeros((n_q, 1), dtype=bool)]
            )  # fmt: skip
            n_out = self.n_cand + tied.argmin(axis=1)
        rows = qorder[lo:hi]
        Xq = self.Xq[rows] if self.all_active else self.Xq[np.ix_(rows, self.active)]
        ind = np.empty((n_q, self.k), dtype=np.int64)
        dist = np.empty((n_q, self.k), dtype=np.float64)
        _rank_rows(Xq, self.Xref, cand, sim, n_out, self.weights, self.k, ind, dist)
        return ind, dist


def pair_distances(X: np.ndarray, a: np.ndarray, b: np.ndarray, weights: np.ndarray):
    """Relevance distances between rows ``a[i]`` and ``b[i]`` of ``X``."""
    diff = X[a].astype(np.float64) - X[b]
    return np.sqrt((diff * diff * weights).sum(axis=1))
