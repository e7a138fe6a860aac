"""A large node's split chosen on a sample of its rows (``EngineConfig.split_samples``).

The reference: the draw is re-implemented here in numpy (a hash of each row's
float32 bits, salted by one output of the tree's random stream, each row
kept with probability ``m / size``).  For every sampled node some salt among
the stream's first outputs must give a sample whose brute-force best cut is
the stored one, with that sample's gain scaled to the node's size; the
node's rows must go down the cut whole.
"""

import numpy as np
import pytest

from geoforest._engine.builder import EngineConfig, Tree, TreeLimits, build_tree
from geoforest._engine.projections import AXIS
from geoforest._engine.rng import make_state, next_u64
from geoforest._engine.splits import FASTBIC, MEDIAN, TWOMEANS, default_params, make_workspace

from .test_builder import _brute_node, _nodes


def _grow(X, code, split_samples, seed=0, min_split=2):
    n, p = X.shape
    cfg = EngineConfig(
        AXIS, np.zeros(1), 1, code, default_params(code), p, split_samples=split_samples
    ).typed()
    tree, rows, leaf = build_tree(
        np.ascontiguousarray(X, dtype=np.float32), np.arange(n, dtype=np.int64), cfg,
        TreeLimits(min_split, 1, -1, -np.inf), make_state(seed), None, None, np.zeros(0),
        np.zeros(0, np.int32), 0, make_workspace(code, n), None,
    )  # fmt: skip
    return Tree(*tree), rows, leaf


_PRIME = np.uint64(0x100000001B3)


def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _drawn(X32, rows, m, salt):
    """The rows of ``rows`` (increasing) the builder draws with ``salt``."""
    bits = X32.view(np.uint32)
    with np.errstate(over="ignore"):
        keys = np.full(len(rows), salt, dtype=np.uint64)
        for f in range(X32.shape[1]):
            keys = (keys ^ bits[rows, f].astype(np.uint64)) * _PRIME
        u = (_mix(keys) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return rows[u < m / len(rows)]


def _stream(seed, count):
    """The first ``count`` outputs of a tree's random stream."""
    state = make_state(seed)
    return [next_u64(state) for _ in range(count)]


@pytest.mark.parametrize("code", [FASTBIC, TWOMEANS, MEDIAN])
@pytest.mark.parametrize("seed", range(6))
def test_large_nodes_cut_at_a_brute_force_best_cut_of_a_drawn_sample(code, seed):
    rng = np.random.default_rng(seed)
    n, m = 40 + seed * 7, 9 + seed % 3
    X = rng.normal(size=(n, 2)) * [1.0, 2.5]
    X[: n // 3, 0] += 3.0
    X = X.astype(np.float32).astype(np.float64)
    tree, rows, leaf = _grow(X, code, m, seed=seed)
    X32 = X.astype(np.float32)
    salts = _stream(seed, 400)
    checked = 0
    for node, node_rows in _nodes(tree, X):
        if tree.left[node] == -1:
            continue
        cut = (tree.proj_idx[tree.proj_ptr[node]], tree.threshold[node])
        n_left = np.count_nonzero(X[node_rows, cut[0]] <= cut[1])
        assert tree.n_node_samples[tree.left[node]] == n_left  # all rows went down the cut
        if len(node_rows) <= m:  # a small node: the full brute-force best, as without sampling
            best = _brute_node(X, node_rows, code, None, 1)
            assert cut in best
            assert tree.gain[node] == pytest.approx(best[cut], rel=1e-7, abs=1e-9)
            continue
        checked += 1
        rows_sorted = np.sort(node_rows)
        matches = []
        for salt in salts:
            sample = _drawn(X32, rows_sorted, m, salt)
            if len(sample) < 2:  # too few to cut: the builder cuts on all rows
                sample = rows_sorted
            z = X[sample, cut[0]]
            if not (z.min() <= cut[1] < z.max()):
                continue
            best = _brute_node(X, sample, code, None, 1)
            if cut in best:
                matches.append(best[cut] * len(rows_sorted) / len(sample))
        assert matches, f"node {node}: no drawn sample has this cut as its best"
        assert any(tree.gain[node] == pytest.approx(g, rel=1e-7, abs=1e-9) for g in matches)
    assert checked >= 2
    where = {int(r): nd for nd, rs in _nodes(tree, X) if tree.left[nd] == -1 for r in rs}
    assert all(where[int(r)] == lf for r, lf in zip(rows, leaf, strict=True))


@pytest.mark.parametrize("split_samples", [0, 60, 10**6])
def test_no_node_larger_than_split_samples_means_the_tree_without_sampling(split_samples):
    X = np.random.default_rng(1).normal(size=(60, 3))
    a, _, _ = _grow(X, FASTBIC, 0, seed=3)
    b, _, _ = _grow(X, FASTBIC, split_samples, seed=3)
    for name in a._fields:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("seed", range(3))
def test_a_sample_of_copies_does_not_stop_a_node_that_can_be_cut(seed):
    # 95 % copies of one row: a systematic sample may hold only copies; the
    # node is then cut on all its rows, so every leaf ends up one distinct row.
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.normal(size=(1, 2)), 200, axis=0)
    X[rng.choice(200, 10, replace=False)] = rng.normal(size=(10, 2))
    tree, _, _ = _grow(X, TWOMEANS, 4, seed=seed)
    for node, node_rows in _nodes(tree, X):
        if tree.left[node] == -1:
            assert len(np.unique(X[node_rows], axis=0)) == 1


def test_the_draw_is_the_same_for_any_row_order_and_keeps_about_m_rows():
    from geoforest._engine.nodes import draw_split_rows

    rng = np.random.default_rng(0)
    X = np.asfortranarray(rng.normal(size=(4000, 5)).astype(np.float32))
    X[100:140] = X[7]  # copies: drawn together or not at all
    perm = rng.permutation(4000)
    inverse = np.argsort(perm)
    drawn = []
    for data, samples in ((X, np.arange(4000)), (np.asfortranarray(X[perm]), inverse)):
        rows = np.sort(samples).astype(np.int64)  # a node's rows, in increasing row order
        sub, keys = np.empty(4000, np.int64), np.empty(4000, np.uint64)
        k = draw_split_rows(data, rows, 0, 4000, 500, sub, keys, make_state(5))
        assert np.all(np.diff(sub[:k]) > 0)
        drawn.append(np.sort(perm[sub[:k]]) if data is not X else np.sort(sub[:k]))
        np.testing.assert_array_equal(np.sort(sub[:k]), _drawn(data, rows, 500, _stream(5, 1)[0]))
    np.testing.assert_array_equal(drawn[0], drawn[1])
    assert abs(len(drawn[0]) - 500) < 4 * np.sqrt(500)
    copies = np.isin(np.arange(100, 140), drawn[0])
    assert copies.all() == copies.any()
