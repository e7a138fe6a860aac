"""Single 0/1 columns cut from the node's sums of its ones (``_engine.indicators``).

The ones listed row by row against numpy; each indicator's cut from the sums
against the few-level scan of its projected values (``labels.supervised_cut``)
on drawn nodes; the known-constant bookkeeping of sparse candidates; and fitted
regression trees whose every split, many of them cut from sums and projected
only once they won, partitions its rows as its counts say, with the gain the
rows give.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest._engine.buffers import candidate_buffers
from geoforest._engine.indicators import (
    indicator_cut,
    indicator_rows,
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
def test_indicator_rows_lists_each_rows_ones(order, dtype):
    rng = np.random.default_rng(0)
    n = 50
    X = np.column_stack(
        [
            _one_hot(rng, n, (3, 4)),
            np.zeros(n),  # all 0: an indicator with no ones
            np.ones(n),  # all 1
            rng.integers(0, 2, n) * 2.0,  # 0/2: not an indicator
            rng.normal(size=n),
            np.r_[np.zeros(n - 1), 0.5],  # 0/1 but for its last row
        ]
    )
    X = np.asarray(X, dtype=dtype, order=order)
    is_ind, ptr, idx = indicator_rows(X, True)
    expect = np.all((X == 0) | (X == 1), axis=0)
    np.testing.assert_array_equal(is_ind.astype(bool), expect)
    for r in range(n):
        ones = np.flatnonzero(expect & (X[r] == 1))
        np.testing.assert_array_equal(idx[ptr[r] : ptr[r + 1]], ones)
    is_ind, ptr, idx = indicator_rows(X, False)
    assert not is_ind.any() and idx.size == 0 and ptr.tolist() == [0]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 60),
    min_leaf=st.integers(1, 5),
    min_weight=st.sampled_from([0.0, 1.5, 4.0]),
    repeats=st.booleans(),
)
def test_indicator_cut_is_the_few_level_cut_of_its_values(seed, m, min_leaf, min_weight, repeats):
    """For every indicator and sign: constant exactly where the values are,
    the same threshold, and the gain to rounding."""
    rng = np.random.default_rng(seed)
    n = 80
    X = np.column_stack([_one_hot(rng, n, (2, 3, 6)), rng.random(n) < 0.05]).astype(np.float32)
    samples = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    lo, hi = 0, m
    c = rng.integers(1, 4, size=m) if repeats else np.ones(m, dtype=np.int64)
    w = c * rng.choice([1.0, 0.5, 2.0], size=m)
    t = rng.normal(size=(m, 1))
    t -= (w @ t) / w.sum()
    buf = label_buffers(m, 0, 1)
    buf.t_node[:m], buf.w_node[:m], buf.c_node[:m] = t, w, c.astype(np.int32)
    _, ptr, idx = indicator_rows(np.asfortranarray(X), True)
    sums = np.empty((4, X.shape[1]))
    tw, ts, tc = node_ones_sums(samples, lo, hi, ptr, idx, buf.t_node, buf.w_node, buf.c_node, sums)
    np.testing.assert_allclose([tw, ts, tc], [w.sum(), w @ t[:, 0], c.sum()], atol=1e-12)
    task = SupervisedRule(SQUARED_ERROR, False, 0, min_leaf, min_weight)
    for f in range(X.shape[1]):
        for sign in (1.0, -1.0):
            z = np.float32(sign) * X[samples, f].astype(np.float64) + 0.0
            constant, thr, gain = indicator_cut(sums, f, sign, m, tw, ts, tc, min_leaf, min_weight)
            assert constant == (np.ptp(z) == 0)
            if constant:
                continue
            ref_thr, _, ref_gain = supervised_cut(task, z, m, np.empty(m), buf, make_state(0))
            if ref_gain == -np.inf:
                assert gain == -np.inf
                continue
            assert thr == ref_thr
            np.testing.assert_allclose(gain, ref_gain, rtol=1e-10, atol=1e-12)


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


def test_regression_splits_partition_as_counted_with_the_gain_of_their_rows():
    """Every split of a sparse regressor on one-hot data (most cut from sums,
    their values projected only once they won) sends its rows left and right
    as its children's sample counts say, and its gain is the squared error its
    cut removes from its rows."""
    rng = np.random.default_rng(5)
    n = 400
    X = np.hstack([_one_hot(rng, n, (2, 4, 7, 12)), rng.normal(size=(n, 2))]).astype(np.float32)
    y = X[:, 2] * 2.0 - X[:, 9] + X[:, 20] * X[:, -1] + 0.3 * rng.normal(size=n)
    est = gf.ObliqueForestRegressor(n_estimators=4, bootstrap=False, random_state=0, n_jobs=1)
    est.fit(X, y)
    sse = lambda v: ((v - v.mean()) ** 2).sum() if v.size else 0.0  # noqa: E731
    n_checked = n_single = 0  # splits; those on one or two indicators (cut from sums)
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
            n_single += feats.size <= 2 and feats.max() < X.shape[1] - 2
            stack += [(t.left[node], rows[go_left]), (t.right[node], rows[~go_left])]
    assert n_checked > 200 and n_single > 50  # many splits on one or two indicators
    assert est.score(X, y) > 0.8


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 60),
    min_leaf=st.integers(1, 5),
    min_weight=st.sampled_from([0.0, 1.5, 4.0]),
)
def test_pair_cut_is_the_few_level_cut_of_its_values(seed, m, min_leaf, min_weight):
    """Two indicators (of one variable or of two) with either signs: constant
    exactly where the values are, the same threshold, and the gain to rounding."""
    rng = np.random.default_rng(seed)
    n = 80
    X = np.column_stack([_one_hot(rng, n, (2, 3, 6)), rng.random(n) < 0.05]).astype(np.float32)
    X = np.asfortranarray(X)
    p = X.shape[1]
    samples = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    c = rng.integers(1, 4, size=m)
    w = c * rng.choice([1.0, 0.5], size=m)
    t = rng.normal(size=(m, 1))
    t -= (w @ t) / w.sum()
    buf = label_buffers(m, 0, 1)
    buf.t_node[:m], buf.w_node[:m], buf.c_node[:m] = t, w, c.astype(np.int32)
    _, ptr, idx = indicator_rows(X, True)
    sums = np.empty((4, p))
    totals = node_ones_sums(samples, 0, m, ptr, idx, buf.t_node, buf.w_node, buf.c_node, sums)
    starts, at = np.empty(p + 1, np.int64), np.empty(idx.size, np.int64)
    node_ones_lists(samples, 0, m, ptr, idx, sums, starts, at)
    for f in range(p):  # each list: the node positions of the rows where f is 1
        np.testing.assert_array_equal(at[starts[f] : starts[f + 1]], np.flatnonzero(X[samples, f]))
    task = SupervisedRule(SQUARED_ERROR, False, 0, min_leaf, min_weight)
    tab = np.empty(16)
    for _ in range(12):
        a, b = np.sort(rng.choice(p, size=2, replace=False))
        sa, sb = rng.choice([1.0, -1.0], size=2)
        z = (np.float32(sa) * X[samples, a]).astype(np.float64) + np.float32(sb) * X[samples, b]
        constant, thr, gain = pair_cut(
            X,
            samples,
            0,
            m,
            a,
            b,
            sa,
            sb,
            sums,
            starts,
            at,
            buf.t_node,
            buf.w_node,
            buf.c_node,
            totals,
            tab,
            (min_leaf, min_weight),
        )
        assert constant == (np.ptp(z) == 0)
        if constant:
            continue
        ref_thr, _, ref_gain = supervised_cut(task, z, m, np.empty(m), buf, make_state(0))
        if ref_gain == -np.inf:
            assert gain == -np.inf
            continue
        assert thr == ref_thr
        np.testing.assert_allclose(gain, ref_gain, rtol=1e-10, atol=1e-12)
