"""Per-tree samples: the canonical order, and the same draw in O(max_samples) memory."""

from __future__ import annotations

import numpy as np
import pytest

from geoforest._engine.rng import make_state, uniform
from geoforest._engine.sampling import (
    canonical_order,
    draw_positions,
    draw_tree_sample,
    row_hashes,
)


@pytest.mark.parametrize(
    ("n", "n_draw", "replace"),
    [(1, 1, False), (7, 7, False), (1000, 1, False), (1000, 999, False), (5000, 700, False),
     (5000, 700, True), (3, 10, True), (5000, 100, True), (5000, 100, False)],
)  # fmt: skip
@pytest.mark.parametrize("seed", [0, 12345])
@pytest.mark.parametrize("gaps", [False, True])
def test_draw_positions_is_draw_tree_sample(n, n_draw, replace, seed, gaps):
    # Small and large draws (np.sort and counting), and row indices with gaps
    # (a subset of rows; counting then runs over 20 n counters).
    rng = np.random.default_rng(seed)
    order = rng.permutation(n).astype(np.int64)
    if gaps:
        order = rng.choice(20 * n, size=n, replace=False).astype(np.int64)
    dense, sparse = make_state(seed), make_state(seed)
    expected = draw_tree_sample(order, n_draw, replace, dense)
    pos = draw_positions(n, n_draw, replace, sparse)
    np.testing.assert_array_equal(np.sort(order[pos]), expected)
    # the generator continues identically (the tree's projections come next)
    assert uniform(dense) == uniform(sparse)
    if not replace:
        assert np.unique(pos).size == n_draw


def test_draw_positions_needs_no_n_sized_memory():
    # 10^12 rows: an n-long array would need 8 TB.
    pos = draw_positions(10**12, 1000, False, make_state(1))
    assert pos.min() >= 0 and pos.max() < 10**12 and np.unique(pos).size == 1000


def test_row_hashes_sorted_stably_are_the_canonical_order():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)).astype(np.float32)
    X[::10] = X[3]  # identical rows: ties broken by row index
    X[7, 0] = -0.0
    X[8, 0] = 0.0
    h = row_hashes(X)
    np.testing.assert_array_equal(np.argsort(h, kind="stable"), canonical_order(X))
    assert h[7] == row_hashes(np.where(X[7:8] == 0, 0.0, X[7:8]).astype(np.float32))[0]
