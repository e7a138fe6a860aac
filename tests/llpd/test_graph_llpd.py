"""LLPD over a geometry's graph (issue 43, item 2), against brute-force minimax closures."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.graph import SubsetGeometry, spanning_tree

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ brute force
def minimax_closure(W: np.ndarray) -> np.ndarray:
    """Floyd–Warshall with (min, max): the minimax path distance of every pair."""
    D = W.copy()
    np.fill_diagonal(D, 0.0)
    for k in range(D.shape[0]):
        D = np.minimum(D, np.maximum(D[:, k : k + 1], D[k : k + 1, :]))
    return D


def edge_matrix(n, rows, cols, lengths) -> np.ndarray:
    """Dense edge lengths (inf: no edge); an edge listed twice counts at the shorter."""
    W = np.full((n, n), np.inf)
    for i, j, w in zip(rows, cols, lengths, strict=True):
        if i != j:
            W[i, j] = W[j, i] = min(W[i, j], w)
    return W


def geometry_graph(geometry, k: int) -> np.ndarray:
    """The symmetrised k-NN graph of a fitted geometry plus its bridges, densely."""
    n = geometry.n_samples_
    dist, ind = geometry.neighbors(k)
    rows = np.repeat(np.arange(n), k)
    pattern = sp.csr_matrix((np.ones(ind.size), (rows, ind.ravel())), shape=(n, n))
    pairs, lengths = geometry.bridges(pattern + pattern.T, (dist, ind))
    W = edge_matrix(n, rows, ind.ravel(), dist.ravel())
    return np.minimum(W, edge_matrix(n, pairs[:, 0], pairs[:, 1], lengths))


def kth_smallest_off_diagonal(D: np.ndarray, k: int) -> np.ndarray:
    off = D + np.diag(np.full(D.shape[0], np.inf))
    return np.sort(off, axis=1)[:, k - 1]


def brute_new_points(rho: np.ndarray, hop_d: np.ndarray, hop_i: np.ndarray) -> np.ndarray:
    """``min_j max(d(x, j), rho(j, y))`` over the first hops ``j`` of every new point."""
    out = np.full((hop_d.shape[0], rho.shape[0]), np.inf)
    for q in range(hop_d.shape[0]):
        for d, j in zip(hop_d[q], hop_i[q], strict=True):
            out[q] = np.minimum(out[q], np.maximum(d, rho[j]))
    return out


def check_queries(model, Q, brute, k):
    dist, ind = model.kneighbors(Q, n_neighbors=k)
    np.testing.assert_array_equal(dist, np.sort(brute, axis=1)[:, :k])
    np.testing.assert_array_equal(np.take_along_axis(brute, ind, axis=1), dist)
    assert all(len(set(row)) == k for row in ind.tolist())


def _clusters(seed, n, d):
    rng = np.random.RandomState(seed)
    centres = rng.uniform(-6, 6, (3, d))
    return centres[rng.randint(3, size=n)] + rng.randn(n, d)


# ------------------------------------------------------------------ LLPD over a graph
@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@SETTINGS
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(6, 40),
    d=st.integers(1, 4),
    k=st.integers(1, 6),
)
def test_forest_llpd_is_the_minimax_distance_of_its_bridged_knn_graph(seed, n, d, k):
    X = _clusters(seed, n, d)
    k = min(k, n - 1)
    forest = gf.UnsupervisedForest(5, min_samples_split=4)
    model = gf.LLPD(metric="forest", forest=forest, n_neighbors=k, random_state=seed).fit(X)
    rho = minimax_closure(geometry_graph(model.geometry_, k))
    assert np.isfinite(rho).all()  # the bridges connect the graph
    np.testing.assert_array_equal(model.pairwise(), rho)
    for kk in {1, k, n - 1}:
        np.testing.assert_array_equal(model.knn_distance(kk), kth_smallest_off_diagonal(rho, kk))
    dist, ind = model.kneighbors(n_neighbors=n - 1)
    np.testing.assert_array_equal(dist, np.sort(rho + np.diag(np.full(n, np.inf)), 1)[:, :-1])
    np.testing.assert_array_equal(np.take_along_axis(rho, ind, axis=1), dist)
    # New points join by their k edges into the graph.
    Q = X[: min(n, 5)] + 0.3 * np.random.RandomState(seed).randn(min(n, 5), d)
    hop_d, hop_i = model.geometry_.query(Q, k)
    check_queries(model, Q, brute_new_points(rho, hop_d, hop_i), min(n, 4))


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@SETTINGS
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 30),
    density=st.floats(0.0, 0.5),
    symmetric=st.booleans(),
)
def test_precomputed_llpd_is_the_minimax_distance_of_the_graph_as_given(
    seed, n, density, symmetric
):
    rng = np.random.RandomState(seed)
    G = sp.random(n, n, density=density, random_state=rng, format="coo")
    G.data = rng.choice([0.5, 1.0, 2.0, 3.5], G.nnz) if seed % 2 else 0.1 + rng.rand(G.nnz)
    if symmetric:
        G = (sp.triu(G, 1) + sp.triu(G, 1).T).tocoo()
    model = gf.LLPD(metric="precomputed").fit(G.tocsr())
    kept = G.row != G.col
    rho = minimax_closure(edge_matrix(n, G.row[kept], G.col[kept], G.data[kept]))
    np.testing.assert_array_equal(model.pairwise(), rho)  # inf between components
    for k in {1, n - 1}:
        np.testing.assert_array_equal(model.knn_distance(k), kth_smallest_off_diagonal(rho, k))
    assert not hasattr(model, "n_features_in_")
    # New points: rows of distances to the training points, every stored entry an edge.
    R = sp.random(4, n, density=0.3, random_state=rng, format="csr")
    R.data = 0.1 + rng.rand(R.nnz)
    Rd = R.toarray()
    hop_i = [np.flatnonzero(r) for r in Rd]
    brute = np.vstack(
        [brute_new_points(rho, Rd[q, h][None], h[None])[0] for q, h in enumerate(hop_i)]
    )
    check_queries(model, R, brute, n)
    # A dense row: every entry an edge, a 0 too (a copy of that training point).
    check_queries(model, Rd, brute_new_points(rho, Rd, np.tile(np.arange(n), (4, 1))), n)


def test_precomputed_components_are_at_infinite_height():
    G = sp.csr_matrix(([1.0, 2.0, 4.0], ([0, 1, 3], [1, 2, 4])), shape=(5, 5))
    model = gf.LLPD(metric="precomputed").fit(G)
    assert np.isinf(model.mst_weights_[-1]) and np.isfinite(model.mst_weights_[:-1]).all()
    np.testing.assert_array_equal(model.cut(3.0), [0, 0, 0, 1, 2])
    np.testing.assert_array_equal(model.cut(np.inf), np.zeros(5))
    np.testing.assert_array_equal(model.knn_distance(3), [np.inf] * 5)
    W = model.affinity_operator(1.0) @ np.eye(5)
    assert W[0, 3] == 0.0 and W[0, 1] > 0
    # A row with no edge is at LLPD inf from every training point.
    dist, _ = model.kneighbors(sp.csr_matrix((1, 5)), n_neighbors=2)
    np.testing.assert_array_equal(dist, [[np.inf, np.inf]])


def test_euclidean_is_the_exact_emst_and_stores_its_geometry():
    X = _clusters(0, 60, 3)
    model = gf.LLPD().fit(X)
    np.testing.assert_allclose(model.pairwise(), minimax_closure(cdist(X, X)), rtol=1e-12)
    assert model.geometry_.metric == "euclidean" and model.geometry_.n_samples_ == 60
    # n_neighbors and forest play no part: the same tree.
    other = gf.LLPD(n_neighbors=3).fit(X)
    np.testing.assert_array_equal(other.mst_weights_, model.mst_weights_)


def test_spanning_tree_keeps_the_shorter_of_twice_listed_edges():
    w, e = spanning_tree(3, [0, 1, 1], [1, 0, 2], [5.0, 1.0, 2.0])
    np.testing.assert_array_equal(w, [1.0, 2.0])
    np.testing.assert_array_equal(e, [[0, 1], [1, 2]])


# ------------------------------------------------------------------ kept points
@pytest.mark.parametrize("metric", ["forest", "euclidean"])
def test_subset_geometry_is_the_same_metric_on_the_kept_points(metric):
    X = _clusters(3, 70, 3)
    base = gf.LLPD(metric="forest", forest=gf.UnsupervisedForest(10), random_state=0).fit(X)
    geometry = base.geometry_ if metric == "forest" else gf.LLPD().fit(X).geometry_
    n = X.shape[0]
    if metric == "forest":
        D_dist, D_ind = geometry.forest_.kneighbors(n_neighbors=n - 1)
        D = np.zeros((n, n))
        D[np.repeat(np.arange(n), n - 1), D_ind.ravel()] = D_dist.ravel()
    else:
        D = cdist(X, X)
    rows = np.flatnonzero(np.random.RandomState(0).rand(n) < 0.5)
    sub = SubsetGeometry(geometry, rows)
    Dk = D[np.ix_(rows, rows)] + np.diag(np.full(rows.size, np.inf))
    dist, ind = sub.neighbors(6)
    np.testing.assert_allclose(dist, np.sort(Dk, axis=1)[:, :6], rtol=1e-12)
    np.testing.assert_allclose(np.take_along_axis(Dk, ind, 1), dist, rtol=1e-12)
    qd, qi = sub.query(X[:3] + 0.05, 4)
    Q = geometry.query(X[:3] + 0.05, n)
    full = np.full((3, n), np.inf)
    np.put_along_axis(full, Q[1], Q[0], axis=1)
    np.testing.assert_allclose(qd, np.sort(full[:, rows], axis=1)[:, :4], rtol=1e-12)
    # The kept points' LLPD: minimax over their own k-NN graph and bridges.
    model = gf.LLPD(metric="forest", n_neighbors=2)._fit_subset(base, rows)
    rho = minimax_closure(geometry_graph(model.geometry_, 2))
    np.testing.assert_array_equal(model.pairwise(), rho)
    assert np.isfinite(rho).all()


def test_precomputed_subset_is_the_subgraph():
    rng = np.random.RandomState(1)
    G = sp.random(20, 20, density=0.3, random_state=rng, format="csr")
    base = gf.LLPD(metric="precomputed").fit(G)
    rows = np.arange(0, 20, 2)
    model = gf.LLPD(metric="precomputed")._fit_subset(base, rows)
    S = G[rows][:, rows].tocoo()
    keep = S.row != S.col
    rho = minimax_closure(edge_matrix(10, S.row[keep], S.col[keep], S.data[keep]))
    np.testing.assert_array_equal(model.pairwise(), rho)


# ------------------------------------------------------------------ LLPD spectral clustering
def _ldln_plus_noise(n=450):
    X, y = gf.datasets.make_ldln(n, n_clusters=3, random_state=0)
    sd = float(np.median(X.std(axis=0)))
    return gf.datasets.add_noise_dims(X, 100, variance=sd**2, random_state=1), y


def test_forest_llpd_sc_recovers_clusters_that_euclidean_loses_in_noise_columns():
    X, y = _ldln_plus_noise()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forest = gf.LLPDSpectralClustering(
            3, metric="forest", forest=gf.UnsupervisedForest(25), random_state=0
        ).fit(X)
        euclid = gf.LLPDSpectralClustering(3, random_state=0).fit(X)
    core = y >= 0
    ari_forest = adjusted_rand_score(y[core], forest.labels_[core])
    ari_euclid = adjusted_rand_score(y[core], euclid.labels_[core])
    assert ari_forest >= 0.9 > 0.3 >= ari_euclid, (ari_forest, ari_euclid)
    assert forest.geometry_.metric == "forest"
    assert forest.llpd_.geometry_.n_samples_ == forest.kept_.sum()
    assert forest.llpd_.geometry_.base is forest.geometry_  # the forest was not refitted
    np.testing.assert_array_equal(forest.predict(X), forest.labels_)


def test_llpd_sc_precomputed_and_kept_graph():
    from sklearn.neighbors import kneighbors_graph

    X, y = gf.datasets.make_ldln(300, n_clusters=3, random_state=0)
    # The complete graph of Euclidean distances: the minimax distance is the Euclidean LLPD.
    dense = gf.LLPDSpectralClustering(3, metric="precomputed", random_state=0).fit(cdist(X, X))
    euclid = gf.LLPDSpectralClustering(3, random_state=0).fit(X)
    np.testing.assert_array_equal(dense.kept_, euclid.kept_)
    np.testing.assert_allclose(dense.llpd_.pairwise(), euclid.llpd_.pairwise(), rtol=1e-12)
    assert adjusted_rand_score(euclid.labels_, dense.labels_) == 1.0
    np.testing.assert_array_equal(dense.predict(cdist(X, X)), dense.labels_)
    # A k-NN graph: the kept points' LLPD is the minimax distance of their subgraph.
    G = kneighbors_graph(X, 10, mode="distance")
    model = gf.LLPDSpectralClustering(3, metric="precomputed", random_state=0).fit(G)
    kept = np.flatnonzero(model.kept_)
    S = G[kept][:, kept].tocoo()
    rho = minimax_closure(edge_matrix(kept.size, S.row, S.col, S.data))
    np.testing.assert_array_equal(model.llpd_.pairwise(), rho)
    labels = model.predict(G[:40])
    assert labels.shape == (40,) and np.mean(labels == model.labels_[:40]) >= 0.9
    # A row without an edge to a kept point: noise.
    assert model.predict(sp.csr_matrix((1, 300)))[0] == -1
    with pytest.raises(ValueError, match="distance graph"):
        model.predict(G[:3, :10])
    free = gf.LLPDSpectralClustering(3, metric="precomputed", noise_threshold=None).fit(G)
    assert free.kept_.all() and free.llpd_ is not None and free.noise_llpd_ is None


# ------------------------------------------------------------------ bad inputs
def test_bad_inputs():
    X = _clusters(0, 20, 2)
    with pytest.raises(ValueError, match="metric"):
        gf.LLPD(metric="cosine").fit(X)
    with pytest.raises(ValueError, match="metric"):
        gf.LLPDSpectralClustering(metric="cosine").fit(X)
    with pytest.raises(ValueError, match="forest is the geometry of metric='forest'"):
        gf.LLPD(forest=gf.UnsupervisedForest(5)).fit(X)
    with pytest.raises(ValueError, match="forest is the geometry of metric='forest'"):
        gf.LLPDSpectralClustering(metric="precomputed", forest=gf.UnsupervisedForest(5)).fit(
            cdist(X, X)
        )
    with pytest.raises(ValueError, match="n_neighbors=.* must be smaller than n_samples"):
        gf.LLPD(metric="forest", n_neighbors=20).fit(X)
    with pytest.raises(ValueError, match="n_neighbors=.* must be smaller than n_samples"):
        gf.LLPDSpectralClustering(metric="forest", n_neighbors=25, k_nse=5).fit(X)
    with pytest.raises(ValueError, match="mscale approximates the Euclidean"):
        gf.LLPD(metric="forest", mscale=4).fit(X)
    model = gf.LLPD(metric="forest", n_neighbors=5, forest=gf.UnsupervisedForest(5)).fit(X)
    with pytest.raises(ValueError, match="tie_break='euclidean'"):
        model.kneighbors(n_neighbors=3, tie_break="euclidean")
    with pytest.raises(ValueError, match="tie_break must be"):
        model.kneighbors(n_neighbors=3, tie_break="index")
    with pytest.raises(ValueError, match="features"):
        model.kneighbors(X[:, :1], n_neighbors=3)
    pre = gf.LLPD(metric="precomputed").fit(cdist(X, X))
    with pytest.raises(ValueError, match="distance graph"):
        pre.kneighbors(np.ones((2, 5)), n_neighbors=3)
    with pytest.raises(ValueError, match="negative"):
        gf.LLPD(metric="precomputed").fit(-cdist(X, X))
