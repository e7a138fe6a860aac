"""LUND(selection="levels"): K from the graph layer's shared label-free rule (issue 54)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score
from sklearn.utils._param_validation import InvalidParameterError

import geoforest as gf


def hierarchy(n=150, seed=0):
    """One group far from three that touch (K = 4): the mode ratio sees only the far one."""
    rng = np.random.RandomState(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6], [14.0, 1.0]])
    y = np.repeat(np.arange(4), n)
    return centres[y] + rng.normal(scale=0.6, size=(y.size, 2)), y


def test_levels_find_the_touching_groups_that_the_mode_ratio_merges():
    X, y = hierarchy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = gf.LUND(random_state=0).fit(X)
        lev = gf.LUND(selection="levels", random_state=0).fit(X)
    assert own.n_clusters_ == 2 and own.levels_ is None
    assert lev.n_clusters_ == lev.levels_.n_clusters == 4
    assert adjusted_rand_score(y, lev.labels_) > 0.9
    assert lev.levels_.rule == "finest-level"
    np.testing.assert_array_equal(lev.reference_excess_, lev.levels_.excess)
    # The evidence behind K is the levels' relative gaps, not the mode ratios.
    assert lev.n_clusters_scores_.shape == (lev.max_clusters,)
    np.testing.assert_array_equal(lev.n_clusters_scores_[: lev.levels_.gaps.size], lev.levels_.gaps)
    assert np.isnan(lev.n_clusters_scores_[0])


def test_the_levels_are_those_of_the_shared_rule_on_lunds_own_graph():
    """An independent recomputation through public API: the diffusion map's affinity,
    references from a DiffusionMap of the same parameters."""
    X, _ = hierarchy(n=80, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.LUND(selection="levels", random_state=3).fit(X)
    params = model.diffusion_map_.get_params()

    def reference(points, seed):
        return gf.DiffusionMap(**{**params, "random_state": seed}).fit(points).affinity_

    levels = gf.graph.label_free_levels(
        model.diffusion_map_.affinity_, 10, points=X, reference_graph=reference, random_state=3
    )
    assert levels.n_clusters == model.n_clusters_
    np.testing.assert_allclose(levels.excess, model.levels_.excess, rtol=1e-6)


def test_one_blob_is_one_cluster_said_plainly():
    X = np.random.RandomState(4).standard_normal((400, 3))
    with pytest.warns(gf.graph.LabelFreeChoiceWarning, match="found no cluster structure"):
        model = gf.LUND(selection="levels", random_state=0).fit(X)
    assert model.n_clusters_ == 1 and np.all(model.labels_ == 0)


def test_a_precomputed_graph_has_no_reference_and_the_relative_gap_decides():
    X, _ = hierarchy(n=60)
    G = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X)
    G = G.kneighbors_graph(n_neighbors=15, mode="distance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.LUND(metric="precomputed", selection="levels", random_state=0).fit(G)
    assert model.levels_.rule == "relative-gap"
    assert model.reference_excess_ is None
    assert model.n_clusters_ == model.levels_.n_clusters


def test_k_given_ignores_the_selection():
    X, _ = hierarchy(n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = gf.LUND(3, selection="levels", random_state=0).fit(X)
        b = gf.LUND(3, random_state=0).fit(X)
    assert a.levels_ is None
    np.testing.assert_array_equal(a.labels_, b.labels_)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(["relgap", "LEVELS", "", None, 1]))
def test_an_unknown_selection_is_refused(selection):
    X, _ = hierarchy(n=20)
    with pytest.raises(InvalidParameterError, match="selection"):
        gf.LUND(selection=selection).fit(X)
