"""``may_tie``: the one pass over the data that lets continuous fits compile
without the growth of tied candidates, and the trees it must not change."""

from __future__ import annotations

import numpy as np
import pytest

from geoforest._engine.builder import Tree
from geoforest._engine.rng import make_state
from geoforest.forest import _growth
from geoforest.forest._growth import grow_tree, may_tie, tree_limits


def test_may_tie_is_a_value_held_three_times_in_some_feature():
    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    assert not may_tie(X)
    X[[3, 70], 2] = X[5, 2]  # three equal values in one feature
    assert may_tie(X)
    X[70, 2] = 1e6  # two are not a tie a candidate grows for
    assert not may_tie(X)
    assert may_tie(np.random.default_rng(0).integers(0, 5, size=(50, 3)).astype(np.float32))
    assert not may_tie(np.zeros((2, 3), dtype=np.float32))  # fewer than three rows


def test_may_tie_assumes_ties_in_data_too_large_to_check(monkeypatch):
    X = np.random.default_rng(0).normal(size=(100, 3))
    monkeypatch.setattr(_growth, "TIE_CHECK_VALUES", X.size - 1)
    assert may_tie(X)


@pytest.mark.parametrize("discrete", [False, True])
def test_trees_without_the_tie_growth_are_the_same_where_nothing_ties(discrete):
    import geoforest as gf

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    if discrete:
        X[:, :3] = rng.integers(0, 3, size=(300, 3))  # candidates on these grow
    forest = gf.UnsupervisedForest(n_estimators=1, random_state=0)
    cfg = forest._engine_config(6)
    Xf = np.asfortranarray(X.astype(np.float32))
    rows = np.sort(rng.integers(0, 300, size=300)).astype(np.int64)
    grown = [
        Tree(*grow_tree(Xf, rows, cfg, tree_limits(forest), make_state(3), ties=ties)[0])
        for ties in (True, False)
    ]
    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*grown, strict=True))
    # Without ties both kernels grow the same tree; with them only the one that
    # grows tied candidates is the forest's tree (the fit passes ties=True then).
    assert same != discrete
    assert may_tie(Xf) == discrete
