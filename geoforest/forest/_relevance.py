"""The relevance distance of unsupervised forests: forest candidates ranked by a learned metric.

Why.  Forest proximity (the fraction of trees in which two points share a
leaf) finds the right *region* of a point even under many noise dimensions,
but it is coarse inside that region: every point of a leaf is equally close,
and ranks among the few dozen candidates that share leaves with a query are
decided by counts out of ``n_estimators`` and by ties.  On clean data
Euclidean distance ranks those candidates better; under noise dimensions it
does not, because every noise feature adds to it.

What.  The forest also tells which features its neighbourhoods hold fixed.
For feature ``j`` let ``r_j`` be the mean of ``(x_ij - x_cj)^2 / (2 var_j)``
over pairs of a point ``i`` and one of its :data:`ESTIMATE_NEIGHBORS`
proximity neighbours ``c`` (``2 var_j`` is that mean over independent pairs).
A feature along which forest neighbours are no closer than random pairs
(``r_j >= 1``, e.g. a noise column) carries nothing the forest found; one
along which they are close (``r_j`` near 0) carries the structure.  The
relevance of ``j`` is ``rho_j = max(0, 1 - r_j)`` and the forest's distance is
the weighted Euclidean distance

    d(x, y)^2 = sum_j rho_j^POWER (x_j - y_j)^2 / var_j,

a metric on the z-scored features in which structureless features fade out.
The neighbours of a query are its :data:`CANDIDATES_PER_NEIGHBOR` ``x k``
highest-proximity training points ranked by ``d`` (points that share no leaf
with the query come after every point that shares one).  So proximity picks
where to look and the learned metric orders what it finds.  The cube
``POWER = 3`` sharpens the fade-out: noise features the trees did split on
keep a small relevance, and a thousand of them would otherwise add up.
Constants chosen on the selection half of ``geoforest experiment
neighbours`` and on the URerF simulations (``studies/relevance_distance.py``,
``docs/defaults.md``).

When every relevance is 0 (no feature is closer among forest neighbours than
among random pairs) all distances are 0 and the order is the proximity
order.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

#: Proximity candidates ranked per requested neighbour.
CANDIDATES_PER_NEIGHBOR = 6
#: Most candidates, ties with the last one included, as a multiple of the candidates.
TIE_LIMIT = 4
#: Proximity neighbours per point in the relevance estimate.
ESTIMATE_NEIGHBORS = 30
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


def relevance(X: np.ndarray, rows: np.ndarray, neighbors: np.ndarray, var: np.ndarray):
    """Relevance ``rho_j`` of every feature from ``neighbors[i]``, the forest
    neighbours of training row ``rows[i]`` (self excluded).

    Returns ``(rho, weights)``: ``weights = rho**POWER / var`` (0 where ``var == 0``).
    """
    p = X.shape[1]
    acc = np.zeros(p)
    for lo in range(0, rows.shape[0], 256):
        r = rows[lo : lo + 256]
        diff = X[neighbors[lo : lo + 256]].astype(np.float64) - X[r, None, :]
        acc += (diff * diff).sum(axis=(0, 1))
    pairs = neighbors.shape[0] * neighbors.shape[1]
    varying = var > 0
    ratio = np.ones(p)
    ratio[varying] = acc[varying] / (2.0 * var[varying] * pairs)
    rho = np.clip(1.0 - ratio, 0.0, 1.0)
    weights = np.zeros(p)
    weights[varying] = rho[varying] ** POWER / var[varying]
    return rho, weights


def estimate_rows(order: np.ndarray) -> np.ndarray:
    """At most :data:`ESTIMATE_ROWS` training rows, evenly spaced in the canonical
    row order (``order``), so the estimate does not depend on the input's row order."""
    n = order.shape[0]
    if n <= ESTIMATE_ROWS:
        return np.sort(order)
    return np.sort(order[np.linspace(0, n - 1, ESTIMATE_ROWS).astype(np.int64)])


def drop_self(ind: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` entries of each row of ``ind`` other than the row's own index."""
    keep = ind != rows[:, None]
    first = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(ind, first, axis=1)


@njit(nogil=True, cache=True)
def _rank_rows(Xq, Xref, cand, prox, n_cand, active, weights, k, lo, hi, out_ind, out_dist):
    d = np.empty(cand.shape[1])
    key = np.empty(cand.shape[1])
    shared = np.empty(cand.shape[1], dtype=np.bool_)
    for i in range(lo, hi):
        # The first n_cand candidates, and those tied with the last of them.
        m = n_cand
        while m < cand.shape[1] and prox[i, m] == prox[i, n_cand - 1]:
            m += 1
        for c in range(m):
            shared[c] = prox[i, c] < 1.0
            acc = 0.0
            for a in range(active.shape[0]):
                j = active[a]
                t = np.float64(Xq[i, j]) - np.float64(Xref[cand[i, c], j])
                acc += weights[j] * t * t
            d[c] = acc
            # Candidates sharing no leaf go after every one that shares a leaf.
            key[c] = acc if shared[c] else np.inf
        # Stable: equal distances keep the proximity order (then lower index).
        order = np.argsort(key[:m], kind="mergesort")
        n_shared = 0
        for c in range(m):
            if shared[c]:
                n_shared += 1
        pos = 0
        for c in order[:n_shared]:
            if pos == k:
                break
            out_ind[i - lo, pos] = cand[i, c]
            out_dist[i - lo, pos] = np.sqrt(d[c])
            pos += 1
        if pos < k:
            rest = np.argsort(d[:m], kind="mergesort")
            for c in rest:
                if pos == k:
                    break
                if not shared[c]:
                    out_ind[i - lo, pos] = cand[i, c]
                    out_dist[i - lo, pos] = np.sqrt(d[c])
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
        self.Xq, self.Xref, self.weights, self.k = Xq, Xref, weights, k
        self.active = np.flatnonzero(weights > 0).astype(np.int64)

    def __call__(self, rows, cand, proximity_dist):
        """The ``k`` best of the candidates ``cand`` of queries ``rows`` (their
        ``1 - proximity`` in ``proximity_dist``, best first): ``(ind, dist)``."""
        ind = np.empty((rows.shape[0], self.k), dtype=np.int64)
        dist = np.empty((rows.shape[0], self.k), dtype=np.float64)
        _rank_rows(
            self.Xq[rows], self.Xref, cand, proximity_dist, self.n_cand, self.active,
            self.weights, self.k, 0, rows.shape[0], ind, dist,
        )  # fmt: skip
        return ind, dist


def pair_distances(X: np.ndarray, a: np.ndarray, b: np.ndarray, weights: np.ndarray):
    """Relevance distances between rows ``a[i]`` and ``b[i]`` of ``X``."""
    diff = X[a].astype(np.float64) - X[b]
    return np.sqrt((diff * diff * weights).sum(axis=1))
