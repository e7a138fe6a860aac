"""Out-of-sample queries: LLPD.kneighbors(X), LLPDSpectralClustering.predict,
ForestSpectralClustering.predict, each against an independent brute force."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist
from sklearn.datasets import load_iris, load_wine, make_blobs
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.cluster._rpf_kernel import kernel_vote
from geoforest.datasets import make_ldln
from geoforest.llpd import LLPD, LLPDSpectralClustering
from geoforest.metrics import clustering_accuracy


# ----------------------------------------------------------------- references
def minimax(D: np.ndarray) -> np.ndarray:
    """Minimax path lengths of the complete graph with edge lengths ``D`` (Floyd-Warshall)."""
    D = D.copy()
    for k in range(D.shape[0]):
        D = np.minimum(D, np.maximum(D[:, k : k + 1], D[k : k + 1, :]))
    return D


def brute_llpd_from(X: np.ndarray, x: np.ndarray, train_edges: np.ndarray | None = None):
    """LLPD from ``x`` to every row of ``X`` in the complete graph of ``X`` plus ``x``.

    ``train_edges`` replaces the Euclidean lengths between training points
    (the m-scale approximation's LLPDs); the legs from ``x`` stay Euclidean.
    """
    A = np.r_[X, x[None, :]]
    D = cdist(A, A)
    if train_edges is not None:
        D[:-1, :-1] = train_edges
    return minimax(D)[-1, :-1]


def brute_llpd_mst(X: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The same LLPD from scipy's minimum spanning tree of ``X`` plus ``x`` (longest leg)."""
    A = np.r_[X, x[None, :]]
    D = cdist(A, A)
    tiny = 1e-9 * D[D > 0].min()
    D[D == 0] = tiny  # scipy drops zero-weight edges; a tiny one keeps duplicates joined
    np.fill_diagonal(D, 0.0)
    T = minimum_spanning_tree(sp.csr_array(D)).toarray()  # dense input drops tiny weights
    T = np.maximum(T, T.T)
    n = A.shape[0]
    out = np.full(n, np.inf)
    out[-1] = 0.0
    stack = [n - 1]
    while stack:  # depth-first from x, carrying the longest leg so far
        u = stack.pop()
        for v in np.flatnonzero(T[u]):
            if out[v] == np.inf:
                out[v] = max(out[u], T[u, v])
                stack.append(v)
    out[out <= tiny] = 0.0
    return out[:-1]


def brute_kneighbors_new(X, Q, k, position=None, train_edges=None):
    """Rank the training points of every query by (LLPD, Euclidean distance, index) or
    (LLPD, depth-first position)."""
    n = X.shape[0]
    dist = np.empty((Q.shape[0], k))
    ind = np.empty((Q.shape[0], k), dtype=np.int64)
    for q, x in enumerate(Q):
        rho = brute_llpd_from(X, x, train_edges)
        if position is None:
            order = np.lexsort((np.arange(n), cdist(x[None, :], X)[0], rho))
        else:
            order = np.lexsort((position, rho))
        ind[q] = order[:k]
        dist[q] = rho[order[:k]]
    return dist, ind


def _sets():
    rng = np.random.default_rng(0)
    line = np.c_[np.cumsum(rng.random(40) ** 3), np.zeros(40)]  # a chain: a deep dendrogram
    return {
        "uniform-2d": rng.random((50, 2)),
        "uniform-1d": rng.random((30, 1)),
        "gauss-5d": rng.standard_normal((40, 5)),
        # Integer grids: equal distances everywhere, duplicate points (LLPD 0).
        "grid-2d-ties": rng.integers(0, 5, (60, 2)).astype(float),
        "grid-3d-ties": rng.integers(0, 3, (45, 3)).astype(float),
        "chain": line,
    }


SETS = _sets()


def _queries(X: np.ndarray, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = X.min(axis=0), X.max(axis=0)
    d = X.shape[1]
    return np.r_[
        lo + rng.random((12, d)) * (hi - lo),  # inside the data's box
        X[[0, 3, 7]],  # copies of training points
        np.round(lo + rng.random((6, d)) * (hi - lo)),  # grid points: exact ties
        np.round(lo + rng.random((3, d)) * (hi - lo)) + 0.5,
        (hi + 3.0)[None, :],  # far outside
    ]


# ----------------------------------------------------------------- LLPD.kneighbors(X)
@pytest.mark.parametrize("name", list(SETS))
@pytest.mark.parametrize("tie_break", ["euclidean", "tree"])
def test_kneighbors_of_new_points_equals_brute_force(name, tie_break):
    X = SETS[name]
    n = X.shape[0]
    model = LLPD().fit(X)
    Q = _queries(X)
    position = None
    if tie_break == "tree":
        position = np.empty(n, dtype=np.int64)
        position[model.dendrogram_.order] = np.arange(n)
    ref_dist, ref_ind = brute_kneighbors_new(X, Q, n, position=position)
    for k in (1, 4, n):
        dist, ind = model.kneighbors(Q, n_neighbors=k, tie_break=tie_break)
        assert dist.shape == ind.shape == (Q.shape[0], k)
        np.testing.assert_array_equal(ind, ref_ind[:, :k])
        np.testing.assert_allclose(dist, ref_dist[:, :k], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(
            model.kneighbors(Q, k, return_distance=False, tie_break=tie_break), ind
        )


def test_floyd_warshall_reference_agrees_with_scipy_mst():
    """The two brute forces agree (the reference is not the formula being tested)."""
    for X in SETS.values():
        for x in _queries(X)[::4]:
            np.testing.assert_allclose(brute_llpd_from(X, x), brute_llpd_mst(X, x), rtol=1e-12)


@pytest.mark.parametrize("name", ["uniform-2d", "gauss-5d", "grid-2d-ties", "chain"])
def test_training_points_as_queries_reproduce_training_neighbours(name):
    X = SETS[name]
    n = X.shape[0]
    model = LLPD().fit(X)
    for tie_break in ("euclidean", "tree"):
        for k in (1, 5, n - 1):
            dist, ind = model.kneighbors(n_neighbors=k, tie_break=tie_break)
            dist_q, ind_q = model.kneighbors(X, n_neighbors=k + 1, tie_break=tie_break)
            assert np.all(dist_q[:, 0] == 0)  # a point is at LLPD 0 from its own copy
            for i in range(n):
                # The query's own copy is returned (after any lower-index duplicate):
                # without it the row is the training row, exactly.
                hits = np.flatnonzero(ind_q[i] == i)
                keep = np.delete(np.arange(k + 1), hits[0] if hits.size else k)
                np.testing.assert_array_equal(ind_q[i, keep], ind[i])
                np.testing.assert_array_equal(dist_q[i, keep], dist[i])


def test_training_queries_on_noisy_data_match_training_distances():
    """Deeper dendrograms and many ties at one height: 1,500 LDLN points with noise."""
    X, _ = make_ldln(1500, n_clusters=3, ambient_dim=5, noise_fraction=0.3, random_state=0)
    model = LLPD().fit(X)
    for k in (1, 10):
        dist, _ = model.kneighbors(n_neighbors=k, tie_break="tree")
        dist_q, ind_q = model.kneighbors(X, n_neighbors=k + 1)
        np.testing.assert_array_equal(dist_q[:, 1:], dist)
        np.testing.assert_array_equal(ind_q[:, 0], np.arange(X.shape[0]))  # no duplicates
        np.testing.assert_array_equal(model.knn_distance(k), dist_q[:, k])


def test_new_points_on_larger_data_against_the_formula():
    """n = 1,500: the first-hop formula over every training point, from the dense LLPD."""
    X, _ = make_ldln(1500, n_clusters=3, ambient_dim=5, noise_fraction=0.3, random_state=1)
    model = LLPD().fit(X)
    P = model.pairwise()
    rng = np.random.default_rng(2)
    Q = np.r_[X[rng.choice(1500, 40)] + 0.05 * rng.standard_normal((40, 5)), rng.random((20, 5))]
    E = cdist(Q, X)
    for k in (1, 20):
        dist, ind = model.kneighbors(Q, n_neighbors=k)
        for q in range(Q.shape[0]):
            rho = np.min(np.maximum(E[q][:, None], P), axis=0)
            order = np.lexsort((np.arange(1500), E[q], rho))
            np.testing.assert_array_equal(ind[q], order[:k])
            np.testing.assert_array_equal(dist[q], rho[order[:k]])


def test_mscale_out_of_sample_uses_the_approximate_training_llpd():
    rng = np.random.default_rng(3)
    X = np.r_[rng.random((25, 2)), 10 + rng.random((25, 2))]  # a 5-NN graph of two far groups
    model = LLPD(mscale=8, mscale_neighbors=5).fit(X)
    P = model.pairwise()
    assert np.isinf(P[0, 30])
    Q = np.r_[_queries(X), [[5.0, 5.0]]]
    ref_dist, ref_ind = brute_kneighbors_new(X, Q, 50, train_edges=P)
    for k in (1, 6, 50):
        dist, ind = model.kneighbors(Q, n_neighbors=k)
        np.testing.assert_array_equal(ind, ref_ind[:, :k])
        np.testing.assert_allclose(dist, ref_dist[:, :k], rtol=1e-12)
    # A query between the groups joins them through its own legs: finite LLPD to both.
    assert np.all(np.isfinite(model.kneighbors([[5.0, 5.0]], n_neighbors=50)[0]))


def test_refit_forgets_the_query_index():
    rng = np.random.default_rng(4)
    A, B, Q = rng.random((30, 2)), 5 + rng.random((40, 2)), rng.random((5, 2))
    model = LLPD().fit(A)
    model.kneighbors(Q, n_neighbors=3)
    model.fit(B)
    fresh = LLPD().fit(B)
    got, want = model.kneighbors(Q, n_neighbors=3), fresh.kneighbors(Q, n_neighbors=3)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_kneighbors_query_validation():
    X = np.random.default_rng(0).random((10, 2))
    model = LLPD().fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but LLPD is expecting 2"):
        model.kneighbors(np.zeros((2, 3)), n_neighbors=2)
    with pytest.raises(ValueError, match="NaN"):
        model.kneighbors([[0.0, np.nan]], n_neighbors=2)
    for bad in (0, 11):
        with pytest.raises(ValueError, match=r"\[1, 10\]"):
            model.kneighbors(X[:2], n_neighbors=bad)
    with pytest.raises(TypeError, match="integer"):
        model.kneighbors(X[:2], n_neighbors=2.0)
    # n_neighbors = n_samples: every training point, for a query (none is excluded).
    _, ind = model.kneighbors(X[:2] + 0.01, n_neighbors=10)
    assert sorted(ind[0]) == list(range(10))
    with pytest.raises(NotFittedError):
        LLPD().kneighbors(X)
    # The former signature kneighbors(k): still answered, with a FutureWarning.
    with pytest.warns(FutureWarning, match="n_neighbors=3"):
        legacy = model.kneighbors(3)
    for got, want in zip(legacy, model.kneighbors(n_neighbors=3), strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="X must be an array"):
        model.kneighbors(3, n_neighbors=4)


# ----------------------------------------------------------------- LLPDSpectralClustering.predict
def brute_llpd_predict(model: LLPDSpectralClustering, X: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """The predict rule from Floyd-Warshall on the training data plus each query."""
    kept = np.flatnonzero(model.kept_)
    out = np.empty(Q.shape[0], dtype=np.intp)
    k = model.k_nse
    for q, x in enumerate(Q):
        rho_all = np.sort(brute_llpd_from(X, x))
        if np.min(cdist(x[None, :], X)) == 0:
            rho_all = rho_all[1:]  # a training point's copy is that point, not a neighbour
        if np.isfinite(model.noise_threshold_) and rho_all[k - 1] > model.noise_threshold_:
            out[q] = -1
            continue
        rho = brute_llpd_from(X[kept], x)
        e = cdist(x[None, :], X[kept])[0]
        first = np.lexsort((np.arange(kept.size), e, rho))[0]
        out[q] = model.labels_[kept[first]]
    return out


def _two_moons_with_noise(seed: int):
    rng = np.random.default_rng(seed)
    t = rng.random(25) * np.pi
    a = np.c_[np.cos(t), np.sin(t)] + 0.03 * rng.standard_normal((25, 2))
    b = np.c_[1 - np.cos(t), 0.5 - np.sin(t)] + 0.03 * rng.standard_normal((25, 2))
    noise = rng.uniform(-1.5, 2.5, (8, 2))
    return np.r_[a, b, noise]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_llpd_predict_equals_brute_force_rule(seed):
    X = _two_moons_with_noise(seed)
    # A threshold that removes the top 15 % (the automatic one is erratic on 58 points).
    theta = float(np.quantile(LLPD().fit(X).knn_distance(4), 0.85))
    model = LLPDSpectralClustering(2, k_nse=4, noise_threshold=theta, random_state=0).fit(X)
    assert 0.1 <= np.mean(~model.kept_) <= 0.2  # some noise was removed
    rng = np.random.default_rng(seed + 10)
    Q = np.r_[rng.uniform(-1.5, 2.5, (30, 2)), X[[0, 30, 52, 55]], np.round(X[:4], 1)]
    np.testing.assert_array_equal(model.predict(Q), brute_llpd_predict(model, X, Q))


@pytest.mark.parametrize("seed", range(4))
def test_llpd_predict_on_training_data_is_labels(seed):
    X, _ = make_ldln(
        800,
        n_clusters=4,
        ambient_dim=10,
        intrinsic_dim="mixed",
        noise_fraction=0.2,
        random_state=seed,
    )
    model = LLPDSpectralClustering(random_state=seed).fit(X)
    assert (~model.kept_).sum() > 0
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    # Any row order, any batch: the rule is per point.
    perm = np.random.default_rng(seed).permutation(800)
    np.testing.assert_array_equal(model.predict(X[perm]), model.labels_[perm])


def test_llpd_predict_on_training_data_other_thresholds_and_duplicates():
    X, _ = make_ldln(400, n_clusters=3, intrinsic_dim=1, noise_fraction=0.2, random_state=1)
    X = np.r_[X, X[:20], X[-5:]]  # duplicates of kept and of noise points
    for params in ({"noise_threshold": None}, {"noise_threshold": 0.05}, {"k_nse": 1}, {}):
        model = LLPDSpectralClustering(3, random_state=0, **params).fit(X)
        np.testing.assert_array_equal(model.predict(X), model.labels_)
        if params.get("noise_threshold", "auto") is None:
            assert model.noise_llpd_ is None and np.all(model.predict(X + 0.001) >= 0)


def test_llpd_predict_held_out_points():
    X, y = make_ldln(
        1500,
        n_clusters=4,
        ambient_dim=10,
        intrinsic_dim="mixed",
        noise_fraction=0.2,
        random_state=0,
    )
    perm = np.random.default_rng(0).permutation(1500)
    train, test = perm[:1000], perm[1000:]
    model = LLPDSpectralClustering(random_state=0).fit(X[train])
    pred = model.predict(X[test])
    # Measured: every held-out noise point flagged, every cluster point clustered, accuracy 1.
    assert np.mean(pred[y[test] < 0] == -1) >= 0.95
    assert np.mean(pred[y[test] >= 0] >= 0) >= 0.95
    core = (y[test] >= 0) & (pred >= 0)
    assert clustering_accuracy(y[test][core], pred[core]) >= 0.99
    # The held-out labels use the training clusters' numbering.
    both = (y[train] >= 0) & (model.labels_ >= 0)
    assert (
        clustering_accuracy(
            np.r_[y[train][both], y[test][core]], np.r_[model.labels_[both], pred[core]]
        )
        >= 0.99
    )


def test_llpd_predict_validation():
    X = _two_moons_with_noise(0)
    with pytest.raises(NotFittedError):
        LLPDSpectralClustering().predict(X)
    model = LLPDSpectralClustering(2, k_nse=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but LLPDSpectralClustering"):
        model.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        model.predict([[0.0, np.nan]])
    assert model.predict(X[:1]).shape == (1,)


# ----------------------------------------------------------------- ForestSpectralClustering.predict
def brute_forest_predict(model, Q) -> np.ndarray:
    """Mean proximity of each query to each training cluster, from the dense kernel."""
    S = model.forest_.proximity(Q, dense=True)
    labels = model.labels_
    if model.kernel_neighbors is not None:  # only the top kernel_neighbors vote
        k = min(model.kernel_neighbors, labels.size)
        S = S.copy()
        for row in S:
            order = np.lexsort((np.arange(labels.size), -row))
            row[order[k:]] = 0.0
    means = np.stack([S[:, labels == c].mean(axis=1) for c in range(labels.max() + 1)], axis=1)
    out = np.argmax(means, axis=1)
    out[means.max(axis=1) == 0] = np.argmax(np.bincount(labels))
    return out


@pytest.mark.parametrize("kernel_neighbors", [None, 15])
def test_forest_predict_equals_brute_force_vote(kernel_neighbors):
    X, _ = make_blobs(300, centers=3, n_features=4, cluster_std=1.5, random_state=0)
    model = gf.ForestSpectralClustering(
        3,
        forest=gf.RandomProjectionForest(60),
        threshold=0.1,
        scale=0.5,
        kernel_neighbors=kernel_neighbors,
        random_state=0,
        affinity="kernel",
    ).fit(X)
    rng = np.random.default_rng(0)
    Q = np.r_[X[rng.choice(300, 40)] + 0.3 * rng.standard_normal((40, 4)), X[:10]]
    np.testing.assert_array_equal(model.predict(Q), brute_forest_predict(model, Q))


@pytest.mark.parametrize(
    "data, params",
    [
        ("iris", {"n_clusters": 3}),
        ("iris", {}),
        ("wine", {"n_clusters": 3}),
        ("blobs", {}),
        ("blobs", {"n_clusters": 4, "kernel_neighbors": 30}),
    ],
)
def test_forest_predict_on_training_data_agrees_with_labels(data, params):
    """Measured agreement 0.97-1.0 (3 seeds); the labels come from the spectral embedding of
    the thresholded, sharpened affinity, the vote from the raw kernel."""
    if data == "iris":
        X = load_iris().data
    elif data == "wine":
        X = load_wine().data
    else:
        X = make_blobs(600, centers=4, cluster_std=1.5, random_state=0)[0]
    for seed in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = gf.ForestSpectralClustering(random_state=seed, **params, affinity="kernel").fit(
                X
            )
        agreement = np.mean(model.predict(X) == model.labels_)
        assert agreement >= 0.95, (data, seed, agreement)


def test_forest_predict_held_out_blobs():
    X, y = make_blobs(800, centers=4, cluster_std=0.5, random_state=2)
    model = gf.ForestSpectralClustering(4, random_state=0, affinity="kernel").fit(X[:500])
    pred = model.predict(X[500:])
    assert adjusted_rand_score(y[500:], pred) >= 0.95
    # The held-out labels use the training clusters' numbering.
    assert adjusted_rand_score(y, np.r_[model.labels_, pred]) >= 0.95


def test_forest_predict_without_co_leaf_points_falls_back_to_the_largest_cluster(monkeypatch):
    X, _ = make_blobs(200, centers=[[0, 0], [8, 8]], cluster_std=[0.5, 2.0], random_state=0)
    X = np.r_[X, np.random.default_rng(0).normal(8, 2.0, (60, 2))]  # cluster 2 is larger
    model = gf.ForestSpectralClustering(
        2, threshold=0.0, scale=1.0, random_state=0, affinity="kernel"
    ).fit(X)
    largest = np.argmax(np.bincount(model.labels_))
    real = model.forest_.proximity

    def no_leaf_for_the_first_query(Q, *args, **kwargs):
        S = sp.csr_array(real(Q, *args, **kwargs)).tolil()
        S[0, :] = 0.0
        return sp.csr_array(S)

    monkeypatch.setattr(model.forest_, "proximity", no_leaf_for_the_first_query)
    pred = model.predict(X[model.labels_ != largest][:3])
    assert pred[0] == largest and np.all(pred[1:] != largest)
    best, linked = kernel_vote(sp.csr_array((2, 4)), np.array([0, 1, 1, 0]), np.arange(4))
    assert not linked.any()


def test_forest_predict_validation():
    X = load_iris().data
    with pytest.raises(NotFittedError):
        gf.ForestSpectralClustering(affinity="kernel").predict(X)
    model = gf.ForestSpectralClustering(
        3,
        forest=gf.RandomProjectionForest(20),
        threshold=0.0,
        scale=1.0,
        random_state=0,
        affinity="kernel",
    ).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but ForestSpectralClustering"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((1, 4), np.nan))
    np.testing.assert_array_equal(model.fit_predict(X), model.labels_)  # unchanged
