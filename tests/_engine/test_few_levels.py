"""Candidates with few distinct values skip the argsort (issue 45).

A one-output squared-error candidate of at most ``MAX_LEVELS`` values is cut
from per-value sums (``labels._few_level_squared_error_cut``); other
supervised candidates of that few values and more than ``COUNT_MIN`` rows are
ordered by a stable counting scatter (``labels._few_levels``).  Both against
numpy's stable argsort and the sorted scan, on drawn few-level inputs.
"""

import numpy as np
import pytest

from geoforest._engine.labels import (
    COUNT_MIN,
    MAX_LEVELS,
    SupervisedRule,
    label_buffers,
    sort_carrying,
    supervised_cut,
)
from geoforest._engine.rng import make_state
from geoforest._engine.splits import GINI, SQUARED_ERROR, best_regression_cut, midpoint


def _values(rng, m, n_levels):
    levels = np.unique(rng.integers(-3, 4, size=n_levels) * rng.choice([0.5, 1.0, 1.5]))
    return levels[rng.integers(0, levels.shape[0], size=m)].astype(np.float64)


@pytest.mark.parametrize("seed", range(40))
def test_few_level_regression_cut_is_the_sorted_scans_cut(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 300))
    z = _values(rng, m, int(rng.integers(1, MAX_LEVELS + 3)))
    t = rng.normal(size=(m, 1))
    w = rng.integers(1, 4, size=m).astype(np.float64)
    c = w.astype(np.int32)
    t -= (w @ t) / w.sum()
    min_leaf = int(rng.integers(1, 4))
    buf = label_buffers(m, 0, 1)
    buf.t_node[:m], buf.w_node[:m], buf.c_node[:m] = t, w, c
    task = SupervisedRule(SQUARED_ERROR, False, 0, min_leaf, 0.0)
    thr, score, gain = supervised_cut(task, z, m, np.empty(m), buf, make_state(0))
    order = np.argsort(z, kind="stable")
    zs = z[order]
    pos, ref, _ = best_regression_cut(
        SQUARED_ERROR, zs, t[order], w[order], c[order], m, min_leaf, 0.0, np.empty(2)
    )
    if pos < 0:
        assert score == -np.inf
        return
    assert thr == midpoint(zs[pos - 1], zs[pos])
    np.testing.assert_allclose(gain, ref, rtol=1e-12, atol=1e-12)
    assert score == gain


@pytest.mark.parametrize("n_levels", [1, 2, 5, MAX_LEVELS, MAX_LEVELS + 1, 40])
def test_counting_scatter_is_the_stable_argsort(n_levels):
    rng = np.random.default_rng(n_levels)
    for m in (COUNT_MIN + 1, 100, 777):
        z = _values(rng, m, n_levels) if n_levels <= 8 else rng.integers(0, n_levels, m) * 0.25
        y = rng.integers(0, 3, size=m).astype(np.int32)
        w = rng.random(m)
        c = rng.integers(1, 3, size=m).astype(np.int32)
        buf = label_buffers(m, 3, 0)
        buf.y_node[:m], buf.w_node[:m], buf.c_node[:m] = y, w, c
        z_sorted = np.empty(m)
        sort_carrying(z, m, 3, z_sorted, buf)
        order = np.argsort(z, kind="stable")
        np.testing.assert_array_equal(z_sorted, z[order])
        if len(np.unique(z)) <= MAX_LEVELS:  # the scatter: stable, exactly numpy's order
            np.testing.assert_array_equal(buf.y_sorted[:m], y[order])
            np.testing.assert_array_equal(buf.w_sorted[:m], w[order])
            np.testing.assert_array_equal(buf.c_sorted[:m], c[order])
        else:  # the argsort: rows travel with their values
            key = lambda zz, yy, ww: sorted(zip(zz, yy, ww, strict=True))  # noqa: E731
            assert key(z_sorted, buf.y_sorted[:m], buf.w_sorted[:m]) == key(z, y, w)


def test_classification_cut_on_few_levels_runs_the_sorted_rule():
    rng = np.random.default_rng(0)
    m = 200
    z = rng.integers(0, 2, m).astype(np.float64)
    y = (z + (rng.random(m) < 0.1)).astype(np.int32) % 2
    buf = label_buffers(m, 2, 0)
    buf.y_node[:m], buf.w_node[:m], buf.c_node[:m] = y, 1.0, 1
    task = SupervisedRule(GINI, False, 2, 1, 0.0)
    thr, score, gain = supervised_cut(task, z, m, np.empty(m), buf, make_state(0))
    assert thr == 0.5 and gain > 0 and score == gain
