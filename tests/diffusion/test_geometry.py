"""The geometry parameters (metric, forest) of DiffusionMap and LUND, against hand-built graphs."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors, kneighbors_graph

from geoforest import LUND, DiffusionMap, ForestNeighborsTransformer, UnsupervisedForest
from geoforest.graph import LabelFreeChoiceWarning


def _blobs(n=80, seed=0, gap=3.0, d=3):
    rng = np.random.RandomState(seed)
    half = n // 2
    return np.vstack([rng.normal(0, 0.4, (half, d)), rng.normal(gap, 0.4, (n - half, d))])


def _noisy_blobs(seed, n=60, noise_sd=2.0):
    """Two blobs in 2 columns, 100 pure-noise columns: the Euclidean kNN graph loses them."""
    rng = np.random.RandomState(seed)
    X = np.vstack([rng.normal(c, 0.5, (n, 2)) for c in (0.0, 4.0)])
    return np.hstack([X, rng.normal(0, noise_sd, (2 * n, 100))]), np.repeat([0, 1], n)


def _forest(seed=0):
    return UnsupervisedForest(n_estimators=20, random_state=seed)


def _reference_kernel(dist, ind, sigma, cutoff):
    """The Gaussian kNN kernel rows and the cut, symmetrised graph, by hand."""
    n, k = ind.shape
    K = np.zeros((n, n))
    K[np.repeat(np.arange(n), k), ind.ravel()] = np.exp(-((dist / sigma) ** 2)).ravel()
    G = np.where(K >= np.exp(-(cutoff**2)), K, 0.0)
    return K, np.maximum(G, G.T)


# ------------------------------------------------------------------ the forest graph
@pytest.mark.filterwarnings("ignore:the affinity has 2 connected components")
def test_forest_graph_is_the_gaussian_graph_of_the_forest_neighbours():
    X = _blobs()
    k, cutoff = 8, 2.0
    forest = _forest().fit(X)
    dist, ind = forest.kneighbors(None, n_neighbors=k)
    sigma = float(np.median(dist[:, -1]))
    K, W = _reference_kernel(dist, ind, sigma, cutoff)
    dm = DiffusionMap(
        k,
        metric="forest",
        forest=_forest(),
        cutoff=cutoff,
        connect=False,
        n_components=5,
        random_state=0,
    ).fit(X)
    assert dm.sigma_ == pytest.approx(sigma)
    np.testing.assert_allclose(dm.affinity_.toarray(), W, atol=1e-14)
    np.testing.assert_allclose(dm.kernel_density_, K.sum(axis=1), atol=1e-12)
    np.testing.assert_array_equal(dm.knn_indices_, ind)
    assert dm.geometry_.metric == "forest" and dm.forest_ is dm.geometry_.forest_
    # The forest given unfitted is cloned, not fitted in place.
    assert not hasattr(dm.forest, "trees_")


def test_forest_bridges_are_the_minimum_spanning_forest_in_forest_distance():
    X = _blobs(gap=30.0)
    k, cutoff = 5, 1.0
    forest = _forest().fit(X)
    dm = DiffusionMap(
        k, metric="forest", forest=forest, cutoff=cutoff, n_components=5, random_state=0
    ).fit(X)
    dist, ind = forest.kneighbors(None, n_neighbors=k)
    sigma = dm.sigma_
    _, W0 = _reference_kernel(dist, ind, sigma, cutoff)
    n_comp, comp = connected_components(sp.csr_matrix(W0), directed=False)
    assert n_comp > 1 and dm.n_bridges_ == n_comp - 1
    assert connected_components(dm.affinity_, directed=False)[0] == 1
    # Every forest distance, from the forest itself (all n - 1 neighbours).
    n = X.shape[0]
    all_d, all_i = forest.kneighbors(None, n_neighbors=n - 1)
    D = np.zeros((n, n))
    D[np.repeat(np.arange(n), n - 1), all_i.ravel()] = all_d.ravel()
    added = np.argwhere(np.triu(dm.affinity_.toarray() - W0) > 1e-15)
    assert len(added) == n_comp - 1
    for i, j in added:
        assert comp[i] != comp[j]
        assert dm.affinity_[i, j] == pytest.approx(np.exp(-(min(D[i, j] / sigma, cutoff) ** 2)))
    # Their total length is that of the minimum spanning forest between the components.
    Q = np.full((n_comp, n_comp), 0.0)
    for a in range(n_comp):
        for b in range(a + 1, n_comp):
            Q[a, b] = D[np.ix_(comp == a, comp == b)].min()
    total = sum(D[i, j] for i, j in added)
    assert total == pytest.approx(minimum_spanning_tree(Q).sum())


def test_a_fitted_forest_is_used_as_it_is():
    X = _blobs()
    forest = _forest().fit(X)
    dm = DiffusionMap(8, metric="forest", forest=forest, n_components=4, random_state=0).fit(X)
    assert dm.forest_ is forest
    unfitted = DiffusionMap(
        8, metric="forest", forest=_forest(), n_components=4, random_state=0
    ).fit(X)
    np.testing.assert_array_equal(dm.affinity_.toarray(), unfitted.affinity_.toarray())
    # A transformer (fitted or not) stands for its forest.
    tr = ForestNeighborsTransformer(forest=_forest())
    via = DiffusionMap(8, metric="forest", forest=tr, n_components=4, random_state=0).fit(X)
    np.testing.assert_array_equal(via.affinity_.toarray(), dm.affinity_.toarray())
    with pytest.raises(ValueError, match="grown on other points"):
        DiffusionMap(8, metric="forest", forest=forest).fit(X[:-1])


def test_default_forest_is_seeded_by_random_state():
    X = _blobs(60)
    a = DiffusionMap(8, metric="forest", n_components=4, random_state=3).fit(X)
    b = DiffusionMap(8, metric="forest", n_components=4, random_state=3).fit(X)
    assert isinstance(a.forest_, UnsupervisedForest)
    np.testing.assert_array_equal(a.affinity_.toarray(), b.affinity_.toarray())


def test_euclidean_geometry_attributes():
    X = _blobs(60)
    dm = DiffusionMap(8, n_components=4, random_state=0).fit(X)
    assert dm.geometry_.metric == "euclidean" and dm.forest_ is None
    dist, ind = dm.geometry_.neighbors(8)
    np.testing.assert_allclose(dist, dm.knn_distances_)
    np.testing.assert_array_equal(ind, dm.knn_indices_)


# --------------------------------------------------------------------- precomputed
def test_metric_precomputed_is_affinity_precomputed_distance():
    X = _blobs(60, gap=1.0)
    G = kneighbors_graph(X, 10, mode="distance")
    # Rows of distances from new points to the training points.
    Gq = NearestNeighbors().fit(X).kneighbors_graph(X[:5] + 0.05, 10, mode="distance")
    old = DiffusionMap(10, affinity="precomputed_distance", n_components=4, random_state=0)
    new = DiffusionMap(10, metric="precomputed", n_components=4, random_state=0)
    with pytest.warns(FutureWarning, match="deprecated"):  # the former spelling, one release
        old.fit(G)
    np.testing.assert_array_equal(old.embedding(), new.fit_transform(G))
    np.testing.assert_array_equal(old.transform(Gq), new.transform(Gq))
    assert new.sigma_ == old.sigma_ and new.geometry_.metric == "precomputed"
    assert new.__sklearn_tags__().input_tags.pairwise
    G_before = G.copy()
    lund_old = LUND(n_neighbors=10, affinity="precomputed_distance", n_clusters=2, random_state=0)
    with pytest.warns(FutureWarning, match="deprecated"):
        lund_old.fit(G)
    lund_new = LUND(n_neighbors=10, metric="precomputed", n_clusters=2, random_state=0).fit(G)
    np.testing.assert_array_equal(lund_old.labels_, lund_new.labels_)
    np.testing.assert_array_equal(lund_old.predict(Gq), lund_new.predict(Gq))
    # The user's graph is not edited.
    assert G.nnz == G_before.nnz and np.array_equal(G.toarray(), G_before.toarray())


# ------------------------------------------------------------------ new points
def test_transform_through_the_forest_geometry():
    X = _blobs(60)
    k, t = 8, 2.0
    forest = _forest().fit(X)
    dm = DiffusionMap(
        k,
        t=t,
        metric="forest",
        forest=forest,
        cutoff=None,
        n_components=5,
        eigen_solver="dense",
        random_state=0,
    )
    Y = dm.fit_transform(X)
    # A training row is that point: its fitted coordinates.
    np.testing.assert_array_equal(dm.transform(X), Y)
    # New points: the random-walk row of the forest neighbours, weighted with the fitted sigma.
    Xq = X[[0, 35, 50]] + np.random.RandomState(1).normal(0, 0.2, (3, X.shape[1]))
    dist, ind = forest.kneighbors(Xq, n_neighbors=k)
    w = np.exp(-((dist / dm.sigma_) ** 2))
    P = np.zeros((3, X.shape[0]))
    P[np.repeat(np.arange(3), k), ind.ravel()] = (w / w.sum(axis=1, keepdims=True)).ravel()
    expected = (P @ dm.eigenvectors_) * dm.eigenvalues_ ** (t - 1)
    np.testing.assert_allclose(dm.transform(Xq), expected, atol=1e-12)


def test_lund_forest_finds_the_blobs_the_euclidean_graph_loses():
    X, y = _noisy_blobs(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelFreeChoiceWarning)
        euclid = LUND(random_state=0).fit(X)
        model = LUND(metric="forest", forest=_forest(), random_state=0).fit(X)
    assert euclid.n_clusters_ == 1  # the noise columns drown the Euclidean neighbours
    assert model.n_clusters_ == 2
    assert adjusted_rand_score(y, model.labels_) == 1.0
    assert model.geometry_ is model.diffusion_map_.geometry_
    assert isinstance(model.forest_, UnsupervisedForest)
    # The density is the kernel density of the forest neighbours.
    dist = model.diffusion_map_.knn_distances_
    density = np.exp(-((dist / model.diffusion_map_.sigma_) ** 2)).sum(axis=1)
    np.testing.assert_allclose(model.density_, density / density.sum())
    # predict: a training row keeps its label; new points near a blob join it.
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    X_new, y_new = _noisy_blobs(1, n=10)
    assert adjusted_rand_score(y_new, model.predict(X_new)) == 1.0


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize("Est", [DiffusionMap, LUND])
def test_bad_geometry_parameters(Est):
    X = _blobs(30)
    with pytest.raises(ValueError, match="metric"):
        Est(metric="cosine").fit(X)
    with pytest.raises(ValueError, match="forest is the geometry of metric='forest'"):
        Est(forest=_forest()).fit(X)
    with pytest.raises(ValueError, match="forest is the geometry of metric='forest'"):
        Est(metric="precomputed", forest=_forest()).fit(X)
    with pytest.raises(ValueError, match="affinity must be 'gaussian'"):
        Est(metric="forest", affinity="precomputed").fit(X)
    with pytest.raises(ValueError, match="n_neighbors=30 must be smaller than n_samples=30"):
        Est(n_neighbors=30, metric="forest", forest=_forest()).fit(X)
    with pytest.raises(TypeError, match="forest must be a geoforest forest"):
        Est(metric="forest", forest="trees").fit(X)


def test_lund_spatial_options_need_euclidean():
    X = _blobs(36)
    for params in (
        dict(image_shape=(6, 6)),
        dict(image_shape=(6, 6), spatial_radius=2),
        dict(spatial_vote_radius=1),
    ):
        with pytest.raises(ValueError, match="needs metric='euclidean', got metric='forest'"):
            LUND(metric="forest", n_neighbors=5, **params).fit(X)
