"""``UnsupervisedForest(distance="relevance")``: proximity candidates ranked by a learned metric."""

from __future__ import annotations

import numpy as np
import pytest

import geoforest as gf
from geoforest.forest._relevance import (
    CANDIDATES_PER_NEIGHBOR,
    CURVE_DIMENSION,
    CUTOFF,
    DIMENSION_FEATURES,
    ESTIMATE_NEIGHBORS,
    ESTIMATE_POOL,
    MIN_STRONG,
    MIXED_UNITS,
    NOISE_FLOOR,
    POWER,
    SATURATION,
    SHEET_DIMENSION,
)


@pytest.fixture(scope="module")
def helix_noise():
    X, _ = gf.datasets.make_helix(400, random_state=0)
    noise = np.random.default_rng(1).normal(0, 2.0, (400, 6))
    return np.hstack([X, noise])


def _pair(X, **kw):
    """The same trees twice: ranked by relevance and by proximity."""
    params = {"n_estimators": 25, "random_state": 0, **kw}
    rel = gf.UnsupervisedForest(distance="relevance", **params).fit(X)
    prox = gf.UnsupervisedForest(distance="proximity", **params).fit(X)
    return rel, prox


def _brute_candidates(S_row, n_cand, exclude=None):
    """Indices by (proximity desc, index asc), the first ``n_cand`` and any tied with the last."""
    idx = np.arange(S_row.size)
    if exclude is not None:
        idx = idx[idx != exclude]
    order = idx[np.lexsort((idx, -S_row[idx]))]
    last = S_row[order[n_cand - 1]]
    m = n_cand
    while m < order.size and S_row[order[m]] == last and m < 4 * n_cand:
        m += 1
    return order[:m]


