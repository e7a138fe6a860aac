"""Every clusterer's label-free choice of K says what it rests on: scores, K = 1 stated,
close calls named (the rule itself: ``tests/graph/test_choice.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.cluster import sharpen_kernel
from geoforest.graph import LabelFreeChoiceWarning, n_components


def _blobs(n=300, k=3, seed=0):
    centers = 10.0 * np.eye(k, 4)
    return make_blobs(n, n_features=4, centers=centers, cluster_std=0.5, random_state=seed)


@pytest.mark.parametrize(
    "make",
    [
        lambda: gf.LUND(random_state=0),
        lambda: gf.LLPDSpectralClustering(random_state=0),
        lambda: gf.ForestSpectralClustering(random_state=0, n_jobs=1, affinity="kernel"),
    ],
    ids=["LUND", "LLPD-SC", "rpfCluster"],
)
def test_clusterers_expose_scores_and_stay_silent_on_clear_clusters(make):
    X, y = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelFreeChoiceWarning)
        model = make().fit(X)
    assert model.n_clusters_ == 3
    scores = model.n_clusters_scores_
    assert scores.shape == (model.max_clusters,)
    assert int(np.nanargmax(scores)) + 1 == 3


# LUND is left out: its mode-score ratio gives K = 2 on one Gaussian blob in about
# 1 of 5 draws (docs/results/clustering-suite.md); a spectral no-structure test was
# tried and refused (it also calls the in-plane LDLN control structureless).
@pytest.mark.parametrize(
    "make",
    [
        lambda: gf.LLPDSpectralClustering(random_state=0),
        lambda: gf.ForestSpectralClustering(random_state=0, n_jobs=1, affinity="kernel"),
    ],
    ids=["LLPD-SC", "rpfCluster"],
)
def test_one_blob_is_one_cluster_said_plainly(make):
    X = np.random.default_rng(0).standard_normal((600, 5))
    with pytest.warns(LabelFreeChoiceWarning, match="no cluster structure"):
        model = make().fit(X)
    assert model.n_clusters_ == 1
    assert np.unique(model.labels_[model.labels_ >= 0]).size == 1


def test_the_uniform_null_says_k_1_on_uniform_cubes_where_the_gaussian_null_splits():
    """Data flatter than a Gaussian: the forest graph of a uniform 5-D cube shows
    weak steps with excess 0.5-1 over its Gaussian references, so the default
    (Gaussian) null splits these cubes; ``uniform_null=True`` does not.  The
    graphs are the estimator's (public API); the references run the same
    pipeline with 25 trees, as the estimator's do."""

    def graph(P, seed):
        forest = gf.UnsupervisedForest(n_estimators=25, random_state=seed)
        model = gf.ForestSpectralClustering(2, forest=forest, random_state=seed, n_jobs=1)
        return model.fit(P).affinity_matrix_

    gaussian, both = [], []
    for seed in range(4):
        X = np.random.RandomState(seed).uniform(size=(600, 5)) * 50.0 + 1e4
        A = gf.ForestSpectralClustering(2, random_state=seed, n_jobs=1).fit(X).affinity_matrix_
        for flag, out in ((False, gaussian), (True, both)):
            levels = gf.graph.label_free_levels(
                A, 10, points=X, reference_graph=graph, random_state=seed, uniform_null=flag
            )
            out.append(levels.n_clusters)
    assert sum(k == 1 for k in gaussian) <= 2
    assert sum(k == 1 for k in both) >= 3
    assert all(b <= g for b, g in zip(both, gaussian, strict=True))


@pytest.mark.parametrize("scale", [1e200, 1e-250, 2.0**500])
@pytest.mark.parametrize(
    "make",
    [
        lambda: gf.ForestSpectralClustering(metric="euclidean", random_state=0),
        lambda: gf.LUND(selection="levels", random_state=0),
    ],
    ids=["ForestSpectralClustering-euclidean", "LUND-levels"],
)
def test_label_free_levels_of_extreme_values_are_those_of_the_data(make, scale):
    """The Euclidean geometry keeps values whose squares leave float64; the
    Gaussian references did not (their covariance overflowed and the fit raised
    LinAlgError).  Scaled data give the same K, evidence and labels."""
    X, _ = _blobs(200, 2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelFreeChoiceWarning)
        plain = make().fit(X)
        scaled = make().fit(X * scale)
    assert scaled.n_clusters_ == plain.n_clusters_ == 2
    np.testing.assert_array_equal(scaled.labels_, plain.labels_)
    np.testing.assert_allclose(scaled.reference_excess_, plain.reference_excess_, atol=1e-6)


