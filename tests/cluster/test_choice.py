"""The label-free choice of K says what it rests on: scores, K = 1 stated, close calls named."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.cluster import (
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    eigengap_scores,
    explain_choice,
    min_cluster_size,
    n_components,
    relative_gaps,
    sharpen_kernel,
    spectral_clustering,
    spectral_partitions,
)


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


# LUND is left out: its mode-score ratio gives K = 2 on one Gaussian blob in about
# 1 of 5 draws (docs/results/clustering-suite.md); a spectral no-structure test was
# tried and refused (it also calls the in-plane LDLN control structureless).
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


# ------------------------------------------------------------ the relative-gap rule
def test_relative_gaps_against_dense_laplacian():
    rng = np.random.default_rng(0)
    X, _ = _blobs(120, 3)
    W = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 50.0)  # connected, 3 groups
    d = W.sum(1)
    M = W / np.sqrt(d[:, None] * d[None])
    lam = np.sort(np.linalg.eigvalsh(M))[::-1][:7]
    mu = 1 - lam
    gaps = relative_gaps(lam[rng.permutation(7)], 6)
    assert np.isnan(gaps[0])
    np.testing.assert_allclose(gaps[1:], mu[2:7] / mu[1:6])
    assert int(np.nanargmax(gaps)) + 1 == 3
    # Components (eigenvalue 1 repeated) are never "split": no ratio for K <= c.
    assert n_components([1.0, 1.0, 1.0, 0.5]) == 3
    assert np.isnan(relative_gaps([1.0, 1.0, 1.0, 0.5, 0.4], 4)[:3]).all()


def test_choose_by_relative_gap_rules():
    gaps = np.array([[np.nan, 5.0, 1.0], [np.nan, 9.0, 3.0]])
    frag = np.array([[False, False, False], [False, True, False]])
    c, k, scores = choose_by_relative_gap(gaps, frag)
    assert (c, k) == (0, 2)  # the 9.0 partition is fragmented
    np.testing.assert_allclose(scores, [2.0, 5.0, 3.0])
    assert choose_by_relative_gap(gaps / 10, frag)[:2] == (0, 1)  # nothing reaches 2
    assert choose_by_relative_gap(gaps / 10, frag, base_k=2)[:2] == (0, 2)
    assert min_cluster_size(100) == 5 and min_cluster_size(1000) == 20 and min_cluster_size(3) == 1


def test_more_components_than_max_clusters_is_a_clear_error():
    """Issue 23: base_k above max_clusters indexed past the scores (IndexError)."""
    gaps = np.full((2, 3), np.nan)
    frag = np.zeros((2, 3), dtype=bool)
    assert choose_by_relative_gap(gaps, frag, base_k=3)[:2] == (0, 3)
    with pytest.raises(ValueError, match=r"4 or more connected components, more than the 3"):
        choose_by_relative_gap(gaps, frag, base_k=4)


def test_spectral_partitions_match_spectral_clustering():
    X, y = _blobs(240, 4, seed=2)
    W = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 8.0)
    parts = spectral_partitions(W, 6, random_state=0)
    ref = spectral_clustering(W, n_clusters=6, n_eigenvalues=7, random_state=0)
    np.testing.assert_allclose(parts.eigenvalues, ref.eigenvalues, atol=1e-10)
    assert sorted(parts.labels) == [2, 3, 4, 5, 6]
    assert adjusted_rand_score(y, parts.labels[4]) == pytest.approx(1.0)
    sub = spectral_partitions(W, 6, random_state=0, max_samples=100)
    assert sub.rows.size == 100 and sub.labels[4].shape == (100,)
    assert adjusted_rand_score(y[sub.rows], sub.labels[4]) == pytest.approx(1.0)


def test_rpfcluster_relgap_scores_recomputed_independently():
    X, y = _blobs(300, 3, seed=3)
    model = gf.ForestSpectralClustering(random_state=0, n_jobs=1).fit(X)
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
        assert model.n_clusters_scores_[2] == gf.cluster.MIN_RELATIVE_GAP
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
