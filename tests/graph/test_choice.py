"""The graph layer's label-free choice of K: the scores, the relative-gap rule, its warnings.

That every clusterer exposes the scores and warns: ``tests/cluster/test_label_free_choice.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from geoforest.graph import (
    LabelFreeChoiceWarning,
    choose_by_relative_gap,
    choose_finest_level,
    eigengap_scores,
    explain_choice,
    min_cluster_size,
    n_components,
    relative_gaps,
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


# ------------------------------------------------------------------ finest level


def _finest_by_hand(gaps, excess, fragmented, min_gap, min_excess, strong_excess) -> int:
    """The rule as its docstring states it, one K at a time."""
    best = 1
    for k in range(2, len(gaps) + 1):
        g, e = gaps[k - 1], excess[k - 2]
        if not fragmented[k - 1] and np.isfinite(g) and np.isfinite(e) and g >= min_gap:
            strong = g >= 3.0 and strong_excess is not None and e >= strong_excess
            if e >= min_excess or strong:
                best = k
    return best


_score = st.one_of(st.just(np.nan), st.floats(-2.0, 50.0, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda m: st.tuples(
            st.lists(_score, min_size=m, max_size=m),
            st.lists(_score, min_size=m - 1, max_size=m - 1),
            st.lists(st.booleans(), min_size=m, max_size=m),
        )
    ),
    st.floats(1.0, 3.0),
    st.floats(-0.5, 1.5),
    st.one_of(st.none(), st.floats(-0.5, 1.5)),
)
def test_finest_level_is_the_largest_k_passing_both_bars(data, min_gap, min_excess, strong):
    gaps, excess, fragmented = data
    got = choose_finest_level(
        gaps, excess, fragmented, min_gap=min_gap, min_excess=min_excess, strong_excess=strong
    )
    assert got == _finest_by_hand(gaps, excess, fragmented, min_gap, min_excess, strong)
    default = choose_finest_level(gaps, excess, fragmented, min_gap=min_gap, min_excess=min_excess)
    assert default == _finest_by_hand(gaps, excess, fragmented, min_gap, min_excess, 0.0)


def test_finest_level_takes_the_touching_classes_the_largest_gap_hides():
    # One class far apart (gap 254 at K = 2), three touching (gap 1.7 at K = 3),
    # the case issue 54 measured on held-out data: the largest gap says 2.
    gaps = [np.nan, 254.0, 1.7, 1.05, 1.1]
    excess = [4.0, 0.8, 0.1, 0.05]
    frag = [False] * 5
    assert choose_by_relative_gap([gaps], [frag])[1] == 2
    assert choose_finest_level(gaps, excess, frag, min_gap=1.3, min_excess=0.5) == 3
    # The same weak step without excess over the Gaussian null does not count.
    assert choose_finest_level(gaps, [4.0, 0.2, 0.1, 0.0], frag, min_gap=1.3, min_excess=0.5) == 2
    # A strong step (gap 8) needs only a positive excess, unless strong_excess=None.
    strong = [np.nan, 254.0, 8.0, 1.05, 1.1]
    bars = {"min_gap": 1.3, "min_excess": 0.5}
    assert choose_finest_level(strong, [4.0, 0.2, 0.1, 0.0], frag, **bars) == 3
    assert choose_finest_level(strong, [4.0, -0.1, 0.1, 0.0], frag, **bars) == 2
    assert choose_finest_level(strong, [4.0, 0.2, 0.1, 0.0], frag, strong_excess=None, **bars) == 2
    # A fragmented level never wins, nor does any K on structureless spectra.
    assert (
        choose_finest_level(
            gaps, excess, [False, False, True, False, False], min_gap=1.3, min_excess=0.5
        )
        == 2
    )
    assert (
        choose_finest_level(
            [np.nan, 1.1, 1.05], [0.1, 0.0], [False] * 3, min_gap=1.3, min_excess=0.5
        )
        == 1
    )


def test_finest_level_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="one entry fewer"):
        choose_finest_level(
            [np.nan, 2.0, 2.0], [1.0, 1.0, 1.0], [False] * 3, min_gap=1.3, min_excess=0.5
        )


@settings(max_examples=50, deadline=None)
@given(
    st.one_of(
        st.just(np.nan),
        st.just(np.inf),
        st.just(-np.inf),
        st.just(True),
        st.just(1 + 2j),
    ),
    st.sampled_from(["min_gap", "min_excess", "strong_excess"]),
)
def test_finest_level_refuses_bars_that_are_not_finite_reals(bad, which):
    bars = {"min_gap": 1.3, "min_excess": 0.5, "strong_excess": 0.0}
    bars[which] = bad
    with pytest.raises(ValueError, match="finite real number"):
        choose_finest_level([np.nan, 2.0, 2.0], [1.0, 1.0], [False] * 3, **bars)