def test_given_k_never_warns():
    X = np.random.default_rng(0).standard_normal((200, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelFreeChoiceWarning)
        gf.LUND(n_clusters=2, random_state=0).fit(X)
        gf.LLPDSpectralClustering(n_clusters=2, random_state=0).fit(X)


def test_rpfcluster_relgap_scores_recomputed_independently():
    X, y = _blobs(300, 3, seed=3)
    model = gf.ForestSpectralClustering(random_state=0, n_jobs=1, affinity="kernel").fit(X)
    assert model.selection == "auto" and model.n_clusters_ == 3
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)
    # Each candidate's score is the relative gap of its own sharpened kernel,
    # recomputed here by a dense eigendecomposition.
    for cand in model.candidates_:
        if cand["n_clusters"] < 2:
            continue
        A = sharpen_kernel(model.kernel_, cand["threshold"], cand["scale"]).toarray()
        d = A.sum(1)
        lam = np.sort(np.linalg.eigvalsh(A / np.sqrt(d[:, None] * d[None])))[::-1]
        mu = np.maximum(1 - lam, 1e-6)
        k = cand["n_clusters"]
        if np.isnan(cand["score"]):  # K = the kernel's connected components: not a gap
            assert n_components(lam) >= k
        else:
            assert cand["score"] == pytest.approx(mu[k] / mu[k - 1], rel=1e-4)
    gaps = [c["score"] for c in model.candidates_ if c["n_clusters"] == 3]
    if np.isnan(gaps).all():  # three persistent components: K = 3 is the base answer
        assert model.n_clusters_scores_[2] == gf.graph.MIN_RELATIVE_GAP
    else:
        assert model.n_clusters_scores_[2] == pytest.approx(np.nanmax(gaps))


def test_persistent_components_need_the_lower_threshold():
    import scipy.sparse as sp

    from geoforest.cluster._rpf_selection import _persistent_components

    # Two blocks of 20 points with within-block kernel 0.5, joined by weight 0.15.
    block = np.full((20, 20), 0.5)
    S = np.block([[block, np.full((20, 20), 0.15)], [np.full((20, 20), 0.15), block]])
    np.fill_diagonal(S, 1.0)
    S = sp.csr_array(S)
    # At beta_1 = 0.2 the blocks are apart, but one grid step lower (0.1) they are
    # joined: a split made by the threshold alone is not a cluster.
    assert _persistent_components(S, 0.2) == 1
    # At 0.3 the step below (0.2) still separates them: two persistent components.
    assert _persistent_components(S, 0.3) == 2
    # Components under min_cluster_size points do not count.
    assert _persistent_components(sp.csr_array(np.eye(40)), 0.1) == 1


def test_the_bar_sits_at_the_number_of_components_as_the_docs_say():
    """docs/choosing-k.md: the entry of K = c (components) holds the bar; below it NaN."""
    from sklearn.datasets import load_iris

    X = load_iris().data
    kernel = gf.ForestSpectralClustering(affinity="kernel", random_state=0).fit(X)
    assert np.isnan(kernel.n_clusters_scores_[0])  # the sharpened kernel has two components
    assert kernel.n_clusters_scores_[1] == gf.graph.MIN_RELATIVE_GAP
    assert kernel.n_clusters_ == 3
    # The kNN graph's scores are its relative gaps, NaN at K = 1 (no bar entry):
    # its K is the finest supported level (gap and excess both at their bars).
    # Setosa stands apart (K = 2, the most separated level); the two that touch
    # are no more clustered than a Gaussian per part, so K stays 2, clearly.
    with warnings.catch_warnings():
        warnings.simplefilter("error", gf.graph.LabelFreeChoiceWarning)
        knn = gf.ForestSpectralClustering(random_state=0).fit(X)
    assert np.isnan(knn.n_clusters_scores_[0])
    supported = np.flatnonzero(knn.levels_.supported) + 1
    assert knn.n_clusters_ == supported.max() == 2
    k = knn.n_clusters_
    assert knn.n_clusters_scores_[k - 1] >= gf.graph.LEVEL_MIN_GAP
    assert knn.reference_excess_[k - 1] >= gf.graph.MIN_EXCESS


def test_the_raw_rpf_kernel_finds_structure_as_the_guide_says():
    """random-projection.rst's pitfall: the raw kernel finds the mixture, merges iris's pair."""
    from sklearn.datasets import load_iris

    for X, k in [
        (gf.datasets.make_gaussian_mixture(1000, random_state=0)[0], 3),
        (load_iris().data, 2),
    ]:
        S = gf.RandomProjectionForest(random_state=0).fit(X).proximity()
        model = gf.KernelSpectralClustering(random_state=0).fit(S)
        assert model.n_clusters_ == k
        assert model.n_clusters_scores_[0] == gf.graph.MIN_RELATIVE_GAP


