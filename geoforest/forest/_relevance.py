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

    d(x, y)^2 = sum_j min(1, rho_j / (SATURATION max rho))^POWER (x_j - y_j)^2 / u_j,

structureless features faded out, every feature the forest resolved about
as well as the best counted fully, each in units of its spread within a pool
(``u_j = s2_j``), except on a sheet, in the data's own units (``u_j = 1``;
:func:`metric_weights`, :func:`local_dimension`).  The neighbours of a query are its
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

Where the forest found no structure (:func:`ranking_kind`) the ranking is
Euclid's over :data:`NO_STRUCTURE_CANDIDATES` ``x k`` candidates: the
leaves' own shape (slabs of one feature, on a structureless cloud) then
decides less of what is near.

When every relevance is 0 (no feature is closer among forest neighbours than
among random pairs, e.g. trees that never split a small data set) the
ranking is by the z-scored Euclidean distance (weights ``1 / var_j``).
Features of relevance 0 cost nothing in the ranking (they are skipped).
"""

from __future__ import annotations

import numpy as np

from .._engine.sampling import canonical_order
from .._jit import njit
from ._ranking import CANDIDATES_PER_NEIGHBOR, LearnedMetric

#: Proximity neighbours per point in the relevance estimate: the nearest ...
ESTIMATE_NEIGHBORS = 30
#: ... against this many, the candidate pool of a 30-neighbour query.
ESTIMATE_POOL = CANDIDATES_PER_NEIGHBOR * ESTIMATE_NEIGHBORS
#: Most points whose neighbours enter the relevance estimate.
ESTIMATE_ROWS = 2000
#: Exponent of the relevance in the metric's weights, below the saturation.
POWER = 3
#: A feature whose relevance is at least this fraction of the largest counts fully.
SATURATION = 0.5
#: A feature whose relevance is below this fraction of the largest counts not at all.
CUTOFF = 0.2
#: Median local dimensions (participation ratio of the near neighbours'
#: spread) from ``CURVE_DIMENSION`` to ``SHEET_DIMENSION`` are a sheet, measured
#: in the data's own units; below, a curve; above, fuller structure (both in
#: units of each feature's pool spread).  What each kind of data measures:
#: ``docs/defaults.md``.
CURVE_DIMENSION = 1.25
SHEET_DIMENSION = 2.25
#: Most features (the most relevant) the local dimension is measured over.
DIMENSION_FEATURES = 16
#: Strong features whose ranges span more than this factor are in mixed units:
#: far above any sheet's aspect, far below raw tabular data's spans.
MIXED_UNITS = 100.0
#: Fewer than this many strong features over a floor of relevance (median, as
#: a fraction of the largest) above ``NOISE_FLOOR`` are no structure to rank
#: by (rotated noise: one or two features lead by chance, by a hair).
MIN_STRONG = 3
NOISE_FLOOR = 0.1
#: Proximity candidates per neighbour when the forest found no structure: the
#: ranking is then Euclid's, and a forest whose leaves are slabs of one feature
#: (Fast-BIC's feedback on a structureless cloud) gives candidates from one slab
#: at :data:`CANDIDATES_PER_NEIGHBOR`, a kNN graph stretched along that feature.
NO_STRUCTURE_CANDIDATES = 24


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


def relevance(X, rows, neighbors, n_shared, var, n_near: int):
    """Relevance ``rho_j`` of every feature from ``neighbors[i]``, the forest
    neighbours of training row ``rows[i]`` (self excluded, best first), of
    which the first ``n_shared[i]`` share a leaf with it: the first
    ``n_near / neighbors.shape[1]`` of those against all of them (the pool).

    Why only those sharing a leaf: the others are padding at proximity 0,
    arbitrary points of the data set.  Even a few padded rows would dominate
    the pool's mean squared difference along the structure's features, shrink
    their weights and let the noise features decide the ranking
    (measurements: ``docs/defaults.md``).

    Returns ``(rho, weights, kind)`` (:func:`ranking_kind`, :func:`metric_weights`).
    """
    p = X.shape[1]
    near, pool, n_near_pairs, n_pool_pairs = _near_pool_sums(
        X, rows, neighbors, n_shared.astype(np.int64), n_near, neighbors.shape[1]
    )
    rho = np.zeros(p)
    spread = np.zeros(p)
    if n_pool_pairs > 0:
        spread = pool / n_pool_pairs
        varying = spread > 0
        rho[varying] = np.clip(1.0 - (near[varying] / n_near_pairs) / spread[varying], 0.0, 1.0)
    dim = local_dimension(X, rows, neighbors, n_shared, n_near, rho, spread)
    # Ranges over the rows read here (the estimate rows and their pools), so a
    # forest grown from a Dask array, which gathers just those, finds the same.
    # There every row of X is read: no copy of it.
    held = read_rows(rows, neighbors)
    X_held = X if held.shape[0] == X.shape[0] else X[held]
    span = X_held.max(axis=0).astype(np.float64) - X_held.min(axis=0)
    del X_held
    kind = ranking_kind(rho, span, dim)
    return rho, metric_weights(rho, spread, var, kind), kind


def read_rows(rows: np.ndarray, neighbors: np.ndarray) -> np.ndarray:
    """The rows :func:`relevance` reads (``rows`` and every entry of
    ``neighbors``), sorted, each once.

    Sorted and compared with their predecessor rather than ``np.unique``,
    which builds a hash table of several times the rows' bytes first.
    """
    held = np.concatenate([rows, neighbors.ravel()]).astype(np.int64, copy=False)
    held.sort()
    keep = np.empty(held.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(held[1:], held[:-1], out=keep[1:])
    return held[keep]


def ranking_kind(rho: np.ndarray, span: np.ndarray, dim: float) -> str:
    """What the forest's relevance says about how to rank, one of:

    ``"nothing learned"``
        No feature has any relevance (trees too small to split).
    ``"no structure"``
        Fewer than :data:`MIN_STRONG` features within a factor
        :data:`SATURATION` of the most relevant one, over a floor (median
        relevance) above :data:`NOISE_FLOOR` of it: every feature carries a
        little, none much.
        Noise that is not aligned with the features (a rotated problem) looks
        like this, and a metric built on one feature would lose to Euclid.
        So does a *single* feature far ahead of all others, whatever the
        floor: that is how Fast-BIC's own feedback looks on a structureless
        cloud (a cut along a feature leaves flatter slabs, which the next
        cuts favour again), and a metric of that one feature turns a Gaussian
        blob into a path whose spectrum shows clusters.  Structure along one
        feature (two modes in noise columns) is resolved within its modes
        too and leaves several strong features (``docs/defaults.md``).
    ``"curve"``
        The strong features' near neighbours span about one dimension
        (``dim < CURVE_DIMENSION``, :func:`local_dimension`).
    ``"sheet"``
        About two (``dim < SHEET_DIMENSION``), in comparable units.
    ``"mixed units"``
        A sheet whose strong features' ranges ``span`` differ by more than
        :data:`MIXED_UNITS` (raw tabular data: areas beside ratios; not
        pixels, whose spreads differ but whose ranges do not).
    ``"full"``
        More: clusters, real data.
    """
    top = float(rho.max()) if rho.size else 0.0
    if top <= 0:
        return "nothing learned"
    strong = rho >= SATURATION * top
    n_strong = np.count_nonzero(strong)
    if n_strong < MIN_STRONG and (n_strong == 1 or np.median(rho) > NOISE_FLOOR * top):
        return "no structure"
    if dim < CURVE_DIMENSION:
        return "curve"
    if dim >= SHEET_DIMENSION:
        return "full"
    wide = span[strong & (span > 0)]
    if wide.size > 1 and wide.max() > MIXED_UNITS * wide.min():
        return "mixed units"
    return "sheet"


def metric_weights(rho: np.ndarray, spread: np.ndarray, var: np.ndarray, kind: str):
    """The metric's feature weights from the relevance ``rho``, the pool's
    spread ``spread`` (mean squared difference), the column variances and
    the :func:`ranking_kind`.

    ``w_j = min(1, rho_j / (SATURATION max rho))^POWER / u_j``, and 0 below
    ``CUTOFF max rho``.  The cube fades out features the forest holds no
    tighter among near neighbours than in the pool, and the cutoff drops
    them: noise columns keep a small relevance, and in the data's own units
    a few dozen of them with a spread far above the structure's would still
    decide; the
    saturation lets every feature within a factor
    :data:`SATURATION` of the most relevant one count fully, because a sheet
    the trees cut less often along one of its directions shows a lower (but
    clear) relevance there, and the plain cube shrank that direction.

    The units ``u_j``: the pool's spread, except on a sheet in comparable
    units, where they are the data's own (``1``).  Fast-BIC's gain does not
    depend on a projection's scale, so the trees cut each direction about as
    often whatever its extent and a pool is stretched as the data are:
    measuring a sheet in pool units rescales it towards a square and ranks
    along the wrong direction.  Along a curve rescaling features changes no
    order along it and moves its folds apart (the paper's helix, whose coils
    lie closer than its neighbours along it); in fuller structure (clusters,
    real data) pool units weigh each feature by how finely the forest
    resolves it, which separates clusters better; in mixed units the
    data's own would let one column decide.  Measurements: ``docs/defaults.md``.

    ``"no structure"``: Euclid in the data's units over every feature (on the
    same proximity candidates); ``"nothing learned"``: z-scored Euclid.
    """
    weights = np.zeros_like(rho)
    if kind == "no structure":
        return np.ones_like(rho)
    if kind != "nothing learned":
        top = float(rho.max())
        full = np.minimum(1.0, rho / (SATURATION * top)) ** POWER
        full[rho < CUTOFF * top] = 0.0
        if kind == "sheet":
            weights = full
        else:
            varying = spread > 0
            weights[varying] = full[varying] / spread[varying]
    if not np.any(weights > 0):
        varying = var > 0
        weights[varying] = 1.0 / var[varying]
    return weights


def local_dimension(X, rows, neighbors, n_shared, n_near: int, rho, spread) -> float:
    """The median over estimate rows of the participation ratio
    ``(sum l)^2 / sum l^2`` of the eigenvalues ``l`` of their near
    neighbours' spread: about 1 along a curve, 2 on a sheet, more on fuller
    structure.

    Measured over the (at most :data:`DIMENSION_FEATURES`) most relevant of
    the features within a factor :data:`SATURATION` of the most relevant one,
    each in units of its pool spread, which makes a sheet's neighbourhood
    round whatever its aspect (:func:`metric_weights`).  The near neighbours
    are the nearest of the row's leaf-sharing pool *in those units*, not the
    first by proximity: with few trees the highest proximities are the
    points of one leaf, a slab that would make a sheet look like a curve.
    ``inf`` (not a curve) with fewer than two such features (rotated noise
    can leave a single feature well ahead of the rest, which says nothing
    about the structure's dimension) or when no row has three near
    neighbours.
    """
    top = float(rho.max()) if rho.size else 0.0
    strong = np.flatnonzero((rho >= SATURATION * top) & (spread > 0)) if top > 0 else rho[:0]
    if strong.size < 2:  # one feature is no evidence of a curve: it is 1-D by itself
        return np.inf
    strong = strong[np.argsort(-rho[strong], kind="stable")][:DIMENSION_FEATURES]
    scale = 1.0 / np.sqrt(spread[strong])
    ratios = np.empty(rows.shape[0])
    count = _participation_ratios(
        X,
        np.asarray(rows, dtype=np.int64),
        np.asarray(neighbors, dtype=np.int64),
        np.asarray(n_shared, dtype=np.int64),
        int(n_near),
        strong.astype(np.int64),
        scale,
        ratios,
    )
    return float(np.median(ratios[:count])) if count else np.inf


@njit(nogil=True, cache=True)
def _participation_ratios(X, rows, neighbors, n_shared, n_near, strong, scale, out):
    """``out[:count]``: the participation ratio of each estimate row's near
    neighbours (:func:`local_dimension`), returning ``count``.

    For the scatter matrix ``C = D^T D`` of the centred near neighbours the
    eigenvalues' ``(sum l)^2 / sum l^2`` is ``trace(C)^2 / ||C||_F^2``
    (``C`` is symmetric), so no eigendecomposition is needed.
    """
    n_pool = neighbors.shape[1]
    s = strong.shape[0]
    P = np.empty((n_pool, s))
    d = np.empty(n_pool)
    C = np.empty((s, s))
    mean = np.empty(s)
    count = 0
    for i in range(rows.shape[0]):
        m = min(n_shared[i], n_pool)
        h = (m * n_near + n_pool - 1) // n_pool
        if h < 3 or h >= m:
            continue
        a = rows[i]
        for c in range(m):
            b = neighbors[i, c]
            acc = 0.0
            for j in range(s):
                t = (np.float64(X[b, strong[j]]) - np.float64(X[a, strong[j]])) * scale[j]
                P[c, j] = t
                acc += t * t
            d[c] = acc
        near = np.argsort(d[:m], kind="mergesort")[:h]  # stable: proximity order on ties
        mean[:] = 0.0
        for c in near:
            for j in range(s):
                mean[j] += P[c, j]
        mean /= h
        C[:, :] = 0.0
        for c in near:
            for j in range(s):
                u = P[c, j] - mean[j]
                for q in range(j, s):
                    C[j, q] += u * (P[c, q] - mean[q])
        trace = 0.0
        frob = 0.0
        for j in range(s):
            trace += C[j, j]
            frob += C[j, j] * C[j, j]
            for q in range(j + 1, s):
                frob += 2.0 * C[j, q] * C[j, q]
        if trace > 0:
            out[count] = trace * trace / frob
            count += 1
    return count


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
    if not (forest._flat.left >= 0).any():
        # No tree split (fewer rows than min_samples_split): every point shares
        # each tree's one leaf with every other, so a pool's order, and with it
        # which neighbours are "near", is the order the rows were numbered in,
        # not the forest's.  Nothing was learned, whatever the numbering.
        n_shared = np.zeros_like(n_shared)
    rho, weights, kind = relevance(X, rows, neighbors, n_shared, var, near)
    per_neighbor = NO_STRUCTURE_CANDIDATES if kind == "no structure" else CANDIDATES_PER_NEIGHBOR
    return LearnedMetric(rho, weights, kind, per_neighbor)


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

    @property
    def metric_weights_(self) -> np.ndarray | None:
        """The weights ``w`` of the learned metric, or ``None``.

        While :attr:`distance_` is ``"relevance"`` the distances of
        :meth:`kneighbors` are ``d(x, y)^2 = sum_j w_j (x_j - y_j)^2``: a
        Euclidean distance once each feature is scaled by ``sqrt(w_j)``,
        which lets a neighbour graph's components be joined by an exact
        minimum spanning forest in this metric in near-linear time
        (:meth:`geoforest.graph.Geometry.bridges`).  ``None`` while the
        ranking is by proximity, which has no such coordinates.  A copy.
        """
        if not hasattr(self, "_metric"):
            raise AttributeError("metric_weights_ is set by fit")
        if self.distance_ == "proximity":
            return None
        return np.array(self._metric.weights, dtype=np.float64)

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
    del ind, dist  # before the rows arrive
    held = read_rows(rows, neighbors)
    X_held, var = rows_and_variances(X, held)
    local = np.searchsorted(held, rows), np.searchsorted(held, neighbors)
    return X_held, local[0], local[1], n_shared, var
