"""Forest graphs and kernels as every consumer takes them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import DBSCAN, HDBSCAN, SpectralClustering
from sklearn.manifold import TSNE, Isomap
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import geoforest as gf
from geoforest._sparse import _index_dtype, as_output_csr, symmetric_knn_graph, symmetric_union


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0, 0, 0], [6, 6, 0, 0], [0, 6, 6, 0]])
    y = np.repeat(np.arange(3), 60)
    X = centres[y] + rng.normal(size=(180, 4))
    X[1] = X[0]  # a duplicate: a distance-0 edge that must survive
    return X, y


@pytest.fixture(scope="module")
def forest(blobs):
    return gf.UnsupervisedForest(n_estimators=60, random_state=0).fit(blobs[0])


def _is_library_csr(G):
    return (
        isinstance(G, sp.csr_matrix)
        and G.indices.dtype == np.int32
        and G.indptr.dtype == np.int32
        and G.dtype == np.float64
    )


def test_outputs_follow_the_sparse_policy(forest, blobs):
    assert _is_library_csr(forest.proximity())
    assert _is_library_csr(forest.proximity(blobs[0][:5]))
    assert _is_library_csr(forest.kneighbors_graph(mode="distance"))
    assert _is_library_csr(forest.transform(blobs[0]))
    assert _is_library_csr(forest.proximity_counts().proximity())
    assert _index_dtype(2**31, 10) is np.int64 and _index_dtype(10, 2**31) is np.int64
    assert _index_dtype(2**31 - 1, 5) is np.int32


def test_as_output_csr_keeps_explicit_zeros():
    M = sp.csr_array(([0.0, 2.0], ([0, 1], [1, 0])), shape=(2, 2))
    out = as_output_csr(M)
    assert out.nnz == 2 and _is_library_csr(out)


def test_symmetric_union_against_dense():
    rng = np.random.default_rng(1)
    n = 30
    rows = np.repeat(np.arange(n), 4)
    cols = rng.integers(0, n, size=rows.size)
    D = rng.random((n, n))
    D = (D + D.T) / 2
    r, c, d = symmetric_union(rows, cols, D[rows, cols], n)
    dense = np.zeros((n, n))
    dense[r, c] = d
    mask = np.zeros((n, n), dtype=bool)
    mask[rows, cols] = True
    mask |= mask.T
    np.testing.assert_allclose(dense, np.where(mask, D, 0.0))
    assert np.unique(r * n + c).size == r.size  # no duplicates
    assert np.all(np.diff(r) >= 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_symmetric_knn_graph_matches_the_sorted_union(seed):
    # Rows of distinct neighbours (never the row itself), distances symmetric,
    # with ties and zeros: the row-by-row builder gives the same CSR entries, in
    # the same order (row, then distance, then column), as symmetric_union.
    rng = np.random.default_rng(seed)
    n, k = 40, 6
    D = rng.integers(0, 5, size=(n, n)).astype(np.float64) / 4  # ties and zeros
    D = np.minimum(D, D.T)
    ind = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(n)])
    dist = D[np.arange(n)[:, None], ind]
    G = symmetric_knn_graph(ind, dist)
    rows = np.repeat(np.arange(n), k)
    r, c, d = symmetric_union(rows, ind.ravel(), dist.ravel(), n)
    assert _is_library_csr(G)
    np.testing.assert_array_equal(np.repeat(np.arange(n), np.diff(G.indptr)), r)
    np.testing.assert_array_equal(G.indices, c)
    np.testing.assert_array_equal(G.data, d)


def test_graph_distances_are_one_minus_proximity(blobs):
    from geoforest._sparse import ZERO_DISTANCE

    forest = gf.UnsupervisedForest(n_estimators=60, random_state=0, distance="proximity")
    forest.fit(blobs[0])

    G = forest.kneighbors_graph(n_neighbors=8, mode="distance").tocoo()
    S = forest.proximity(dense=True)
    np.testing.assert_allclose(G.data, np.maximum(1.0 - S[G.row, G.col], ZERO_DISTANCE))
    assert G.nnz >= 8 * G.shape[0]
    assert np.any(G.data == ZERO_DISTANCE) and np.all(G.data > 0)  # the duplicate pair


CONSUMERS = {
    "HDBSCAN": lambda G, y: HDBSCAN(metric="precomputed").fit(G).labels_,
    "DBSCAN": lambda G, y: DBSCAN(metric="precomputed", eps=0.8).fit(G).labels_,
    "Isomap": lambda G, y: Isomap(n_neighbors=8, metric="precomputed").fit_transform(G),
    "TSNE": lambda G, y: TSNE(
        metric="precomputed", init="random", perplexity=4, random_state=0
    ).fit_transform(G),  # fmt: skip
    "SpectralClustering": lambda G, y: (
        SpectralClustering(
            3, affinity="precomputed_nearest_neighbors", n_neighbors=8, random_state=0
        )
        .fit(G)
        .labels_
    ),
    "KNeighborsClassifier": lambda G, y: (
        KNeighborsClassifier(n_neighbors=5, metric="precomputed").fit(G, y).predict(G)
    ),
}


@pytest.fixture(scope="module")
def helix():
    X, _ = gf.datasets.make_helix(200, random_state=0)
    return X, gf.UnsupervisedForest(n_estimators=60, random_state=0).fit(X)


@pytest.mark.parametrize("name", list(CONSUMERS))
def test_kneighbors_graph_as_is_in_scikit_learn_consumers(forest, blobs, helix, name):
    if name in ("Isomap", "TSNE"):  # embeddings of one connected manifold
        forest, blobs = helix[1], (helix[0], None)
    G = forest.kneighbors_graph(n_neighbors=15, mode="distance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # consumers' own efficiency notes
        out = CONSUMERS[name](G, blobs[1])
    assert np.asarray(out).shape[0] == blobs[0].shape[0]
    if name in ("HDBSCAN", "SpectralClustering", "KNeighborsClassifier"):
        from sklearn.metrics import adjusted_rand_score

        assert adjusted_rand_score(blobs[1], out) > 0.8


def test_proximity_as_is_in_spectral_clustering(forest, blobs):
    """It used to fail: 'Only sparse matrices with 32-bit integer indices'."""
    from sklearn.metrics import adjusted_rand_score

    labels = SpectralClustering(3, affinity="precomputed", random_state=0).fit_predict(
        forest.proximity()
    )
    assert adjusted_rand_score(blobs[1], labels) > 0.8


def test_graphs_in_umap(forest, blobs):
    umap = pytest.importorskip("umap")
    G = forest.kneighbors_graph(n_neighbors=15, mode="distance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb = umap.UMAP(metric="precomputed", n_neighbors=10, random_state=0).fit_transform(G)
        # precomputed_knn: umap's own format, each point its own first neighbour
        dist, ind = forest.kneighbors(blobs[0], n_neighbors=10)
        assert np.all(ind[:, 0] == np.arange(len(ind))) or np.all(dist[:, 0] == 0)
        emb2 = umap.UMAP(n_neighbors=10, precomputed_knn=(ind, dist, None),
                         random_state=0).fit_transform(blobs[0])  # fmt: skip
    assert emb.shape == emb2.shape == (blobs[0].shape[0], 2)


# ------------------------------------------------------------------ the transformer
def test_transformer_matches_the_scikit_learn_contract(blobs):
    X = blobs[0]
    t = gf.ForestNeighborsTransformer(n_neighbors=5, random_state=0)
    G = t.fit_transform(X)
    assert _is_library_csr(G) and G.shape == (180, 180)
    assert (G != G.T).nnz == 0
    assert np.all(G.diagonal() < 1e-300) and np.all(np.diff(G.indptr) >= 6)
    # every point's own 6 nearest (itself included) are in its row; transform is row by row
    dist, ind = t.forest_.kneighbors(X, n_neighbors=6)
    R = t.transform(X)
    assert np.all(np.diff(R.indptr) == 6)
    for i in (0, 50, 120):
        row = np.sort(G.data[G.indptr[i] : G.indptr[i + 1]])
        np.testing.assert_allclose(row[:6], dist[i], atol=1e-300)  # ties may pick others
        assert set(ind[i]) == set(R.indices[R.indptr[i] : R.indptr[i + 1]])
    # one distance: where both graphs hold a pair, the values agree
    both = (G.toarray() > 0) & (R.toarray() > 0)
    assert both.sum() > 5 * 180
    np.testing.assert_array_equal(G.toarray()[both], R.toarray()[both])
    new = X[:7] + 0.05
    Q = t.transform(new)
    assert Q.shape == (7, 180) and np.all(np.diff(Q.indptr) == 6)
    d_new, i_new = t.forest_.kneighbors(new, n_neighbors=6)
    np.testing.assert_allclose(Q.toarray()[np.arange(7)[:, None], i_new], d_new, atol=1e-300)
    C = gf.ForestNeighborsTransformer(n_neighbors=5, mode="connectivity", random_state=0)
    assert np.all(np.diff(C.fit(X).transform(new).indptr) == 5)
    assert t.get_feature_names_out().shape == (180,)
    assert t.get_feature_names_out()[0] == "forestneighborstransformer0"
    with pytest.raises(ValueError, match="fit_transform"):
        gf.ForestNeighborsTransformer(n_neighbors=3, method="oob").fit(X).transform(X)


def test_transformer_same_as_a_forest_given(blobs):
    X = blobs[0]
    forest = gf.RandomProjectionForest(n_estimators=30, random_state=3)
    a = gf.ForestNeighborsTransformer(forest, n_neighbors=6).fit_transform(X)
    b = forest.fit(X).kneighbors(X, n_neighbors=7)
    rows = np.repeat(np.arange(X.shape[0]), 7)
    np.testing.assert_allclose(a.toarray()[rows, b[1].ravel()], b[0].ravel(), atol=1e-300)


def test_transformer_takes_a_supervised_forest(blobs):
    X, y = blobs
    t = gf.ForestNeighborsTransformer(gf.ObliqueForestClassifier(n_estimators=20), n_neighbors=5,
                                      random_state=0)  # fmt: skip
    with pytest.raises(ValueError, match="needs y"):
        t.fit(X)
    assert t.fit_transform(X, y).shape == (180, 180)
    with pytest.raises(TypeError, match="geoforest forest"):
        gf.ForestNeighborsTransformer(forest=_NotAForest()).fit(X)


class _NotAForest:
    def fit(self, X):
        return self

    def kneighbors(self, X):
        return None

    def proximity(self):
        return None

    def get_params(self, deep=False):
        return {}

    def set_params(self, **kw):
        return self


PIPELINES = {
    "Isomap": lambda: Isomap(n_neighbors=10, metric="precomputed"),
    "TSNE": lambda: TSNE(metric="precomputed", init="random", perplexity=4, random_state=0),
    "HDBSCAN": lambda: HDBSCAN(metric="precomputed"),
    "SpectralClustering": lambda: SpectralClustering(
        3, affinity="precomputed_nearest_neighbors", n_neighbors=10, random_state=0
    ),
}


@pytest.mark.parametrize("name", list(PIPELINES))
def test_transformer_in_pipelines(blobs, helix, name):
    X, y = helix[0] if name in ("Isomap", "TSNE") else blobs[0], blobs[1]
    pipe = make_pipeline(
        gf.ForestNeighborsTransformer(n_neighbors=15, random_state=0), PIPELINES[name]()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(pipe, "fit_transform") and name in ("Isomap", "TSNE"):
            out = pipe.fit_transform(X)
            assert out.shape == (X.shape[0], 2)
        else:
            from sklearn.metrics import adjusted_rand_score

            labels = pipe.fit(X)[-1].labels_
            assert adjusted_rand_score(y, labels) > 0.8


def test_transformer_then_classifier_predicts_new_points(blobs):
    X, y = blobs
    pipe = make_pipeline(
        gf.ForestNeighborsTransformer(n_neighbors=10, random_state=0),
        KNeighborsClassifier(n_neighbors=5, metric="precomputed"),
    )
    pipe.fit(X[::2], y[::2])
    assert pipe.score(X[1::2], y[1::2]) > 0.9


def test_transformer_rejects_too_many_neighbours(blobs):
    with pytest.raises(ValueError, match="fitted on 10"):
        gf.ForestNeighborsTransformer(n_neighbors=10).fit(blobs[0][:10]).transform(blobs[0][:10])


@parametrize_with_checks(
    [gf.ForestNeighborsTransformer(n_neighbors=3, random_state=0, forest=gf.UnsupervisedForest(5))],
    expected_failed_checks=lambda est: {
        "check_transformer_general": "fit_transform returns the symmetric, connected graph "
        "of the training points that precomputed-graph consumers need; transform is row by row",
        "check_transformer_data_not_an_array": "same: fit_transform adds the transpose",
    },
)
def test_transformer_estimator_checks(estimator, check):
    check(estimator)


def test_search_cost_warning_counts_the_co_leaf_points_met(monkeypatch):
    import re

    import geoforest.forest._search as search

    X = np.random.default_rng(0).normal(size=(400, 3))
    # One-leaf trees of 40 rows on purpose: every leaf holds all 400 points.
    with pytest.warns(UserWarning, match="max_samples=40 draws fewer rows per tree"):
        forest = gf.UnsupervisedForest(n_estimators=5, max_samples=40, random_state=0).fit(X)
    leaves = forest.apply(X)
    # what the training points meet, by definition: their leaves' sizes
    met = sum((leaves[:, t][:, None] == leaves[:, t][None, :]).sum() for t in range(5))
    monkeypatch.setattr(search, "SEARCH_COST_WARNING", met - 1)
    with pytest.warns(UserWarning, match="max_samples") as record:
        forest.kneighbors(n_neighbors=3)
    found = re.search(r"meets about ([\d,]+) co-leaf", str(record[0].message))
    assert int(found.group(1).replace(",", "")) == round(met / 400)
    monkeypatch.setattr(search, "SEARCH_COST_WARNING", met + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest.kneighbors(n_neighbors=3)
