"""Forests on small data (issue 53, "small n").

A fraction ``max_samples`` is raised to the rows a split needs
(``_growth.tree_sample_size``), and a new query equal to a training row lists
that row first whatever the ties (``_search._twins_first``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import geoforest as gf
import geoforest.forest._search as search
from geoforest._sparse import ZERO_DISTANCE
from geoforest.forest._growth import split_size, tree_sample_size
from geoforest.forest._ranking import LearnedMetric


def _two_blobs(n_each: int, seed: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(0, 0.3, (n_each, 3)), rng.normal(3, 0.3, (n_each, 3))])


def _drawn(forest) -> np.ndarray:
    """Rows drawn for each tree (with repeats)."""
    return forest.inbag_counts_.sum(axis=0)


def test_issue_53_example():
    X = _two_blobs(30)
    d, i = gf.UnsupervisedForest(10, random_state=0).fit(X).kneighbors(X, 1)
    np.testing.assert_array_equal(i[:, 0], np.arange(60))
    np.testing.assert_array_equal(d[:, 0], 0.0)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(30, 15), (44, 22), (45, 45), (60, 45), (88, 45), (89, 45), (90, 45), (120, 60)],
)
def test_a_fraction_draws_at_least_what_a_split_needs(n, expected):
    # 0.5 of n rows, raised to min_samples_split=45 where n holds them; below
    # 45 rows no sample can be split and nothing changes.
    forest = gf.UnsupervisedForest()
    assert tree_sample_size(forest, n) == expected
    X = np.random.default_rng(n).normal(size=(n, 3))
    fitted = gf.UnsupervisedForest(5, random_state=0).fit(X)
    np.testing.assert_array_equal(_drawn(fitted), expected)
    grown = [tree.left.shape[0] > 1 for tree in fitted.trees_]
    assert all(grown) if n >= 45 else not any(grown)


def test_the_floor_counts_min_samples_leaf_and_bootstrap_draws():
    forest = gf.UnsupervisedForest(min_samples_split=10, min_samples_leaf=8, max_samples=0.1)
    assert split_size(forest) == 16
    assert tree_sample_size(forest, 100) == 16
    assert tree_sample_size(forest, 15) == 2  # fewer rows than a split needs: as asked
    assert tree_sample_size(forest, 1000) == 100
    X = np.random.default_rng(0).normal(size=(60, 2))
    boot = gf.UnsupervisedForest(4, bootstrap=True, random_state=1).fit(X)
    np.testing.assert_array_equal(_drawn(boot), 45)  # draws, repeats counted


def test_supervised_forests_take_the_floor_too():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = gf.ObliqueForestClassifier(
        5, min_samples_split=10, max_samples=0.1, bootstrap=False, random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(_drawn(clf), 10)


def test_out_of_bag_scores_are_refused_when_the_floor_draws_every_row():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 2))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(oob_score=True, bootstrap=False, max_samples=0.5, min_samples_split=10)
    with pytest.raises(ValueError, match="each tree draws 10 of 10"):
        gf.ObliqueForestClassifier(5, random_state=0, **kw).fit(X[:10], y[:10])
    clf = gf.ObliqueForestClassifier(40, random_state=0, **kw).fit(X, y)
    np.testing.assert_array_equal(_drawn(clf), 10)  # two rows out of each tree
    assert 0.0 <= clf.oob_score_ <= 1.0


def test_an_integer_max_samples_too_small_to_split_is_kept_with_a_warning():
    X = np.random.default_rng(0).normal(size=(100, 3))
    with pytest.warns(UserWarning, match=r"max_samples=20 draws fewer.*max_samples >= 45"):
        forest = gf.UnsupervisedForest(3, max_samples=20, random_state=0).fit(X)
    np.testing.assert_array_equal(_drawn(forest), 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Enough rows, or too few data to split anyway: no warning.
        gf.UnsupervisedForest(3, max_samples=45, random_state=0).fit(X)
        gf.UnsupervisedForest(3, max_samples=20, random_state=0).fit(X[:40])
        gf.UnsupervisedForest(3, max_samples=0.1, random_state=0).fit(X)


def test_results_do_not_depend_on_row_order_or_threads():
    X = _two_blobs(35, seed=1)
    perm = np.random.default_rng(2).permutation(X.shape[0])
    a = gf.UnsupervisedForest(20, random_state=3).fit(X)
    b = gf.UnsupervisedForest(20, random_state=3, n_jobs=2).fit(X[perm])
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for xa, xb in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(xa, xb)
    np.testing.assert_array_equal(a.apply()[perm], b.apply())
    d, i = b.kneighbors(X[perm], 3)
    np.testing.assert_array_equal(i[:, 0], np.arange(X.shape[0]))
    np.testing.assert_array_equal(d[:, 0], 0.0)


@pytest.mark.parametrize("distance", ["auto", "proximity"])
@pytest.mark.parametrize("n", [2, 3, 25, 44])
def test_one_leaf_trees_keep_each_query_itself(distance, n):
    # Below min_samples_split every tree is one leaf and every point ties at
    # proximity 1: the candidates are cut by index, the equal row is not.
    X = np.random.default_rng(n).normal(size=(n, 4)) + 1e6
    forest = gf.UnsupervisedForest(5, distance=distance, random_state=0).fit(X)
    assert all(tree.left.shape[0] == 1 for tree in forest.trees_)
    for k in sorted({1, 2, n}):
        d, i = forest.kneighbors(X, k)
        np.testing.assert_array_equal(i[:, 0], np.arange(n))
        np.testing.assert_array_equal(d[:, 0], 0.0)
        assert np.all(np.diff(d, axis=1) >= 0)
        assert all(len(set(row)) == k for row in i)
        if k < n:
            own = forest.kneighbors(None, k, return_distance=False)
            assert not (own == np.arange(n)[:, None]).any()


def test_training_rows_as_queries_are_their_kneighbors_none_after_themselves():
    # The learned ranking's promise, where all points tie in proximity.
    X = np.random.default_rng(7).normal(size=(40, 3))
    forest = gf.UnsupervisedForest(5, random_state=0).fit(X)
    _, ind_train = forest.kneighbors(None, 4)
    _, ind_q = forest.kneighbors(X, 5)
    np.testing.assert_array_equal(ind_q[:, 0], np.arange(40))
    np.testing.assert_array_equal(ind_q[:, 1:], ind_train)


def test_duplicated_rows_list_their_lowest_copy_first():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    X[40:] = X[[5, 1, 5, 7, 33, 2, 2, 0, 11, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]]
    forest = gf.UnsupervisedForest(8, random_state=0).fit(X)
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    d, i = forest.kneighbors(X, 3)
    np.testing.assert_array_equal(i[:, 0], first[inverse.ravel()])
    np.testing.assert_array_equal(d[:, 0], 0.0)
    # The other copies follow at distance 0.
    np.testing.assert_array_equal(i[42, :2], [5, 40])
    np.testing.assert_array_equal(d[42, :2], 0.0)


def test_rows_equal_where_the_metric_looks_are_not_the_query():
    # Rows 0 and 9 differ only in a feature the metric gives no weight: both
    # at distance 0 from either, and each query lists itself first.
    X = np.random.default_rng(5).normal(size=(30, 3))
    X[9, :2] = X[0, :2]
    forest = gf.UnsupervisedForest(5, random_state=0).fit(X)
    forest._metric = LearnedMetric(np.array([1.0, 1.0, 0.0]), np.array([1.0, 1.0, 0.0]))
    d, i = forest.kneighbors(X[[9, 0]], 2)
    np.testing.assert_array_equal(i, [[9, 0], [0, 9]])
    np.testing.assert_array_equal(d, 0.0)
    # A new point equal to neither keeps the ranking's order (lower index first).
    Q = X[[9]].copy()
    Q[0, 2] += 1.0
    np.testing.assert_array_equal(forest.kneighbors(Q, 2)[1], [[0, 9]])


@pytest.mark.parametrize("pairs", [1, 7, 1 << 16])
def test_twins_are_found_in_chunks_of_any_size(monkeypatch, pairs):
    monkeypatch.setattr(search, "TWIN_PAIRS", pairs)
    X = np.random.default_rng(1).normal(size=(40, 2))
    X[30:] = X[:10]
    forest = gf.UnsupervisedForest(3, random_state=0).fit(X)
    d, i = forest.kneighbors(X, 1)
    np.testing.assert_array_equal(i[:, 0], np.r_[np.arange(30), np.arange(10)])
    np.testing.assert_array_equal(d[:, 0], 0.0)


def test_new_points_are_unchanged():
    # Queries equal to no training row: neighbours exactly as ranked before.
    X = _two_blobs(20)
    forest = gf.UnsupervisedForest(5, random_state=0).fit(X)
    Q = X + 1e-3
    d, i = forest.kneighbors(Q, 4)
    assert not (d[:, 0] == 0.0).any()
    d_prox, i_prox = forest._proximity_kneighbors(Q, 4)
    np.testing.assert_array_equal(i_prox[:, 0], 0)  # one-leaf trees: ties to index 0
    np.testing.assert_array_equal(d_prox, 0.0)


def test_neighbors_transformer_on_small_data():
    X = _two_blobs(25, seed=6)
    t = gf.ForestNeighborsTransformer(n_neighbors=1, random_state=0).fit(X)
    G = t.transform(X)
    assert G.shape == (50, 50)
    np.testing.assert_array_equal(G.diagonal(), ZERO_DISTANCE)  # distance 0, as stored
    big = gf.ForestNeighborsTransformer(n_neighbors=3, random_state=0).fit(_two_blobs(35))
    assert all(tree.left.shape[0] > 1 for tree in big.forest_.trees_)


def test_a_forest_grown_from_a_dask_array_draws_the_same_rows():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X = _two_blobs(30, seed=8).astype(np.float32)
    a = gf.UnsupervisedForest(4, distance="proximity", random_state=0).fit(X)
    with dask.config.set(scheduler="sync"):
        b = gf.UnsupervisedForest(4, distance="proximity", random_state=0).fit(
            da.from_array(X, chunks=25)
        )
        np.testing.assert_array_equal(b.inbag_counts_.compute(), a.inbag_counts_)
    np.testing.assert_array_equal(_drawn(a), 45)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for xa, xb in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(xa, xb)


def test_one_leaf_trees_learn_no_relevance_whatever_the_row_order():
    # Pools of tied points are ordered by index: 40 rows numbered blob by blob
    # once gave the first features a relevance, and another order another one.
    X = _two_blobs(20, seed=9)
    perm = np.random.default_rng(0).permutation(40)
    a = gf.UnsupervisedForest(10, random_state=0).fit(X)
    b = gf.UnsupervisedForest(10, random_state=0).fit(X[perm])
    for forest in (a, b):
        assert all(tree.left.shape[0] == 1 for tree in forest.trees_)
        np.testing.assert_array_equal(forest.feature_relevance_, 0.0)
        assert forest._metric.kind == "nothing learned"
    np.testing.assert_allclose(a._metric.weights, 1.0 / X.var(axis=0), rtol=1e-5)
    inverse = np.argsort(perm)
    np.testing.assert_array_equal(
        perm[b.kneighbors(None, 3, return_distance=False)][inverse],
        a.kneighbors(None, 3, return_distance=False),
    )
