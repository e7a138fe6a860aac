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

from .._engine.sampling import canonical_order
from .._jit import njit

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
    pick = np.empty(k, dtype=np.int64)
    for i in range(cand.shape[0]):
        m = n_out[i]
        n_shared = 0
        for c in range(m):
            if sim[i, c] > 0.0:
                key[c] = d2[i, c]
                n_shared += 1
            else:
                key[c] = np.inf
        # Stable sorts: equal distances keep the proximity order (then lower index).
        order = np.argsort(key[:m], kind="mergesort")
        n_pick = 0
        for c in order[: min(n_shared, k)]:
            pick[n_pick] = c
            n_pick += 1
        if n_pick < k:
            rest = np.argsort(d2[i, :m], kind="mergesort")
            for c in rest:
                if n_pick == k:
                    break
                if not sim[i, c] > 0.0:
                    pick[n_pick] = c
                    n_pick += 1
        if n_shared < k:  # the completed set, in ascending distance as well
            for c in range(n_pick):
                key[c] = d2[i, pick[c]]
            final = pick[np.argsort(key[:n_pick], kind="mergesort")]
            pick[:n_pick] = final
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
    per_neighbor : int
        Proximity candidates ranked per requested neighbour.
    """

    def __init__(self, relevance: np.ndarray, weights: np.ndarray,
                 per_neighbor: int = CANDIDATES_PER_NEIGHBOR):  # fmt: skip
        self.relevance = relevance
        self.weights = weights
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


def estimate_metric(forest, order: np.ndarray | None) -> LearnedMetric:
    """The metric a fitted forest learns from its own proximity neighbours.

    At most :data:`ESTIMATE_ROWS` training rows (:func:`estimate_rows`) ask
    the forest, ranked by proximity, for their pool of
    :data:`ESTIMATE_POOL` neighbours; :func:`relevance` turns the pools into
    ``rho`` and the weights.  ``order`` is the canonical row order
    (``None``: computed here).  A forest grown from a Dask array gathers the
    same rows, pools and variances where its rows are (:func:`_dask_pools`)
    and goes on as in memory.
    """
    X = forest._X_fit
    pool = min(ESTIMATE_POOL, X.shape[0] - 1)
    near = min(ESTIMATE_NEIGHBORS, pool)
    if forest._fitted_on_dask:
        X, rows, neighbors, n_shared, var = _dask_pools(forest, order, pool)
    else:
        rows = estimate_rows(canonical_order(X) if order is None else order)
        # The rows as new points (already the forest's float32, so not shifted by
        # the centring offset again): each finds itself among its candidates.
        dist, ind = forest._kneighbors(X[rows], pool + 1, True, "all", None, prepared=True)
        var = column_variances(X)
        neighbors, dist = drop_self(ind, dist, rows, pool)
        # Proximity distances are 1 - proximity: those below 1 share a leaf.
        n_shared = (dist < 1.0).sum(axis=1)
    rho, weights = relevance(X, rows, neighbors, n_shared, var, near)
    return LearnedMetric(rho, weights)


class LearnedRankingMixin:
    """The ``distance`` of an ``UnsupervisedForest``: where its learned ranking
    is fitted (:meth:`_finish_fit`), chosen at query time (:meth:`_ranking`)
    and said (:attr:`distance_`).

    The fitted metric lives in ``_metric`` (a :class:`LearnedMetric`, or
    ``None`` when the forest was fitted with ``distance="proximity"``).
    ``distance`` is read at every query, so ``set_params(distance=...)``
    changes the ranking of a fitted forest without refitting, and
    ``distance_`` always names the ranking the next query will use.
    """

    @property
    def distance_(self) -> str:
        """``"relevance"`` or ``"proximity"``: what :meth:`kneighbors` ranks by now."""
        if not hasattr(self, "_metric"):
            raise AttributeError("distance_ is set by fit")
        if self.distance == "proximity" or self._metric is None:
            return "proximity"
        return "relevance"

    def _finish_fit(self, order) -> None:
        # order: the canonical row order (an ndarray; a Dask fit's lookup of it,
        # ``_dask.CanonicalOrder``; None: not computed).
        self._metric = None
        if self.distance == "proximity":
            return
        self._metric = estimate_metric(self, order)
        self.feature_relevance_ = self._metric.relevance

    def _ranking(self) -> LearnedMetric | None:
        if self.distance == "proximity":
            return None
        if self._metric is None and self.distance == "relevance":
            raise ValueError(
                "this forest has no relevance metric (fitted with distance='proximity'); "
                "refit it, or set distance='proximity'"
            )
        return self._metric

    def _training_pair_distances(self, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
        metric = self._ranking()
        if metric is None:
            return super()._training_pair_distances(a, b, method)
        return metric.pair_distances(self._X_fit, a, b)


# ---------------------------------------------------------------------------
# The pieces a forest grown from a Dask array needs (``forest/_dask/``): the
# estimate, where the training rows are, and the ranking of candidates
# searched partition by partition.


def _dask_pools(forest, order, pool: int):
    """What :func:`estimate_metric` reads of a forest grown from a Dask array:
    ``(X_held, rows, neighbors, n_shared, var)`` with ``rows`` and
    ``neighbors`` numbering the rows of ``X_held``.

    The estimate rows are the canonical order's entries at the positions
    :func:`estimate_rows` takes (``order``: the fit's ``CanonicalOrder``;
    ``None``: sorted again from the training rows): the in-memory rows.  Their
    pools are searched on the workers, as new points, by proximity.  Then the
    rows the formula reads — the estimate rows and their pools' neighbours,
    at most ``ESTIMATE_ROWS x (ESTIMATE_POOL + 1)`` of them whatever ``n``
    (``4 x n_features`` bytes each) — are gathered, in index order, with the
    column variances.  :func:`relevance` then sums the same values in the
    same order as in memory, whatever its formula; only the variances are
    summed in another order (they decide the weights only when nothing was
    learned, and then to the last bits).
    """
    from ._dask import canonical_rows_at, rows_and_variances, take_rows

    X = forest._X_fit
    n = X.shape[0]
    # estimate_rows(order) is the sorted entries of order at the positions
    # estimate_rows(arange(n)) (every position when n <= ESTIMATE_ROWS).
    rows = np.sort(canonical_rows_at(X, order, estimate_rows(np.arange(n))))
    dist, ind = forest._kneighbors(take_rows(X, rows), pool + 1, True, "all", None, prepared=True)
    neighbors, dist = drop_self(ind, dist, rows, pool)
    n_shared = (dist < 1.0).sum(axis=1)
    held = np.unique(np.concatenate([rows, neighbors.ravel()]))
    X_held, var = rows_and_variances(X, held)
    local = np.searchsorted(held, rows), np.searchsorted(held, neighbors)
    return X_held, local[0], local[1], n_shared, var


def metric_active(metric: LearnedMetric) -> np.ndarray:
    """The features of nonzero weight, the only ones a distance reads (as :class:`Ranker`)."""
    return np.flatnonzero(metric.weights > 0)


def metric_columns(X: np.ndarray, active: np.ndarray) -> np.ndarray:
    """``X``'s ``active`` columns, contiguous (the values :class:`Ranker` reads)."""
    if active.size == X.shape[1]:
        return np.ascontiguousarray(X)
    return np.ascontiguousarray(X[:, active])


def candidate_distances(Xq, Xref, cand, n_out, weights, out) -> None:
    """``out[i, c]``: the squared metric distance from ``Xq[i]`` to ``Xref[cand[i, c]]``
    (``c < n_out[i]``), features and ``weights`` of :func:`metric_active` only;
    the values :class:`Ranker` computes."""
    _metric_distances(Xq, Xref, cand, n_out, weights, out)


def rank_candidates(cand, sim, n_out, d2, k: int):
    """``(ind, dist)``: the ``k`` neighbours of each row from its candidates,
    by the rule of :class:`Ranker` (:func:`_rank_rows`)."""
    n_q = cand.shape[0]
    ind = np.empty((n_q, k), dtype=np.int64)
    dist = np.empty((n_q, k), dtype=np.float64)
    _rank_rows(cand, sim, n_out, d2, k, ind, dist)
    return ind, dist
