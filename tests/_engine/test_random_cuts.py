"""Extremely randomised cuts (``splitter="random"``) against brute force: one
threshold drawn uniformly in the node's range, scored as the rule scores any cut."""

import numpy as np
import pytest

from geoforest._engine.rng import make_state, uniform
from geoforest._engine.splits import (
    ENTROPY,
    GINI,
    SQUARED_ERROR,
    random_class_cut,
    random_regression_cut,
)


def _drawn(z, seed):
    """The threshold the kernels draw from ``make_state(seed)``: uniform in [min, max)."""
    lo, hi = z.min(), z.max()
    t = lo + uniform(make_state(seed)) * (hi - lo)
    return t if t < hi else lo


def _impurity(counts, gini):
    w = counts.sum()
    if w <= 0:
        return 0.0
    q = counts[counts > 0] / w
    return w * (1 - np.sum(q**2)) if gini else -w * np.sum(q * np.log2(q))


def _sse(T, w):
    mean = (w[:, None] * T).sum(axis=0) / w.sum()
    return float((w[:, None] * (T - mean) ** 2).sum())


@pytest.mark.parametrize("rule", [GINI, ENTROPY])
@pytest.mark.parametrize("seed", range(6))
def test_random_class_cut_scores_the_drawn_threshold(rule, seed):
    rng = np.random.default_rng(seed)
    n = 15 + seed
    z = np.round(rng.normal(size=n), 1)  # ties too
    ys = rng.integers(0, 3, size=n).astype(np.int32)
    ws = rng.uniform(0.5, 2.0, size=n)
    cs = np.ones(n, np.int32)
    thr, score, gain = random_class_cut(
        rule, z, ys, ws, cs, n, 3, 1, 0.0, np.zeros(6), make_state(seed)
    )
    t = _drawn(z, seed)
    left = z <= t
    below, above = z[left].max(), z[~left].min()
    assert below <= thr < above  # the rows split where the drawn threshold splits them
    expected = sum(
        s * _impurity(np.bincount(ys[m], weights=ws[m], minlength=3), rule == GINI)
        for s, m in ((1, np.ones(n, bool)), (-1, left), (-1, ~left))
    )
    assert score == gain == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n_out", [1, 3])
@pytest.mark.parametrize("seed", range(6))
def test_random_regression_cut_scores_the_drawn_threshold(n_out, seed):
    rng = np.random.default_rng(seed)
    n = 12 + seed
    z = rng.normal(size=n)
    T = rng.normal(size=(n, n_out))
    ws = rng.uniform(0.5, 2.0, size=n)
    cs = np.ones(n, np.int32)
    centred = T - (ws[:, None] * T).sum(axis=0) / ws.sum()
    thr, score, gain = random_regression_cut(
        SQUARED_ERROR, z, centred, ws, cs, n, 1, 0.0, np.zeros(2 * n_out), make_state(seed)
    )
    left = z <= _drawn(z, seed)
    assert z[left].max() <= thr < z[~left].min()
    expected = _sse(T, ws) - _sse(T[left], ws[left]) - _sse(T[~left], ws[~left])
    assert score == gain == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_random_cuts_refuse_small_sides_constant_values_and_unknown_rules():
    z = np.array([0.0, 1.0, 1.0, 1.0, 1.0])
    ys, ws, cs = np.zeros(5, np.int32), np.ones(5), np.ones(5, np.int32)
    # Every draw in [0, 1) leaves one row on the left: refused at min_leaf 2.
    for seed in range(5):
        thr, score, _ = random_class_cut(
            GINI, z, ys, ws, cs, 5, 2, 2, 0.0, np.zeros(4), make_state(seed)
        )
        assert np.isnan(thr) and score == -np.inf
    same = np.ones(5)
    assert (
        random_class_cut(GINI, same, ys, ws, cs, 5, 2, 1, 0.0, np.zeros(4), make_state(0))[1]
        == -np.inf
    )
    ts = np.zeros((5, 1))
    with pytest.raises(ValueError, match="unknown split rule code"):
        random_regression_cut(GINI, z, ts, ws, cs, 5, 1, 0.0, np.zeros(2), make_state(0))
    with pytest.raises(ValueError, match="unknown split rule code"):
        random_class_cut(SQUARED_ERROR, z, ys, ws, cs, 5, 2, 1, 0.0, np.zeros(4), make_state(0))


@pytest.mark.parametrize("kind", ["normal", "ties", "constant", "two values"])
@pytest.mark.parametrize("min_leaf", [1, 5, 40])
@pytest.mark.parametrize("seed", range(8))
def test_uniform_cut_unsorted_is_the_sorted_cut(kind, min_leaf, seed):
    # The random projection forest's cut without a sort: the threshold (bit for
    # bit) and the generator's state as the sorted rule leaves them, the gain
    # up to summation order; min_leaf = 40 of 60 values has no valid cut and
    # 5 often moves the cut, which takes the sorted fallback.
    from geoforest._engine.cuts import _uniform_cut, midpoint, uniform_cut_unsorted

    rng = np.random.default_rng(seed)
    n = 60
    z = {
        "normal": rng.normal(size=n),
        "ties": rng.integers(0, 4, size=n).astype(np.float64),
        "constant": np.full(n, 2.5),
        "two values": np.where(rng.random(n) < 0.1, 1.0, -0.0),
    }[kind]
    s_sorted, s_unsorted = make_state(seed), make_state(seed)
    zs = np.sort(z)
    pos, score, gain = _uniform_cut(zs, n, min_leaf, s_sorted)
    thr = midpoint(zs[pos - 1], zs[pos]) if pos > 0 else np.nan
    thr2, score2, gain2 = uniform_cut_unsorted(z.copy(), n, min_leaf, s_unsorted, np.empty(n))
    np.testing.assert_array_equal(thr2, thr)  # NaN where there is no cut
    np.testing.assert_allclose([score2, gain2], [score, gain], rtol=1e-12)
    assert s_unsorted[0] == s_sorted[0]  # the same draws
    if pos > 0:
        assert min(np.sum(z <= thr2), np.sum(z > thr2)) >= min_leaf


def test_uniform_cut_unsorted_puts_a_value_equal_to_the_draw_left():
    # A drawn threshold equal to a data value: the sorted rule cuts after it.
    from geoforest._engine.cuts import uniform_cut_unsorted

    u = uniform(make_state(3))  # the draw make_state(3) gives first
    z = np.array([0.75, 1.0, u, 0.0, u, 0.25])  # range [0, 1], so the draw is u itself
    thr, _, _ = uniform_cut_unsorted(z, 6, 1, make_state(3), np.empty(6))
    zs = np.sort(z)
    pos = np.searchsorted(zs, u, side="right")
    assert np.sum(z <= thr) == pos and thr == zs[pos - 1] + 0.5 * (zs[pos] - zs[pos - 1])