def _brute_weights(X, S, k_near, pool):
    """Relevance from each point's ``pool`` best by proximity, of those the ones
    sharing a leaf with it (``m``): the first ``ceil(m k_near / pool)`` against
    all ``m``; weights: the saturated cube of ``rho``, in the data's units, or
    over the pool's spread along a curve (median participation ratio of the
    near neighbours' spread over the strong features in pool units)."""
    X = X.astype(np.float32).astype(np.float64)
    n, p = X.shape
    pool = min(pool, n - 1)
    k_near = min(k_near, pool)
    near, allp = np.zeros(p), np.zeros(p)
    n_near = n_all = 0
    nears = []  # (row, its leaf-sharing pool, its number of near ones)
    for i in range(n):
        idx = np.array([j for j in range(n) if j != i])
        nb = idx[np.lexsort((idx, -S[i, idx]))][:pool]
        nb = nb[S[i, nb] > 0]
        h = -(-nb.size * k_near // pool)
        if h >= nb.size:
            continue
        sq = (X[nb] - X[i]) ** 2
        near += sq[:h].sum(axis=0)
        allp += sq.sum(axis=0)
        n_near += h
        n_all += nb.size
        nears.append((i, nb, h))
    near /= n_near
    allp /= n_all
    rho = np.clip(1 - near / allp, 0, 1)
    top = rho.max()
    strong = np.flatnonzero(rho >= SATURATION * top)
    strong = strong[np.argsort(-rho[strong], kind="stable")][:DIMENSION_FEATURES]
    dim = np.inf
    if strong.size >= 2:
        ratios = []
        for i, nb, h in nears:
            if h < 3:
                continue
            P = (X[np.ix_(nb, strong)] - X[i, strong]) / np.sqrt(allp[strong])
            P = P[np.argsort((P**2).sum(axis=1), kind="stable")[:h]]
            lam = np.linalg.svd(P - P.mean(axis=0), compute_uv=False) ** 2
            ratios.append(lam.sum() ** 2 / (lam**2).sum())
        dim = np.median(ratios)
    full = np.minimum(1.0, rho / (SATURATION * top)) ** POWER * (rho >= CUTOFF * top)
    n_strong = (rho >= SATURATION * top).sum()
    if n_strong < MIN_STRONG and (n_strong == 1 or np.median(rho) > NOISE_FLOOR * top):
        return rho, np.ones(p)  # no structure: Euclid
    # The library's ranges are over the estimate rows and their pools: every row here.
    span = np.ptp(X[:, rho >= SATURATION * top], axis=0)
    span = span[span > 0]
    sheet = CURVE_DIMENSION <= dim < SHEET_DIMENSION
    if not sheet or (span.size > 1 and span.max() > MIXED_UNITS * span.min()):
        return rho, full / allp
    return rho, full


def _brute_rank(d, shared, k):
    """Positions of the ``k`` neighbours among candidates (best proximity first):
    those sharing a leaf, nearest first, completed by the nearest of the others;
    then the whole set in ascending distance (stable: proximity order on ties)."""
    taken = np.lexsort((np.arange(d.size), d, ~shared))[:k]
    return taken[np.argsort(d[taken], kind="stable")]


@pytest.mark.parametrize("method", ["all", "oob"])
def test_relevance_and_neighbours_match_brute_force(helix_noise, method, search_block):
    # "all": candidates counted (proximities share one T); "oob": per-pair tree masks.
    X = helix_noise[:150]
    rel, prox = _pair(X)
    S = prox.proximity(dense=True)
    rho, w = _brute_weights(X, S, ESTIMATE_NEIGHBORS, ESTIMATE_POOL)
    np.testing.assert_allclose(rel.feature_relevance_, rho, rtol=1e-6, atol=1e-9)
    S = prox.proximity(method=method, dense=True)
    X64 = X.astype(np.float32).astype(np.float64)
    for k in (1, 5, 12):
        dist, ind = rel.kneighbors(n_neighbors=k, method=method)
        n_cand = CANDIDATES_PER_NEIGHBOR * (k + 1) - 1
        for i in range(X.shape[0]):
            cand = _brute_candidates(S[i], n_cand, exclude=i)
            d = np.sqrt((((X64[cand] - X64[i]) ** 2) * w).sum(axis=1))
            best = _brute_rank(d, S[i, cand] > 0, k)
            np.testing.assert_array_equal(ind[i], cand[best])
            np.testing.assert_allclose(dist[i], d[best], rtol=1e-5)


def test_new_points_and_training_points_agree(helix_noise, search_block):
    rel, _ = _pair(helix_noise)
    _, ind_train = rel.kneighbors(n_neighbors=7)
    dist_q, ind_q = rel.kneighbors(helix_noise, n_neighbors=8)
    # Each training point finds itself first, then its kneighbors(None) (no duplicate rows).
    np.testing.assert_array_equal(ind_q[:, 0], np.arange(helix_noise.shape[0]))
    np.testing.assert_array_equal(dist_q[:, 0], 0.0)
    np.testing.assert_array_equal(ind_q[:, 1:], ind_train)
    assert np.all(np.diff(dist_q, axis=1) >= 0)


def test_noise_columns_lose_their_relevance(helix_noise):
    rel, prox = _pair(helix_noise, max_tied_fraction=None)
    rho = rel.feature_relevance_
    assert np.all(rho[:3] > 0.6), rho
    assert np.all(rho[3:] < 0.15) and rho[:3].min() > 5 * rho[3:].max(), rho
    # Proximity itself does not change; only the ranking of neighbours.
    np.testing.assert_array_equal(rel.proximity(dense=True), prox.proximity(dense=True))


def test_relevance_beats_proximity_on_the_papers_helix():
    from geoforest_experiments._runner import simulation, truth
    from geoforest_experiments.neighbours import precision_recall

    for noise in (0, 100):
        X, latent = simulation("helix", 600, noise_dims=noise, random_state=0)
        rel, prox = _pair(X, n_estimators=50)
        p = {
            name: precision_recall(
                f.kneighbors(n_neighbors=30, return_distance=False), [30], **truth("helix", latent)
            ).precision[0]
            for name, f in (("relevance", rel), ("proximity", prox))
        }
        assert p["relevance"] > p["proximity"] + 0.03, (noise, p)


def test_same_result_for_any_n_jobs(helix_noise):
    kw = {"n_estimators": 10, "random_state": 3, "distance": "relevance"}
    a = gf.UnsupervisedForest(n_jobs=1, **kw).fit(helix_noise)
    b = gf.UnsupervisedForest(n_jobs=2, **kw).fit(helix_noise)
    np.testing.assert_array_equal(a.feature_relevance_, b.feature_relevance_)
    for X in (None, helix_noise[:50] + 0.01):
        da, ia = a.kneighbors(X, n_neighbors=9)
        db, ib = b.kneighbors(X, n_neighbors=9)
        np.testing.assert_array_equal(ia, ib)
        np.testing.assert_array_equal(da, db)


@pytest.mark.filterwarnings("ignore:.* training rows are never .* of any tree:UserWarning")
def test_points_sharing_a_leaf_are_taken_first_and_distances_ascend():
    # Few trees and method="oob": some rows share no out-of-bag leaf with many others.
    X = np.random.default_rng(0).normal(size=(120, 3))
    f = gf.UnsupervisedForest(
        n_estimators=4, min_samples_split=6, random_state=0, distance="relevance"
    ).fit(X)
    S = f.proximity(method="oob", dense=True)
    np.fill_diagonal(S, 0.0)
    k = 40
    dist, ind = f.kneighbors(n_neighbors=k, method="oob")
    shared = np.take_along_axis(S, ind, axis=1) > 0
    # A row takes a point sharing no leaf only when the forest gave it fewer than
    # k sharing one (all of which it then holds) ...
    n_sharing = (S > 0).sum(axis=1)
    np.testing.assert_array_equal(shared.sum(axis=1), np.minimum(n_sharing, k))
    assert np.any(~shared)
    # ... and the distances ascend in every row all the same.
    assert np.all(np.diff(dist, axis=1) >= 0)


@pytest.mark.filterwarnings("ignore:.* training rows are never .* of any tree:UserWarning")
def test_neighbours_sharing_no_leaf_match_brute_force(search_block):
    # Few trees, "oob": fewer than k candidates share a leaf with most rows, so
    # the rest of each row is ranked by the metric alone (stable on ties).
    X = np.random.default_rng(0).normal(size=(120, 3))
    rel, prox = _pair(X, n_estimators=4, min_samples_split=6)
    _, w = _brute_weights(X, prox.proximity(dense=True), ESTIMATE_NEIGHBORS, ESTIMATE_POOL)
    S = prox.proximity(method="oob", dense=True)
    X64 = X.astype(np.float32).astype(np.float64)
    k = 40
    dist, ind = rel.kneighbors(n_neighbors=k, method="oob")
    n_unshared = 0
    for i in range(X.shape[0]):
        n_cand = min(CANDIDATES_PER_NEIGHBOR * (k + 1) - 1, X.shape[0] - 1)
        cand = _brute_candidates(S[i], n_cand, exclude=i)
        d = np.sqrt((((X64[cand] - X64[i]) ** 2) * w).sum(axis=1))
        best = _brute_rank(d, S[i, cand] > 0, k)
        np.testing.assert_array_equal(ind[i], cand[best])
        np.testing.assert_allclose(dist[i], d[best], rtol=1e-5)
        n_unshared += np.count_nonzero(S[i, ind[i]] == 0)
    assert n_unshared > 10 * X.shape[0]


def test_merged_forest_reestimates_its_metric(helix_noise):
    a = gf.UnsupervisedForest(n_estimators=6, random_state=0, distance="relevance").fit(helix_noise)
    b = gf.UnsupervisedForest(n_estimators=6, random_state=1, distance="relevance").fit(helix_noise)
    merged = gf.merge_forests(a, b)
    both = gf.UnsupervisedForest(n_estimators=6, random_state=0, distance="proximity")
    shared = np.rint(6 * both.fit(helix_noise).proximity(dense=True))
    shared += np.rint(6 * both.set_params(random_state=1).fit(helix_noise).proximity(dense=True))
    S = shared / 12  # the merged forest's proximity, as counts out of its 12 trees
    rho, _ = _brute_weights(helix_noise, S, ESTIMATE_NEIGHBORS, ESTIMATE_POOL)
    np.testing.assert_allclose(merged.feature_relevance_, rho, rtol=1e-6, atol=1e-9)


def test_auto_is_the_default_and_kernels_are_untouched(helix_noise):
    assert gf.UnsupervisedForest().distance == "auto"
    rel, prox = _pair(helix_noise)
    auto = gf.UnsupervisedForest(n_estimators=25, random_state=0).fit(helix_noise[:400])
    assert (auto.distance_, rel.distance_, prox.distance_) == ("relevance",) * 2 + ("proximity",)
    np.testing.assert_array_equal(auto.feature_relevance_, rel.feature_relevance_)
    np.testing.assert_array_equal(
        auto.kneighbors(n_neighbors=5)[1], rel.kneighbors(n_neighbors=5)[1]
    )
    assert not hasattr(prox, "feature_relevance_")
    d_prox, i_prox = prox.kneighbors(n_neighbors=5)
    # rpfCluster's kernel reads proximities whatever kneighbors ranks by.
    d_rel, i_rel = rel._proximity_kneighbors(n_neighbors=5)
    np.testing.assert_array_equal(i_rel, i_prox)
    np.testing.assert_array_equal(d_rel, d_prox)
    G = rel.kneighbors_graph(n_neighbors=5, mode="distance")
    assert (G != G.T).nnz == 0
    # set_params after the fit ranks the same trees by proximity.
    auto.set_params(distance="proximity")
    np.testing.assert_array_equal(auto.kneighbors(n_neighbors=5)[1], i_prox)


def test_forest_grown_from_dask_ranks_as_in_memory(helix_noise):
    # Design 2.11: the same ranking from a Dask array as from memory, at every distance.
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    Xd = da.from_array(helix_noise, chunks=200)
    kw = {"n_estimators": 3, "random_state": 0}
    with dask.config.set(scheduler="sync"):
        for distance in ("auto", "relevance"):
            f = gf.UnsupervisedForest(distance=distance, **kw).fit(Xd)
            local = gf.UnsupervisedForest(distance=distance, **kw).fit(helix_noise)
            assert f.distance_ == local.distance_ == "relevance"
            np.testing.assert_allclose(f.feature_relevance_, local.feature_relevance_, rtol=1e-9)
            got = f.kneighbors(n_neighbors=3, return_distance=False).compute()
            np.testing.assert_array_equal(got, local.kneighbors(n_neighbors=3)[1])
        f.set_params(distance="proximity")
        local.set_params(distance="proximity")
        got = f.kneighbors(n_neighbors=3, return_distance=False).compute()
        np.testing.assert_array_equal(got, local.kneighbors(n_neighbors=3)[1])
        f = gf.UnsupervisedForest(distance="proximity", **kw).fit(Xd)
        f.set_params(distance="relevance")
        with pytest.raises(ValueError, match="distance='proximity'"):
            f.kneighbors(n_neighbors=3)


def test_no_relevance_falls_back_to_zscored_euclid():
    # Ten points never split (min_samples_split=45): every relevance is 0.
    X = np.c_[np.arange(10.0) ** 1.5, np.zeros(10), 100 * np.sin(np.arange(10.0))]
    f = gf.UnsupervisedForest(n_estimators=5, random_state=0, distance="relevance").fit(X)
    np.testing.assert_array_equal(f.feature_relevance_, 0.0)
    Z = (X - X.mean(0))[:, [0, 2]] / X[:, [0, 2]].std(0)
    D = np.linalg.norm(Z[:, None] - Z[None], axis=2) + np.diag(np.full(10, np.inf))
    ind = f.kneighbors(n_neighbors=3, return_distance=False)
    np.testing.assert_array_equal(ind, np.argsort(D, axis=1, kind="stable")[:, :3])


def test_far_off_columns_are_centred_once(helix_noise):
    # A float64 column far from zero is centred once at fit (forest/_input.py);
    # the estimate must not shift the training rows a second time.
    X = helix_noise[:150].astype(np.float64).copy()
    X[:, 0] += 1e7
    kw = {"n_estimators": 25, "random_state": 0}
    rel = gf.UnsupervisedForest(distance="relevance", **kw).fit(X)
    prox = gf.UnsupervisedForest(distance="proximity", **kw).fit(X)
    assert rel._offset is not None
    rho, _ = _brute_weights(
        rel._X_fit, prox.proximity(dense=True), ESTIMATE_NEIGHBORS, ESTIMATE_POOL
    )
    np.testing.assert_allclose(rel.feature_relevance_, rho, rtol=1e-6, atol=1e-9)


def test_metric_weights_measure_the_neighbours_it_lists():
    """``metric_weights_`` is the metric of kneighbors: every listed distance is
    sqrt(sum_j w_j (x_j - y_j)^2); None while the ranking is by proximity, and
    unset before fit."""
    rng = np.random.RandomState(0)
    X = np.c_[rng.normal(size=(300, 2)) * [3.0, 1.0], rng.normal(size=(300, 3))] + 5e3
    forest = gf.UnsupervisedForest(n_estimators=30, random_state=0)
    with pytest.raises(AttributeError):
        forest.metric_weights_  # noqa: B018
    forest.fit(X)
    w = forest.metric_weights_
    assert forest.distance_ == "relevance" and w.shape == (5,) and np.all(w >= 0)
    w[:] = -1.0  # a copy: the forest's own weights are untouched
    w = forest.metric_weights_
    assert np.all(w >= 0)
    dist, ind = forest.kneighbors(n_neighbors=8)
    diff = X[:, None, :] - X[ind]
    np.testing.assert_allclose(dist, np.sqrt((diff * diff * w).sum(axis=2)), rtol=1e-5)
    forest.set_params(distance="proximity")
    assert forest.metric_weights_ is None
