"""Sparse projections that grow while tied values dominate a node (``max_tied_fraction``)."""

from __future__ import annotations

import numpy as np
import pytest

import geoforest as gf
from geoforest._engine.projections import MAX_GROWN_NONZEROS
from geoforest._engine.ties import _largest_tie, tied_features


def _zero_inflated(n_per_class: int = 150, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three classes of 8 x 8 'strokes': each class lights its own pixels, with dropouts.

    Pixels are 0 or a value in {1, 2, 3}; 40 of 64 pixels are 0 in every
    class, as background pixels of digit images are.
    """
    rng = np.random.RandomState(seed)
    X, y = [], []
    for c in range(3):
        on = rng.choice(64, 8, replace=False)
        for _ in range(n_per_class):
            row = np.zeros(64)
            keep = on[rng.rand(8) < 0.7]
            row[keep] = rng.randint(1, 4, keep.size)
            stray = rng.choice(64, 2, replace=False)
            row[stray] = rng.randint(1, 4, 2)
            X.append(row)
            y.append(c)
    return np.array(X), np.array(y)


def _node_samples(tree, X, rows):
    """Rows (with repeats) reaching each node, by walking the stored projections."""
    reach = {0: list(rows)}
    out = {}
    stack = [0]
    while stack:
        node = stack.pop()
        members = reach.pop(node)
        out[node] = np.array(members)
        if tree.left[node] == -1:
            continue
        lo, hi = tree.proj_ptr[node], tree.proj_ptr[node + 1]
        z = X[np.array(members)][:, tree.proj_idx[lo:hi]].astype(np.float64) @ tree.proj_weight[
            lo:hi
        ].astype(np.float64)
        go_left = z <= tree.threshold[node]
        reach[tree.left[node]] = [r for r, g in zip(members, go_left, strict=True) if g]
        reach[tree.right[node]] = [r for r, g in zip(members, go_left, strict=True) if not g]
        stack += [tree.left[node], tree.right[node]]
    return out


def test_largest_tie_matches_counting():
    rng = np.random.RandomState(0)
    for size in (1, 2, 7, 50):
        z = np.sort(rng.randint(0, 4, size).astype(np.float64))
        assert _largest_tie(z, size) == np.unique(z, return_counts=True)[1].max()


def test_continuous_data_grow_nothing():
    X, _ = gf.datasets.make_helix(400, random_state=0)
    X = gf.datasets.add_noise_dims(X, 20, random_state=0)
    a = gf.UnsupervisedForest(n_estimators=5, random_state=1, max_tied_fraction=0.05).fit(X)
    b = gf.UnsupervisedForest(n_estimators=5, random_state=1, max_tied_fraction=None).fit(X)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for x, y in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("fraction", [0.05, 0.3])
def test_every_split_resolves_its_node(fraction):
    X, _ = _zero_inflated()
    X = np.c_[X, np.zeros(len(X)), np.full(len(X), 2.5)]  # never worth a feature
    forest = gf.UnsupervisedForest(
        n_estimators=4,
        max_tied_fraction=fraction,
        min_samples_split=10,
        feature_combinations=1.0,  # drawn candidates of one feature: added ones are checked
        random_state=0,
    ).fit(X)
    X32 = X.astype(np.float32)
    grown = 0
    for t, tree in enumerate(forest.trees_):
        rows = np.repeat(np.arange(X.shape[0]), forest.inbag_counts_[:, t])
        for node, members in _node_samples(tree, X32, rows).items():
            if tree.left[node] == -1:
                continue
            lo, hi = tree.proj_ptr[node], tree.proj_ptr[node + 1]
            width = hi - lo
            z = np.sort(X32[members][:, tree.proj_idx[lo:hi]] @ tree.proj_weight[lo:hi])
            limit = max(fraction * members.size, 1.0)
            resolved = _largest_tie(z.astype(np.float64), z.size) <= limit
            full = width == min(MAX_GROWN_NONZEROS, X.shape[1])
            others = np.setdiff1d(np.arange(X.shape[1]), tree.proj_idx[lo:hi])
            varying = np.ptp(X32[members][:, others], axis=0) > 0
            # Growth stops early only when 64 draws met no varying unused feature
            # (then at most half of the features are such; else odds 2^-64).
            assert resolved or full or varying.sum() < X.shape[1] / 2
            grown += width > 3
    assert grown > 0  # the data do need grown projections
    used = np.concatenate([t.proj_idx for t in forest.trees_])
    assert not np.isin(used, [64, 65]).any()


def test_grown_projections_route_training_rows_like_the_builder():
    # The builder sums added features after the drawn ones; queries sum the
    # stored projection in order: the same values, so the same leaves.
    X, _ = _zero_inflated()
    forest = gf.UnsupervisedForest(n_estimators=6, random_state=3, max_tied_fraction=0.05).fit(X)
    inbag = forest.inbag_counts_ > 0
    np.testing.assert_array_equal(forest.apply(X)[inbag], forest.apply()[inbag])


def test_growth_recovers_neighbours_on_zero_inflated_data():
    X, y = _zero_inflated()

    def agreement(**kw):
        forest = gf.UnsupervisedForest(n_estimators=50, random_state=0, **kw).fit(X)
        ind = forest.kneighbors(n_neighbors=10, return_distance=False)
        return (y[ind] == y[:, None]).mean()

    grown, paper = agreement(), agreement(max_tied_fraction=None)
    assert grown > paper + 0.05, (grown, paper)


def test_bad_fraction_is_refused():
    X, _ = _zero_inflated(20)
    for bad in (0.0, 1.0, -0.1, "half"):
        with pytest.raises(ValueError, match="max_tied_fraction"):
            gf.UnsupervisedForest(n_estimators=2, max_tied_fraction=bad).fit(X)


def test_tied_features_are_the_repeating_columns():
    X, _ = _zero_inflated()
    noise = np.random.RandomState(1).standard_normal((len(X), 5))
    X32 = np.c_[X, noise].astype(np.float32)
    rows = np.arange(len(X32), dtype=np.int64)
    z = np.empty(len(X32))
    keys, tmp = np.empty(len(X32), dtype=np.int64), np.empty(len(X32))
    got = tied_features(X32, rows, z, keys, tmp)
    counts = [np.unique(X32[:, f], return_counts=True)[1].max() for f in range(X32.shape[1])]
    np.testing.assert_array_equal(got, np.flatnonzero(np.array(counts) >= 3))
    assert not np.isin(np.arange(64, 69), got).any()  # the Gaussian columns


def test_growth_never_adds_continuous_noise_columns():
    # Noise columns would break every tie at once and bury the signal.
    X, y = _zero_inflated()
    X = np.c_[X, 3.0 * np.random.RandomState(2).standard_normal((len(X), 40))]
    forest = gf.UnsupervisedForest(
        n_estimators=10, feature_combinations=1.0, min_samples_split=10, random_state=0
    ).fit(X)
    for tree in forest.trees_:
        for node in np.flatnonzero(tree.left != -1):
            idx = tree.proj_idx[tree.proj_ptr[node] : tree.proj_ptr[node + 1]]
            if idx.size > 1:  # grown: every feature is a discrete one
                assert (idx < 64).all()


def test_large_nodes_are_resolved_on_their_full_values():
    # Nodes above 256 samples check ties on a strided subsample; the root's
    # grown projection must still resolve its full values (up to sampling
    # error), checked here by counting all of them.
    X, _ = _zero_inflated(1000)  # 3,000 rows, 1,500 per tree
    forest = gf.UnsupervisedForest(n_estimators=5, feature_combinations=1.0, random_state=0)
    forest.fit(X)
    X32 = X.astype(np.float32)
    for t, tree in enumerate(forest.trees_):
        rows = np.repeat(np.arange(X.shape[0]), forest.inbag_counts_[:, t])
        lo, hi = tree.proj_ptr[0], tree.proj_ptr[1]
        z = X32[rows][:, tree.proj_idx[lo:hi]] @ tree.proj_weight[lo:hi]
        largest = np.unique(z, return_counts=True)[1].max()
        assert largest <= 2 * 0.05 * rows.size or hi - lo == MAX_GROWN_NONZEROS


def test_bootstrap_copies_do_not_make_continuous_features_discrete():
    # A bootstrap sample repeats rows; their copies tie under any projection
    # and must not turn a continuous feature into a "discrete" one.
    X = np.random.RandomState(0).standard_normal((2000, 4)).astype(np.float32)
    rows = np.sort(np.random.RandomState(1).randint(0, 2000, 2000)).astype(np.int64)
    assert np.bincount(rows).max() >= 3  # some row drawn three times
    z = np.empty(len(rows))
    keys, tmp = np.empty(len(rows), dtype=np.int64), np.empty(len(rows))
    assert tied_features(X, rows, z, keys, tmp).size == 0
    a = gf.UnsupervisedForest(n_estimators=3, bootstrap=True, random_state=0).fit(X)
    b = gf.UnsupervisedForest(
        n_estimators=3, bootstrap=True, max_tied_fraction=None, random_state=0
    ).fit(X)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        np.testing.assert_array_equal(ta.proj_idx, tb.proj_idx)
