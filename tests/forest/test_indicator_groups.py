"""Sparse candidates kept within one group of features (0/1 indicators apart; issue 45).

The draws with groups against the draws without them filtered by hand, the
regressor's grouping of its columns against a brute-force check, and fitted
trees whose projections never mix an indicator with a numeric column.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest._engine.projections import SPARSE, draw_node_projections, sparse_params
from geoforest._engine.rng import make_state
from geoforest.forest import _supervised
from geoforest.forest._supervised import indicator_groups


def _draw(params, p, n_proj, state):
    perm = np.arange(p, dtype=np.int32)
    ptr = np.zeros(n_proj + 1, np.int64)
    idx, w = np.empty(n_proj * p, np.int32), np.empty(n_proj * p, np.float32)
    k = draw_node_projections(SPARSE, params, n_proj, perm, state, ptr, idx, w)
    return [(idx[ptr[j] : ptr[j + 1]].copy(), w[ptr[j] : ptr[j + 1]].copy()) for j in range(k)]


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.integers(0, 2), min_size=1, max_size=12),
    mean_nnz=st.floats(1.0, 4.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_grouped_draws_are_the_plain_draws_filtered_to_the_first_features_group(
    groups, mean_nnz, seed
):
    """Each candidate keeps, in order, the features of its first feature's group;
    the random state then stands where the plain draws leave it."""
    g = np.array(groups, dtype=np.float64)
    p, n_proj = g.size, 6
    plain_state, grouped_state = make_state(seed), make_state(seed)
    for _ in range(3):  # batches: the states must stay in step
        plain = _draw(sparse_params(mean_nnz), p, n_proj, plain_state)
        grouped = _draw(sparse_params(mean_nnz, g), p, n_proj, grouped_state)
        assert len(plain) == len(grouped) == n_proj
        for (pi, pw), (gi, gw) in zip(plain, grouped, strict=True):
            keep = g[pi] == g[pi[0]]
            np.testing.assert_array_equal(gi, pi[keep])
            np.testing.assert_array_equal(gw, pw[keep])
            assert gi.size >= 1 and np.all(g[gi] == g[gi[0]])
    assert plain_state[0] == grouped_state[0]


def test_one_group_draws_as_no_groups():
    p, n_proj = 15, 9
    for seed in range(5):
        a = _draw(sparse_params(2.5), p, n_proj, make_state(seed))
        b = _draw(sparse_params(2.5, np.ones(p)), p, n_proj, make_state(seed))
        for (ai, aw), (bi, bw) in zip(a, b, strict=True):
            np.testing.assert_array_equal(ai, bi)
            np.testing.assert_array_equal(aw, bw)


def test_indicator_groups_flag_exactly_the_zero_one_columns():
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            rng.integers(0, 2, 50),  # an indicator
            np.zeros(50),  # constant 0: values in {0, 1}
            rng.integers(0, 3, 50),  # three levels
            rng.integers(1, 3, 50),  # {1, 2}: two values, not 0/1
            rng.normal(size=50),
        ]
    ).astype(np.float32)
    brute = [set(np.unique(c).tolist()) <= {0.0, 1.0} for c in X.T]
    np.testing.assert_array_equal(indicator_groups(X), np.array(brute, dtype=np.float64))
    assert indicator_groups(X[:, [0, 1]]) is None  # indicators only
    assert indicator_groups(X[:, [2, 3, 4]]) is None  # no indicator


@pytest.mark.parametrize("block", [1, 7, 64])
def test_indicator_groups_read_in_blocks_see_every_row(monkeypatch, block):
    """A value other than 0 and 1 in any block of rows, the last included, counts."""
    monkeypatch.setattr(_supervised, "_INDICATOR_BLOCK", block)
    rng = np.random.default_rng(block)
    X = rng.integers(0, 2, (50, 4)).astype(np.float32)
    X[:, 3] = rng.normal(size=50)
    X[49, 1] = 2.0  # the last row only
    np.testing.assert_array_equal(indicator_groups(X), [1.0, 0.0, 1.0, 0.0])


def _mixed_data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 5, n)
    onehot = (codes[:, None] == np.arange(5)).astype(np.float64)
    numeric = rng.normal(size=(n, 3))
    y = numeric[:, 0] + np.array([0.0, 1.0, -1.0, 2.0, 0.5])[codes] + 0.1 * rng.normal(size=n)
    return np.hstack([numeric[:, :2], onehot, numeric[:, 2:]]), y


def test_regressor_projections_never_mix_indicators_with_numeric_columns():
    X, y = _mixed_data()
    reg = gf.ObliqueForestRegressor(n_estimators=5, feature_combinations=3.0, random_state=0)
    reg.fit(X, y)
    is_indicator = indicator_groups(X.astype(np.float32))
    mixed = wide = 0
    for tree in reg.trees_:
        for node in np.flatnonzero(tree.left >= 0):
            features = tree.proj_idx[tree.proj_ptr[node] : tree.proj_ptr[node + 1]]
            mixed += len(set(is_indicator[features])) > 1
            wide += features.size > 1
    assert mixed == 0 and wide > 0  # combinations were cut, none across kinds


@pytest.mark.parametrize("kw", [{"splitter": "random"}, {"projection": "axis"}])
def test_random_cuts_and_axis_forests_ignore_the_groups(monkeypatch, kw):
    """Only sorted sparse cuts gain from the groups: the other forests grow as without them."""
    X, y = _mixed_data()
    params = {"n_estimators": 4, "feature_combinations": 2.0, "random_state": 1, **kw}
    grouped = gf.ObliqueForestRegressor(**params).fit(X, y)
    monkeypatch.setattr(_supervised, "indicator_groups", lambda X: None)
    monkeypatch.setattr(gf.ObliqueForestRegressor.__module__ + ".indicator_groups", lambda X: None)
    plain = gf.ObliqueForestRegressor(**params).fit(X, y)
    for a, b in zip(grouped.trees_, plain.trees_, strict=True):
        np.testing.assert_array_equal(a.proj_idx, b.proj_idx)
        np.testing.assert_array_equal(a.threshold, b.threshold)
