"""The cluster family on the graph layer's one door (issue 53).

Each test here failed before its fix: a forest given to ``affinity="kernel"``
was cloned and refitted whatever it was, a label-free K >= 2 from a weak gap on structureless
data came without a warning, a precomputed graph of the wrong shape gave no
advice, and ``ForestSpectralClustering`` had no ``kneighbors``.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.ensemble import RandomForestClassifier

import geoforest as gf
from geoforest.graph import LabelFreeChoiceWarning

CLUSTER = Path(gf.__file__).parent / "cluster"


def _blobs(n=120, seed=0):
    centers = np.array([[0.0, 0.0, 0.0], [6.0, 0.0, 0.0], [0.0, 6.0, 0.0]])
    return make_blobs(n, centers=centers, cluster_std=0.5, random_state=seed)[0]


def test_cluster_imports_the_graph_layer_through_its_public_door():
    private = re.compile(r"from \.\.graph\._|geoforest\.graph\._|_X_fit|forest\._growth")
    offenders = [
        f"{path.name}:{i}"
        for path in CLUSTER.glob("*.py")
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert offenders == []


def test_cluster_branches_on_metric_at_most_twice():
    branch = re.compile(r"\bmetric (==|!=|in|not in) ")
    hits = [
        line
        for path in CLUSTER.glob("*.py")
        for line in path.read_text().splitlines()
        if branch.search(line)
    ]
    assert len(hits) <= 2, hits


@pytest.mark.parametrize("affinity", ["knn", "kernel"])
def test_precomputed_feature_data_says_what_to_pass(affinity):
    X = np.random.default_rng(0).normal(size=(178, 13))
    with pytest.raises(ValueError, match="for feature data pass metric='") as err:
        gf.ForestSpectralClustering(3, affinity=affinity, metric="precomputed").fit(X)
    assert "\n" not in str(err.value)


# ----------------------------------------------------------- kernel mode's forest
def test_kernel_uses_a_forest_fitted_on_X_as_is():
    X = _blobs()
    forest = gf.RandomProjectionForest(50, random_state=3).fit(X)
    leaves = forest.apply().copy()
    model = gf.ForestSpectralClustering(3, affinity="kernel", forest=forest, random_state=0)
    model.fit(X)
    assert model.forest_ is forest
    np.testing.assert_array_equal(forest.apply(), leaves)  # not refitted
    np.testing.assert_array_equal(model.kernel_.toarray(), forest.proximity().toarray())


@pytest.mark.parametrize("other", ["points", "columns"])
def test_kernel_refuses_a_forest_fitted_on_other_data_in_one_line(other):
    X = _blobs()
    Z = _blobs(seed=5) if other == "points" else np.hstack([X, X[:, :1]])
    forest = gf.RandomProjectionForest(20, random_state=0).fit(Z)
    with pytest.raises(ValueError) as err:
        gf.ForestSpectralClustering(3, affinity="kernel", forest=forest).fit(X)
    assert "\n" not in str(err.value)


def test_kernel_takes_a_fitted_neighbors_transformer():
    X = _blobs()
    nt = gf.ForestNeighborsTransformer(forest=gf.RandomProjectionForest(30, random_state=0))
    nt.fit(X)
    model = gf.ForestSpectralClustering(3, affinity="kernel", forest=nt, random_state=0).fit(X)
    assert model.forest_ is nt.forest_
    assert model.labels_.shape == (X.shape[0],)


def test_kernel_refuses_a_scikit_learn_forest_in_one_line():
    X = _blobs()
    with pytest.raises(TypeError, match="geoforest forest") as err:
        gf.ForestSpectralClustering(3, affinity="kernel", forest=RandomForestClassifier(5)).fit(X)
    assert "\n" not in str(err.value)


def test_kernel_selection_subset_grows_on_the_users_points():
    # Far from zero, the forest centres its columns; the subset forest must be
    # grown on the user's X (not the forest's private centred copy).
    X = _blobs(300) + 1e6
    kw = dict(affinity="kernel", max_selection_samples=100, random_state=0)
    shifted = gf.ForestSpectralClustering(3, **kw).fit(X)
    plain = gf.ForestSpectralClustering(3, **kw).fit(X - 1e6)
    assert shifted.n_clusters_ == plain.n_clusters_ == 3


# ------------------------------------------------ label-free K on structureless data
STRUCTURELESS = {
    "gaussian": np.random.default_rng(0).normal(size=(300, 2)),
    "square": np.random.default_rng(0).uniform(size=(300, 2)),
    "square1000": np.random.default_rng(1).uniform(size=(1000, 2)),
}


@pytest.mark.parametrize("data", sorted(STRUCTURELESS))
@pytest.mark.parametrize(
    "params",
    [dict(affinity="kernel"), dict(metric="euclidean"), dict(metric="forest")],
    ids=["kernel", "knn-euclidean", "knn-forest"],
)
def test_label_free_k_on_structureless_data_is_one_or_warns(params, data):
    X = STRUCTURELESS[data]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gf.ForestSpectralClustering(random_state=0, **params).fit(X)
    label_free = [w for w in caught if issubclass(w.category, LabelFreeChoiceWarning)]
    # K = 1 says so itself; a K >= 2 here comes from a weak gap or the excess rule,
    # and says that its evidence is weak.
    assert label_free
    if model.n_clusters_ >= 2:
        assert any("evidence" in str(w.message) for w in label_free)


@pytest.mark.parametrize("affinity", ["knn", "kernel"])
def test_clear_clusters_are_not_called_weak(affinity):
    X = make_blobs(300, n_features=4, centers=3, cluster_std=0.5, random_state=0)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gf.ForestSpectralClustering(affinity=affinity, random_state=0).fit(X)
    assert model.n_clusters_ == 3
    assert not [w for w in caught if "evidence" in str(w.message)]


# ------------------------------------------------------------------ vocabulary
@pytest.mark.parametrize(
    "params", [dict(metric="euclidean"), dict(metric="forest"), dict(affinity="kernel")]
)
def test_kneighbors_has_scikit_learn_semantics(params):
    X = _blobs(60)
    model = gf.ForestSpectralClustering(3, n_neighbors=5, random_state=0, **params).fit(X)
    dist, ind = model.kneighbors()
    assert ind.shape == (60, 5)
    assert not (ind == np.arange(60)[:, None]).any()  # X=None: not its own neighbour
    assert np.all(np.diff(dist, axis=1) >= 0)
    ind3 = model.kneighbors(X[:4] + 0.01, n_neighbors=3, return_distance=False)
    assert ind3.shape == (4, 3)


def test_kneighbors_of_a_precomputed_graph():
    from sklearn.metrics import pairwise_distances

    X = _blobs(60)
    D = pairwise_distances(X)
    model = gf.ForestSpectralClustering(3, metric="precomputed", n_neighbors=4).fit(D)
    ref = gf.ForestSpectralClustering(3, metric="euclidean", n_neighbors=4).fit(X)
    np.testing.assert_array_equal(model.kneighbors()[1], ref.kneighbors()[1])
    Q = X[:5] + 0.01
    np.testing.assert_array_equal(
        model.kneighbors(pairwise_distances(Q, X))[1], ref.kneighbors(Q)[1]
    )


COMPLEX_FITS = [
    ("knn-euclidean", lambda: gf.ForestSpectralClustering(3, metric="euclidean")),
    ("knn-forest", lambda: gf.ForestSpectralClustering(3, metric="forest")),
    ("knn-precomputed", lambda: gf.ForestSpectralClustering(3, metric="precomputed")),
    ("kernel", lambda: gf.ForestSpectralClustering(3, affinity="kernel")),
    ("kernel-sc", lambda: gf.KernelSpectralClustering(3)),
]


@pytest.mark.parametrize("make", [m for _, m in COMPLEX_FITS], ids=[i for i, _ in COMPLEX_FITS])
def test_complex_input_is_refused(make):
    from sklearn.metrics.pairwise import rbf_kernel

    X = _blobs(60)
    G = rbf_kernel(X)
    square = make().__sklearn_tags__().input_tags.pairwise or isinstance(
        make(), gf.KernelSpectralClustering
    )
    data = G if square else X
    with pytest.raises(ValueError, match="omplex"):
        make().fit(data + 1j)
    model = make().fit(data)
    if hasattr(model, "predict"):
        with pytest.raises(ValueError, match="omplex"):
            model.predict(data[:3] + 1j)
    if hasattr(model, "kneighbors"):
        with pytest.raises(ValueError, match="omplex"):
            model.kneighbors(data[:3] + 1j)
