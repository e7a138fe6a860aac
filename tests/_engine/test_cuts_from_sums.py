"""Candidates cut from per-node sums instead of projected values
(``_engine.indicators``, ``_engine.columns``).

The facts of ``X``'s columns against numpy; each cut from sums (one
indicator, two, one column of few values) against the cut of its projected
values (``labels.supervised_cut``: the few-level scan, or the sorted one past
8 values) on drawn nodes, with either sign; the known-constant bookkeeping of
sparse candidates; and fitted regression trees whose every split, many cut
from sums and projected only once they won, partitions its rows as its counts
say, with the gain its rows give.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest._engine.buffers import candidate_buffers
from geoforest._engine.columns import LEVEL_SHARE, MAX_CODED_LEVELS, column_facts, level_cut
from geoforest._engine.indicators import (
    indicator_cut,
    node_ones_lists,
    node_ones_sums,
    pair_cut,
)
from geoforest._engine.labels import SupervisedRule, label_buffers, supervised_cut
from geoforest._engine.projections import known_constant, mark_known
from geoforest._engine.rng import make_state
from geoforest._engine.splits import SQUARED_ERROR


def _one_hot(rng, n, levels):
    codes = [rng.integers(0, k, n) for k in levels]
    return np.hstack([(c[:, None] == np.arange(k)) for c, k in zip(codes, levels, strict=True)])


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_facts_are_numpys(order, dtype):
    rng = np.random.default_rng(0)
    n = 1500
    X = np.column_stack(
        [
            _one_hot(rng, n, (3, 4)),
            np.zeros(n),  # all 0: an indicator with no ones
            np.ones(n),  # all 1
            rng.integers(0, 2, n) * 2.0,  # 0/2: two levels, not an indicator
            rng.integers(-5, 30, n) * 0.5,  # a few values
            rng.integers(0, 5 * MAX_CODED_LEVELS, n),  # more values than can be coded
            rng.normal(size=n),
            np.r_[np.zeros(n - 1), 0.5],  # 0/1 but for its last row: two levels
        ]
    )
    X = np.asarray(X, dtype=dtype, order=order)
    facts = column_facts(X)
    indicator = np.all((X == 0) | (X == 1), axis=0)
    np.testing.assert_array_equal(facts.is_ind.astype(bool), indicator)
    for r in range(n):
        ones = np.flatnonzero(indicator & (X[r] == 1))
        row = facts.ones_idx[facts.ones_ptr[r] : facts.ones_ptr[r + 1]]
        np.testing.assert_array_equal(row, ones)
    for f in range(X.shape[1]):
        u = np.unique(X[:, f])
        coded = not indicator[f] and 2 <= u.size <= min(MAX_CODED_LEVELS, n // LEVEL_SHARE)
        assert facts.n_levels[f] == (u.size if coded else 0)
        if coded:
            values = facts.level_values[facts.level_ptr[f] : facts.level_ptr[f + 1]]
            np.testing.assert_array_equal(values, u)
            np.testing.assert_array_equal(values[facts.codes[facts.code_row[f]]], X[:, f])
        else:
            assert facts.code_row[f] == -1
    assert facts.n_levels[11] == facts.n_levels[12] == 0  # too many values


def _node(rng, X, m, repeats=True):
    """A node: ``m`` sorted rows of ``X``, their centred targets, weights and multiplicities."""
    samples = np.sort(rng.choice(X.shape[0], size=m, replace=False)).astype(np.int64)
    c = rng.integers(1, 4, size=m) if repeats else np.ones(m, dtype=np.int64)
    w = c * rng.choice([1.0, 0.5, 2.0], size=m)
    t = rng.normal(size=(m, 1))
    t -= (w @ t) / w.sum()
    buf = label_buffers(m, 0, 1)
    buf.t_node[:m], buf.w_node[:m], buf.c_node[:m] = t, w, c.astype(np.int32)
    return samples, buf, (buf.t_node, buf.w_node, buf.c_node)


def _projected_cut(z, m, buf, min_leaf, min_weight):
    task = SupervisedRule(SQUARED_ERROR, False, 0, min_leaf, min_weight)
    return supervised_cut(task, z, m, np.empty(m), buf, make_state(0))


def _same_cut(got, z, m, buf, min_leaf, min_weight):
    constant, thr, gain = got
    assert constant == (np.ptp(z) == 0)
    if constant:
        return
    ref_thr, _, ref_gain = _projected_cut(z, m, buf, min_leaf, min_weight)
    if ref_gain == -np.inf:
        assert gain == -np.inf
        return
    assert thr == ref_thr
    np.testing.assert_allclose(gain, ref_gain, rtol=1e-10, atol=1e-12)


def _ones_scratch(p, facts):
    return np.empty((4, p)), np.empty(p + 1, np.int64), np.empty(facts.ones_idx.size, np.int64)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 60),
    min_leaf=st.integers(1, 5),
    min_weight=st.sampled_from([0.0, 1.5, 4.0]),
    repeats=st.booleans(),
)
def test_indicator_cut_is_the_cut_of_its_values(seed, m, min_leaf, min_weight, repeats):
    """For every indicator and sign: constant exactly where the values are,
    the same threshold, and the gain to rounding."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([_one_hot(rng, 80, (2, 3, 6)), rng.random(80) < 0.05]).astype(np.float32)
    X = np.asfortranarray(X)
    facts = column_facts(X)
    samples, buf, node_rows = _node(rng, X, m, repeats)
    ones = _ones_scratch(X.shape[1], facts)
    totals = node_ones_sums(facts, samples, 0, m, node_rows, ones)
    w, c, t = buf.w_node[:m], buf.c_node[:m], buf.t_node[:m, 0]
    np.testing.assert_allclose(totals, [w.sum(), w @ t, c.sum()], atol=1e-12)
    for f in range(X.shape[1]):
        for sign in (1.0, -1.0):
            z = np.float32(sign) * X[samples, f].astype(np.float64) + 0.0
            got = indicator_cut(ones, f, sign, m, totals, (min_leaf, min_weight))
            _same_cut(got, z, m, buf, min_leaf, min_weight)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 60),
    min_leaf=st.integers(1, 5),
    min_weight=st.sampled_from([0.0, 1.5, 4.0]),
)
def test_pair_cut_is_the_cut_of_its_values(seed, m, min_leaf, min_weight):
    """Two indicators (of one variable or of two) with either signs: constant
    exactly where the values are, the same threshold, and the gain to rounding."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([_one_hot(rng, 80, (2, 3, 6)), rng.random(80) < 0.05]).astype(np.float32)
    X = np.asfortranarray(X)
    p = X.shape[1]
    facts = column_facts(X)
    samples, buf, node_rows = _node(rng, X, m)
    ones = _ones_scratch(p, facts)
    totals = node_ones_sums(facts, samples, 0, m, node_rows, ones)
    node_ones_lists(facts, samples, 0, m, ones)
    _, starts, at = ones
    for f in range(p):  # each list: the node positions of the rows where f is 1
        np.testing.assert_array_equal(at[starts[f] : starts[f + 1]], np.flatnonzero(X[samples, f]))
    tab = np.empty(16)
    for _ in range(12):
        idx = np.sort(rng.choice(p, size=2, replace=False)).astype(np.int32)
        w = rng.choice([1.0, -1.0], size=2).astype(np.float32)
        z = (w[0] * X[samples, idx[0]]).astype(np.float64) + w[1] * X[samples, idx[1]]
        got = pair_cut(
            X, samples, 0, m, idx, w, 0, ones, node_rows, totals, tab, (min_leaf, min_weight)
        )
        _same_cut(got, z, m, buf, min_leaf, min_weight)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 120),
    n_values=st.sampled_from([2, 3, 8, 9, 40, 200]),
    min_leaf=st.integers(1, 5),
    min_weight=st.sampled_from([0.0, 1.5, 4.0]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_level_cut_is_the_cut_of_its_values(seed, m, n_values, min_leaf, min_weight, dtype):
    """One column of few values (up to 8: the few-level scan's; more: the sorted
    scan's) with either sign: the same threshold, and the gain to rounding."""
    rng = np.random.default_rng(seed)
    n = 4000  # 200 values are coded from 3,200 rows on (LEVEL_SHARE)
    values = np.unique(rng.normal(size=n_values) * 10).round(2)
    X = np.column_stack(
        [values[rng.integers(0, values.size, n)], rng.integers(0, 3, n) - 1.5]
    ).astype(dtype)
    X = np.asfortranarray(X)
    facts = column_facts(X)
    samples, buf, node_rows = _node(rng, X, m)
    tab = np.empty(3 * MAX_CODED_LEVELS)
    for f in range(2):
        assert facts.n_levels[f] == np.unique(X[:, f]).size
        for sign in (1.0, -1.0):
            # project_samples' values: a float32 weight times X's value, added to 0.0
            z = (np.float32(sign) * X[samples, f]).astype(np.float64) + 0.0
            got = level_cut(facts, f, sign, samples, 0, m, node_rows, tab, (min_leaf, min_weight))
            _same_cut(got, z, m, buf, min_leaf, min_weight)


def test_known_constants_of_sparse_candidates_leave_the_draws_alone():
    """``mark_known`` records constants in ``known``, never in ``perm`` (the draws'
    permutation), keeps the prefix pending nodes rely on, and ``known_constant``
    is true exactly for candidates whose every feature is in it."""
    rng = np.random.default_rng(2)
    n, p = 40, 12
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[:, [1, 4, 7]] = 3.0  # constant everywhere
    cand = candidate_buffers(X, 4, p)
    perm_before = cand.perm.copy()
    samples = np.arange(n, dtype=np.int64)
    cand.ptr[:5] = [0, 1, 3, 5, 6]
    cand.idx[:6] = [1, 4, 7, 2, 7, 5]  # {1}, {4, 7}, {7, 2}, {5}
    n_const = mark_known(X, samples, 0, n, cand, 0, 0)
    assert n_const == 1 and cand.known[0] == 1
    prefix = cand.known[:1].copy()
    n_const = mark_known(X, samples, 0, n, cand, 1, n_const)  # a wider candidate: each checked
    assert n_const == 3 and set(cand.known[:3]) == {1, 4, 7}
    np.testing.assert_array_equal(cand.known[:1], prefix)
    np.testing.assert_array_equal(cand.known[cand.known_at], np.arange(p))
    assert mark_known(X, samples, 0, n, cand, 2, n_const) == 3  # 2 varies: nothing new
    assert [known_constant(cand, j, n_const) for j in range(4)] == [True, True, False, False]
    assert not known_constant(cand, 0, 0)
    np.testing.assert_array_equal(cand.perm, perm_before)


@pytest.mark.parametrize("numeric", ["continuous", "few values"])
def test_regression_splits_partition_as_counted_with_the_gain_of_their_rows(numeric):
    """Every split of a sparse regressor on one-hot data with two numeric
    columns (most cut from sums, their values projected only once they won)
    sends its rows left and right as its children's sample counts say, and
    its gain is the squared error its cut removes from its rows."""
    rng = np.random.default_rng(5)
    n = 400
    num = rng.normal(size=(n, 2)) if numeric == "continuous" else rng.integers(0, 12, (n, 2))
    X = np.hstack([_one_hot(rng, n, (2, 4, 7, 12)), num]).astype(np.float32)
    y = X[:, 2] * 2.0 - X[:, 9] + X[:, 20] * X[:, -1] + 0.3 * rng.normal(size=n)
    est = gf.ObliqueForestRegressor(n_estimators=4, bootstrap=False, random_state=0, n_jobs=1)
    est.fit(X, y)
    sse = lambda v: ((v - v.mean()) ** 2).sum() if v.size else 0.0  # noqa: E731
    n_checked = n_sums = 0  # splits; those on one or two indicators or one column
    for t in est.trees_:
        stack = [(0, np.arange(n))]
        while stack:
            node, rows = stack.pop()
            if t.left[node] == -1:
                continue
            a, b = t.proj_ptr[node], t.proj_ptr[node + 1]
            feats = t.proj_idx[a:b]
            z = (X[rows][:, feats].astype(np.float64) * t.proj_weight[a:b]).sum(axis=1)
            go_left = z <= t.threshold[node]
            assert t.n_node_samples[t.left[node]] == go_left.sum()
            assert t.n_node_samples[t.right[node]] == (~go_left).sum()
            yy = y[rows]
            removed = sse(yy) - sse(yy[go_left]) - sse(yy[~go_left])
            np.testing.assert_allclose(t.gain[node], removed, rtol=1e-8, atol=1e-9)
            n_checked += 1
            n_sums += feats.size == 1 or (feats.size == 2 and feats.max() < X.shape[1] - 2)
            stack += [(t.left[node], rows[go_left]), (t.right[node], rows[~go_left])]
    assert n_checked > 200 and n_sums > 50
    assert est.score(X, y) > 0.8
