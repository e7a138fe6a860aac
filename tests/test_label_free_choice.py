"""The label-free choice of K says what it rests on: scores, K = 1 stated, close calls named."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import geoforest as gf
from geoforest.cluster import LabelFreeChoiceWarning, eigengap_scores, explain_choice


def test_eigengap_scores_match_differences():
    values = np.array([1.0, 0.95, 0.5, 0.45, 0.1])
    np.testing.assert_allclose(eigengap_scores(values[::-1], 4), -np.diff(values))
    assert np.isnan(eigengap_scores(values, 6)[4:]).all()


def test_explain_choice_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # A clear winner: silent.
        assert explain_choice("m", 3, [0.1, 0.2, 0.9, 0.1], criterion="gap") == 2
    with pytest.warns(LabelFreeChoiceWarning, match="K = 2 is a close runner-up"):
        explain_choice("m", 3, [0.1, 0.85, 0.9, 0.1], criterion="gap")
    with pytest.warns(LabelFreeChoiceWarning, match="no cluster structure: K = 1.*K = 4"):
        explain_choice("m", 1, [0.9, 0.1, 0.1, 0.2], criterion="gap")


def _blobs(n=300, k=3, seed=0):
    centers = 10.0 * np.eye(k, 4)
    return make_blobs(n, n_features=4, centers=centers, cluster_std=0.5, random_state=seed)


@pytest.mark.parametrize(
    "make",
    [
        lambda: gf.LUND(random_state=0),
        lambda: gf.LLPDSpectralClustering(random_state=0),
        lambda: gf.ForestSpectralClustering(random_state=0, n_jobs=1),
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


# LUND is left out: its multiscale rule returns K = 2 on a one-blob control for
# 5 of 9 draws measured (docs/results/clustering-suite.md); open in issue 19.
@pytest.mark.parametrize(
    "make",
    [
        lambda: gf.LLPDSpectralClustering(random_state=0),
        lambda: gf.ForestSpectralClustering(random_state=0, n_jobs=1),
    ],
    ids=["LLPD-SC", "rpfCluster"],
)
def test_one_blob_is_one_cluster_said_plainly(make):
    X = np.random.default_rng(0).standard_normal((600, 5))
    with pytest.warns(LabelFreeChoiceWarning, match="no cluster structure"):
        model = make().fit(X)
    assert model.n_clusters_ == 1
    assert np.unique(model.labels_[model.labels_ >= 0]).size == 1


def test_given_k_never_warns():
    X = np.random.default_rng(0).standard_normal((200, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelFreeChoiceWarning)
        gf.LUND(n_clusters=2, random_state=0).fit(X)
        gf.LLPDSpectralClustering(n_clusters=2, random_state=0).fit(X)
