"""Random projection trees: Gaussian directions, uniform and median cuts, rpForest, rpf-kernel."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import geoforest as gf
from geoforest._engine.projections import GAUSSIAN, draw_node_projections
from geoforest._engine.rng import make_state, normal
from geoforest._engine.splits import (
    MEDIAN,
    UNIFORM,
    _valid_position,
    best_cut,
    default_params,
    make_workspace,
)


def _draw_directions(p, n_draws, seed=0):
    state = make_state(seed)
    perm = np.arange(p, dtype=np.int32)
    ptr = np.zeros(2, dtype=np.int64)
    idx = np.empty(p, dtype=np.int32)
    w = np.empty(p, dtype=np.float32)
    out = np.empty((n_draws, p))
    for d in range(n_draws):
        assert draw_node_projections(GAUSSIAN, np.zeros(1), 1, perm, state, ptr, idx, w) == 1
        assert ptr[1] == p and np.array_equal(idx, np.arange(p))
        out[d] = w
    return out


def test_normal_draws_are_standard_normal():
    state = make_state(1)
    g = np.array([normal(state) for _ in range(20000)])
    assert stats.kstest(g, "norm").pvalue > 1e-3


def test_gaussian_directions_are_uniform_on_the_sphere():
    p = 5
    V = _draw_directions(p, 20000)
    assert np.allclose(np.linalg.norm(V, axis=1), 1.0, atol=1e-6)
    # Uniform on the sphere: mean 0, covariance I / p, and any fixed coordinate
    # u has (u + 1) / 2 ~ Beta((p - 1) / 2, (p - 1) / 2).
    assert np.abs(V.mean(axis=0)).max() < 0.02
    assert np.abs(np.cov(V.T) - np.eye(p) / p).max() < 0.01
    a = (p - 1) / 2
    assert stats.kstest((V[:, 0] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3


def _cut(rule, z, min_leaf=1, seed=0):
    z = np.asarray(z, dtype=np.float64)
    state = make_state(seed)
    ws = make_workspace(rule, z.shape[0])
    return best_cut(rule, z, z.shape[0], min_leaf, default_params(rule), ws, state)


def test_uniform_cut_threshold_is_uniform_between_min_and_max():
    # Values 0, 1, ..., n - 1: a uniform threshold in [0, n - 1) sends floor(t) + 1
    # points left, each count 1 .. n - 1 equally likely.
    n = 11
    z = np.arange(n, dtype=np.float64)
    state = make_state(7)
    counts = np.zeros(n, dtype=np.int64)
    ws = make_workspace(UNIFORM, n)
    for _ in range(20000):
        pos, score, gain = best_cut(UNIFORM, z, n, 1, default_params(UNIFORM), ws, state)
        counts[pos] += 1
    assert counts[0] == 0  # never an empty side
    observed = counts[1:n]
    assert stats.chisquare(observed).pvalue > 1e-3
    # Uneven spacing: the left count follows the gaps' lengths, not the ranks.
    z = np.array([0.0, 1.0, 9.0, 10.0])
    state = make_state(3)
    counts = np.zeros(4, dtype=np.int64)
    ws = make_workspace(UNIFORM, 4)
    for _ in range(20000):
        counts[best_cut(UNIFORM, z, 4, 1, default_params(UNIFORM), ws, state)[0]] += 1
    expected = np.array([1.0, 8.0, 1.0]) / 10 * 20000
    assert stats.chisquare(counts[1:], expected).pvalue > 1e-3


def _sse(v):
    return float(((v - v.mean()) ** 2).sum()) if v.size else 0.0


@pytest.mark.parametrize("rule", [UNIFORM, MEDIAN])
def test_cut_gain_is_the_sum_of_squares_reduction(rule):
    rng = np.random.default_rng(0)
    for _ in range(50):
        z = np.sort(rng.normal(size=rng.integers(2, 40)))
        pos, score, gain = _cut(rule, z, seed=int(rng.integers(1000)))
        assert 1 <= pos <= z.size - 1
        assert gain == pytest.approx(_sse(z) - _sse(z[:pos]) - _sse(z[pos:]), rel=1e-9, abs=1e-12)
        assert score == gain


def test_median_cut():
    assert _cut(MEDIAN, np.arange(10.0))[0] == 5
    assert _cut(MEDIAN, np.arange(9.0))[0] == 4
    # Ties at the median: the nearest boundary between distinct values.
    assert _cut(MEDIAN, [0, 1, 2, 2, 2, 3, 4, 5.0])[0] == 5
    assert _cut(MEDIAN, [0, 1, 2, 2, 2, 2, 3, 4.0])[0] == 2  # equally near: the lower one
    assert _cut(MEDIAN, [0, 2, 2, 2, 2, 2, 3, 4.0])[0] == 6
    assert _cut(MEDIAN, [1, 1, 1, 1.0])[0] == -1
    assert _cut(UNIFORM, [1, 1, 1, 1.0])[0] == -1
    # min_samples_leaf moves the cut inwards.
    assert _cut(MEDIAN, [0, 1, 2, 3, 4, 5, 6, 7.0], min_leaf=4)[0] == 4
    assert _cut(MEDIAN, [0, 1, 2, 3.0], min_leaf=3)[0] == -1


def test_valid_position_matches_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(500):
        n = int(rng.integers(2, 15))
        z = np.sort(rng.integers(0, 4, size=n).astype(float))
        min_leaf = int(rng.integers(1, 4))
        pos = int(rng.integers(0, n + 1))
        valid = [q for q in range(min_leaf, n - min_leaf + 1) if z[q - 1] < z[q]]
        expected = min(valid, key=lambda q: (abs(q - pos), q)) if valid else -1
        assert _valid_position(z, n, pos, min_leaf) == expected


@pytest.mark.parametrize("split", ["uniform", "median"])
def test_forest_leaves_respect_min_samples_split(split):
    X, _ = gf.datasets.make_helix(400, random_state=0)
    forest = gf.RandomProjectionForest(20, criterion=split, random_state=0).fit(X)
    leaves = forest.apply(X)
    for t, tree in enumerate(forest.trees_):
        sizes = np.bincount(leaves[:, t])
        is_leaf = tree.left == -1
        assert np.array_equal(np.flatnonzero(sizes), np.flatnonzero(is_leaf))
        assert sizes[is_leaf].max() < 30  # every node of >= 30 points was split
        # Each split node's direction is a unit vector over all features.
        internal = np.flatnonzero(~is_leaf)
        for node in internal[:5]:
            lo, hi = tree.proj_ptr[node], tree.proj_ptr[node + 1]
            assert hi - lo == X.shape[1]
            assert np.linalg.norm(tree.proj_weight[lo:hi]) == pytest.approx(1.0, abs=1e-6)
    assert forest.inbag_counts_.min() == 1 and forest.inbag_counts_.max() == 1


def test_median_trees_are_balanced():
    X = np.random.default_rng(0).normal(size=(480, 3))
    forest = gf.RandomProjectionForest(5, criterion="median", random_state=0).fit(X)
    for tree in forest.trees_:
        sizes = tree.n_node_samples[tree.left == -1]
        # 480 -> 240 -> 120 -> 60 -> 30 -> 15: every leaf holds 15 points.
        assert np.all(sizes == 15)


def test_rpf_kernel_is_a_psd_kernel_and_reproducible():
    X, _ = gf.datasets.make_gaussian_mixture(300, random_state=0)
    f1 = gf.RandomProjectionForest(40, random_state=3, n_jobs=1).fit(X)
    f2 = gf.RandomProjectionForest(40, random_state=3, n_jobs=2).fit(X)
    S = f1.proximity().toarray()
    assert np.array_equal(S, f2.proximity().toarray())
    assert np.allclose(S, S.T) and np.allclose(np.diag(S), 1.0)
    assert np.linalg.eigvalsh(S).min() > -1e-10
    # Equals the mean co-leaf indicator computed by brute force from apply().
    leaves = f1.apply(X)
    brute = (leaves[:, None, :] == leaves[None, :, :]).mean(axis=2)
    assert np.allclose(S, brute)
    # Row order does not change the kernel (up to the same permutation).
    perm = np.random.default_rng(1).permutation(300)
    S_perm = gf.RandomProjectionForest(40, random_state=3).fit(X[perm]).proximity().toarray()
    assert np.allclose(S_perm, S[np.ix_(perm, perm)])


def test_rpf_kernel_separates_mixture_components():
    X, y = gf.datasets.make_gaussian_mixture(300, random_state=0)
    S = gf.RandomProjectionForest(100, random_state=0).fit(X).proximity().toarray()
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    diff = y[:, None] != y[None, :]
    assert S[same].mean() > 5 * S[diff].mean()


def test_bad_criterion_is_rejected():
    with pytest.raises(ValueError, match="criterion"):
        gf.RandomProjectionForest(criterion="gini").fit(np.ones((5, 2)))


def test_split_is_the_former_name_of_criterion():
    X = np.random.default_rng(0).normal(size=(80, 3))
    new = gf.RandomProjectionForest(5, criterion="median", random_state=0).fit(X)
    with pytest.warns(FutureWarning, match="criterion="):
        old = gf.RandomProjectionForest(5, split="median", random_state=0).fit(X)
    np.testing.assert_array_equal(new.apply(X), old.apply(X))