def test_a_blob_whose_forest_favours_one_feature_is_still_one_cluster():
    """Fast-BIC's own feedback (a cut leaves flatter slabs, cut again) can leave
    one feature far ahead of all others on a structureless cloud: the forest
    must call that no structure, not rank by that feature alone, whose kNN
    graph is a path and read as K = 8 without a warning before."""
    X = np.random.RandomState(108).standard_normal((5000, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gf.ForestSpectralClustering(random_state=0).fit(X)
    relevance = model.forest_.feature_relevance_
    assert np.sum(relevance >= 0.5 * relevance.max()) == 1  # the feedback happened
    assert model.forest_._metric.kind == "no structure"
    assert model.n_clusters_ == 1
    assert any("no cluster structure" in str(w.message) for w in caught)


def test_a_5000_point_gaussian_blob_is_one_cluster_even_when_the_metric_collapses():
    """Leaves that are slabs of one feature (relevance 0.99 against <= 0.17): the
    ranking is Euclid's ("no structure"), over NO_STRUCTURE_CANDIDATES per
    neighbour, not the 6 from one slab that stretched the graph into K = 4."""
    X = np.random.RandomState(100).standard_normal((5000, 5))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        model = gf.ForestSpectralClustering(random_state=0).fit(X)
    assert model.forest_.feature_relevance_.max() > 0.95
    assert model.forest_._metric.kind == "no structure"
    assert model.forest_._metric.per_neighbor == 24
    assert model.n_clusters_ == 1


def test_references_grow_the_data_forests_own_trees():
    """The Gaussian references' forests: unfitted copies of the user's forest, all
    its settings and trees (fewer trees bias the excess upwards); without one the
    geometry grows its default for the references as for the data (the test
    below checks the references' excess on one blob); the user's forest itself
    is not touched."""
    from geoforest.cluster._graph_spectral import LabelFreeSettings, reference_forest

    def settings(metric, forest):
        return LabelFreeSettings(metric, forest, 15, None, 10, "auto", 1e-6, 4)

    assert reference_forest(settings("forest", None)) is None  # the geometry's default
    mine = gf.UnsupervisedForest(n_estimators=60, max_samples=0.3, random_state=5)
    mine.fit(np.random.RandomState(0).normal(size=(40, 3)))
    ref = reference_forest(settings("forest", mine))
    assert ref is not mine and ref.get_params() == mine.get_params()
    assert not hasattr(ref, "n_features_in_") and hasattr(mine, "n_features_in_")
    assert reference_forest(settings("euclidean", None)) is None
    wrapped = reference_forest(settings("forest", gf.ForestNeighborsTransformer(forest=mine)))
    assert isinstance(wrapped, gf.ForestNeighborsTransformer)
    assert wrapped.forest is not mine and wrapped.forest.n_estimators == 60


@pytest.mark.parametrize("seed", [0, 2])
def test_the_one_blob_control_is_one_cluster_with_references_of_the_data_s_trees(seed):
    """The clustering suite's one-blob control (1,500 Gaussian points in 5-D):
    with references of a quarter of the trees it came out as K = 2 on these
    seeds (K = 2 excess 0.55 and 0.63: a graph of fewer trees lies higher); with
    the data's trees it is K = 1, said plainly, and its excess near 0."""
    from geoforest_experiments.clustering_suite import load_suite_data

    X, _, _ = load_suite_data("one-blob", seed=seed)
    with pytest.warns(LabelFreeChoiceWarning, match="no cluster structure"):
        model = gf.ForestSpectralClustering(random_state=seed, n_jobs=1).fit(X)
    assert model.n_clusters_ == 1
    assert model.reference_excess_[1] < gf.graph.MIN_EXCESS


# ------------------------------------------------------- the level chosen on a subset
def _four_blobs(n=900):
    centers = 6.0 * np.eye(4, 5)
    return make_blobs(n, n_features=5, centers=centers, cluster_std=1.0, random_state=3)


@pytest.mark.parametrize("metric", ["forest", "euclidean"])
def test_a_subset_chooses_the_level_a_fit_of_the_subset_alone_chooses(metric):
    # Independent reference: the subset's levels are those of a label-free fit of
    # X[sub] alone (same seeds), and the labels those of the K-given fit of all of X.
    X, _ = _four_blobs()
    forest = gf.UnsupervisedForest(n_estimators=20) if metric == "forest" else None
    kw = dict(metric=metric, forest=forest, random_state=5, n_jobs=1)
    model = gf.ForestSpectralClustering(max_selection_samples=300, **kw).fit(X)
    sub = model.levels_.rows
    assert sub.size == 300 and np.all(np.diff(sub) > 0) and 0 <= sub[0] and sub[-1] < X.shape[0]
    alone = gf.ForestSpectralClustering(max_selection_samples=None, **kw).fit(X[sub])
    assert model.n_clusters_ == alone.n_clusters_ == 4
    np.testing.assert_array_equal(model.levels_.gaps, alone.levels_.gaps)
    np.testing.assert_array_equal(model.levels_.excess, alone.levels_.excess)
    for k, labels in alone.levels_.labels.items():
        np.testing.assert_array_equal(model.levels_.labels[k], labels)
    given = gf.ForestSpectralClustering(model.n_clusters_, **kw).fit(X)
    np.testing.assert_array_equal(model.labels_, given.labels_)
    np.testing.assert_array_equal(
        model.affinity_matrix_.toarray(), given.affinity_matrix_.toarray()
    )


def test_the_default_forest_decays_its_redraws_only_where_the_whole_graph_is_only_cut():
    """Above max_selection_samples the default forest of the whole graph decays its
    redraws (K given, or chosen on a subset), while the subset's forest, which
    chooses K, is the neighbours' default; a user's forest is used as given, and
    at or below the size, or with None, nothing changes."""
    X, _ = _four_blobs(500)
    kw = dict(random_state=2, n_jobs=1)

    def decays(**params):
        return gf.ForestSpectralClustering(**params, **kw).fit(X).forest_.decay_redraws

    assert decays(n_clusters=4, max_selection_samples=300)
    assert decays(max_selection_samples=300)
    assert not decays(n_clusters=4, max_selection_samples=500)
    assert not decays(n_clusters=4, max_selection_samples=None)
    assert not decays(n_clusters=4)  # "auto": 20,000 points
    assert not decays(n_clusters=4, max_selection_samples=300, forest=gf.UnsupervisedForest())
    # The subset's level is a stand-alone fit of the subset with the default forest,
    # and the labels are the K-given fit's, whose whole graph decays too.
    model = gf.ForestSpectralClustering(max_selection_samples=300, **kw).fit(X)
    alone = gf.ForestSpectralClustering(max_selection_samples=None, **kw).fit(X[model.levels_.rows])
    assert not alone.forest_.decay_redraws
    np.testing.assert_array_equal(model.levels_.gaps, alone.levels_.gaps)
    given = gf.ForestSpectralClustering(model.n_clusters_, max_selection_samples=300, **kw).fit(X)
    np.testing.assert_array_equal(model.labels_, given.labels_)
    # The forest it grows is the one UnsupervisedForest(decay_redraws=True) grows.
    own = gf.UnsupervisedForest(decay_redraws=True, random_state=2, n_jobs=1).fit(X)
    np.testing.assert_array_equal(own.apply(X), given.forest_.apply(X))


def test_no_subset_at_or_below_the_size_and_for_a_graph():
    X, _ = _four_blobs(400)
    kw = dict(forest=gf.UnsupervisedForest(n_estimators=20), random_state=0, n_jobs=1)
    at = gf.ForestSpectralClustering(max_selection_samples=400, **kw).fit(X)
    every = gf.ForestSpectralClustering(max_selection_samples=None, **kw).fit(X)
    assert at.levels_.rows.size == 400
    np.testing.assert_array_equal(at.labels_, every.labels_)
    np.testing.assert_array_equal(at.levels_.gaps, every.levels_.gaps)
    # A precomputed graph has no coordinates to draw a subset's references from,
    # and its restriction to a subset would lose most edges: always every point.
    D = gf.ForestNeighborsTransformer(n_neighbors=15, random_state=0).fit_transform(X)
    graph = gf.ForestSpectralClustering(metric="precomputed", max_selection_samples=50)
    assert graph.fit(D).levels_.rows.size == 400


def test_the_auto_size_is_the_kernel_s_for_the_kernel_and_the_levels_for_the_graph():
    from geoforest.cluster._graph_spectral import LEVEL_SELECTION_SAMPLES
    from geoforest.cluster._rpf_cluster import KERNEL_SELECTION_SAMPLES

    assert gf.ForestSpectralClustering()._selection_samples == LEVEL_SELECTION_SAMPLES
    kernel = gf.ForestSpectralClustering(affinity="kernel")
    assert kernel._selection_samples == KERNEL_SELECTION_SAMPLES == 1000
    with pytest.raises(ValueError, match="max_selection_samples"):
        gf.ForestSpectralClustering(max_selection_samples="all").fit(_four_blobs(50)[0])


@pytest.mark.parametrize("metric", ["forest", "euclidean"])
def test_a_subset_too_small_for_its_graph_is_refused_by_its_name(metric):
    X, _ = _four_blobs(60)
    model = gf.ForestSpectralClustering(metric=metric, max_selection_samples=15)
    with pytest.raises(ValueError, match="max_selection_samples=15 must exceed n_neighbors=15"):
        model.fit(X)
    # K given needs no subset: the same setting fits.
    given = gf.ForestSpectralClustering(4, metric=metric, max_selection_samples=15).fit(X)
    assert given.n_clusters_ == 4 and given.levels_ is None
