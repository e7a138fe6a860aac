"""Spectral clustering of a geometry's neighbour graph (``affinity="knn"``)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors, kneighbors_graph

import geoforest as gf
from geoforest.graph import knn_affinity


def _blobs(seed=0, n=60, noise_cols=0):
    rng = np.random.RandomState(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.vstack([rng.randn(n, 2) + c for c in centres])
    y = np.repeat(np.arange(3), n)
    if noise_cols:
        X = np.hstack([X, 2.0 * rng.randn(X.shape[0], noise_cols)])
    return X, y


def test_knn_affinity_is_the_jaccard_overlap_of_the_lists():
    rng = np.random.RandomState(0)
    n, k = 30, 4
    ind = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(n)])
    A = knn_affinity(ind, n).toarray()
    sets = [set(ind[i]) | {i} for i in range(n)]
    for i in range(n):
        for j in range(n):
            listed = i != j and (j in ind[i] or i in ind[j])
            want = len(sets[i] & sets[j]) / len(sets[i] | sets[j]) if listed else 0.0
            assert A[i, j] == pytest.approx(want)


def test_euclidean_metric_is_spectral_clustering_of_the_hand_built_graph():
    X, y = _blobs()
    model = gf.ForestSpectralClustering(3, metric="euclidean", n_neighbors=10, random_state=0)
    model.fit(X)
    ind = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)[1][:, 1:]
    A = knn_affinity(ind, X.shape[0])
    ref = gf.cluster.KernelSpectralClustering(3, random_state=0).fit(A)
    assert adjusted_rand_score(ref.labels_, model.labels_) == 1.0
    assert model.forest_ is None and model.geometry_.metric == "euclidean"


def test_precomputed_graph_gives_the_euclidean_answer_and_predicts_from_rows():
    X, y = _blobs(1)
    G = kneighbors_graph(X, 12, mode="distance")
    pre = gf.ForestSpectralClustering(3, metric="precomputed", n_neighbors=10, random_state=0)
    pre.fit(G)
    euc = gf.ForestSpectralClustering(3, metric="euclidean", n_neighbors=10, random_state=0)
    euc.fit(X)
    assert adjusted_rand_score(pre.labels_, euc.labels_) == 1.0
    rows = NearestNeighbors(n_neighbors=10).fit(X).kneighbors_graph(X[:5] + 0.01, mode="distance")
    np.testing.assert_array_equal(pre.predict(rows), euc.predict(X[:5] + 0.01))


def test_forest_geometry_holds_under_noise_columns_where_euclid_does_not():
    X, y = _blobs(2, n=80, noise_cols=60)
    forest = gf.ForestSpectralClustering(3, random_state=0).fit(X)
    euclid = gf.ForestSpectralClustering(3, metric="euclidean", random_state=0).fit(X)
    assert forest.forest_.distance_ == "relevance"
    ari_forest = adjusted_rand_score(y, forest.labels_)
    assert ari_forest > 0.9
    assert ari_forest > adjusted_rand_score(y, euclid.labels_) + 0.2


def test_label_free_k_and_predict_on_new_points():
    X, y = _blobs(3)
    model = gf.ForestSpectralClustering(random_state=0).fit(X)
    assert model.n_clusters_ == 3
    assert model.n_clusters_scores_.shape == (10,)
    assert np.mean(model.predict(X) == model.labels_) > 0.95
    X_new, y_new = _blobs(4)
    assert adjusted_rand_score(y_new, model.predict(X_new)) > 0.9


def test_a_fitted_forest_is_reused_and_components_are_bridged():
    X, _ = _blobs(5, n=20)
    X[:20] += 1000.0  # a component no kNN edge reaches
    forest = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X)
    model = gf.ForestSpectralClustering(2, forest=forest, n_neighbors=5, random_state=0).fit(X)
    assert model.forest_ is forest
    assert model.n_bridges_ >= 1
    A = model.affinity_matrix_
    assert sp.csgraph.connected_components(A, directed=False)[0] == 1


def test_clear_errors():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="metric='forest'"):
        gf.ForestSpectralClustering(forest=gf.UnsupervisedForest(), metric="euclidean").fit(X)
    with pytest.raises(ValueError, match="needs metric='forest'"):
        gf.ForestSpectralClustering(affinity="kernel", metric="euclidean").fit(X)
    with pytest.raises(ValueError, match="metric"):
        gf.ForestSpectralClustering(metric="cosine").fit(X)
    with pytest.raises(ValueError, match="exceeds n_samples"):
        gf.ForestSpectralClustering(5, metric="euclidean", n_neighbors=2).fit(X[:4])
    with pytest.raises(ValueError, match="n_neighbors=15 must be smaller than n_samples=4"):
        gf.ForestSpectralClustering(2, metric="euclidean").fit(X[:4])


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 40),
    d=st.integers(1, 4),
    dup=st.booleans(),
    const=st.booleans(),
    k=st.one_of(st.none(), st.integers(1, 5)),
    metric=st.sampled_from(["forest", "euclidean"]),
    seed=st.integers(0, 1000),
)
def test_careless_inputs_give_a_clustering_or_a_clear_error(n, d, dup, const, k, metric, seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    if dup:
        X[n // 2 :] = X[: n - n // 2]
    if const:
        X[:, 0] = 3.0
    model = gf.ForestSpectralClustering(
        k,
        metric=metric,
        n_neighbors=5,
        forest=gf.UnsupervisedForest(5) if metric == "forest" else None,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # label-free K, constant X: said loudly
        try:
            model.fit(X)
        except ValueError as exc:  # a clear refusal of what cannot be done
            msg = str(exc)
            assert (n <= 5 and "n_neighbors=5 must be smaller" in msg) or (
                k is not None and k > n and "exceeds n_samples" in msg
            )
            return
    assert model.labels_.shape == (n,)
    assert 1 <= model.n_clusters_ <= n
    assert set(np.unique(model.labels_)) <= set(range(model.n_clusters_))
    pred = model.predict(X[:3])
    assert pred.shape == (min(3, n),) and set(pred) <= set(model.labels_)
