"""max_leaf_nodes, min_impurity_decrease and min_weight_fraction_leaf of the supervised
forests: scikit-learn's single trees split for split, and every tree of a forest with
max_leaf_nodes the best-first cut of the tree grown without the limit (an independent
heapq implementation)."""

import heapq
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import geoforest as gf
from geoforest._engine.best_first import best_first_splits


def _classification(seed):
    X, y = make_classification(
        300, 6, n_informative=3, n_classes=3, n_clusters_per_class=1, random_state=seed
    )
    return X.astype(np.float32), y


def _regression(seed):
    X, y = make_friedman1(300, noise=1.0, random_state=seed)
    return X.astype(np.float32), y


def _one_axis_tree(task, **kw):
    """One tree on every row, every feature a candidate: scikit-learn's CART."""
    cls = gf.ObliqueForestClassifier if task != "regression" else gf.ObliqueForestRegressor
    if task != "regression":
        kw["criterion"] = task
    return cls(n_estimators=1, projection="axis", max_features=None, bootstrap=False,
               random_state=0, **kw)  # fmt: skip


def _sklearn_tree(task, **kw):
    if task == "regression":
        return DecisionTreeRegressor(random_state=0, **kw)
    return DecisionTreeClassifier(criterion=task, random_state=0, **kw)


def _preorder_splits(t):
    """Features and thresholds of a scikit-learn tree's split nodes, in pre-order."""
    features, thresholds, todo = [], [], [0]
    while todo:
        node = todo.pop()
        if t.children_left[node] >= 0:
            features.append(t.feature[node])
            thresholds.append(t.threshold[node])
            todo += [t.children_right[node], t.children_left[node]]
    return np.array(features, dtype=np.int64), np.array(thresholds)


def _compare_with_sklearn(task, seed, limits, class_weight=None, structure=True):
    """Our single axis tree against scikit-learn's under ``limits``; its leaves.

    ``structure=False`` compares the training rows' predictions only: where
    scikit-learn's rounded impurity of a one-class node exceeds its epsilon it
    splits that node at zero gain, which changes the tree but not a prediction.
    """
    X, y = _regression(seed) if task == "regression" else _classification(seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, size=y.shape[0])
    extra = {} if class_weight is None else {"class_weight": class_weight}
    ours = _one_axis_tree(task, **limits, **extra).fit(X, y, sample_weight=w)
    ref = _sklearn_tree(task, **limits, **extra).fit(X, y, sample_weight=w)
    tree = ours.trees_[0]
    if not structure:
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
        return tree.n_leaves
    assert tree.n_leaves == ref.get_n_leaves()
    # scikit-learn numbers a best-first tree's nodes as it creates them; in
    # pre-order both trees hold the same features and thresholds, except where
    # a small node's features tie exactly (the same cut of the rows, broken by
    # each library's own feature order): compared from 20 samples up.
    features, thresholds = _preorder_splits(ref.tree_)
    split = tree.left >= 0
    large = tree.n_node_samples[split] >= 20
    assert features.shape[0] == np.count_nonzero(split)
    np.testing.assert_array_equal(tree.proj_idx[large], features[large])
    np.testing.assert_allclose(tree.threshold[split][large], thresholds[large], rtol=1e-6)
    if task == "regression":
        np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    return tree.n_leaves


@pytest.mark.parametrize("task", ["regression", "gini", "entropy"])
@pytest.mark.parametrize("seed", range(2))
def test_max_leaf_nodes_is_sklearn_best_first_tree(task, seed):
    for max_leaf_nodes in (2, 3, 6, 13):
        n_leaves = _compare_with_sklearn(task, seed, {"max_leaf_nodes": max_leaf_nodes})
        assert n_leaves == max_leaf_nodes  # these data split far beyond 13 leaves


@pytest.mark.parametrize("task", ["regression", "gini", "entropy"])
@pytest.mark.parametrize("seed", range(2))
def test_min_impurity_decrease_is_sklearn(task, seed):
    leaves = []
    scale = 1.0 if task == "regression" else 0.01  # sizes of the trees' decreases
    for decrease in (0.2 * scale, 0.5 * scale, 2.0 * scale, 10.0 * scale):
        leaves.append(_compare_with_sklearn(task, seed, {"min_impurity_decrease": decrease}))
    assert leaves == sorted(leaves, reverse=True) and leaves[0] > leaves[-1] >= 1


@pytest.mark.parametrize("task", ["regression", "gini", "entropy"])
@pytest.mark.parametrize("splitter", ["best", "random"])
def test_min_weight_fraction_leaf_is_sklearn(task, splitter):
    if splitter == "best":
        leaves = [
            _compare_with_sklearn(
                task, 4, {"min_weight_fraction_leaf": f}, structure=task == "regression"
            )
            for f in (0.01, 0.05, 0.2, 0.5)
        ]
        assert leaves == sorted(leaves, reverse=True) and leaves[0] > leaves[-1] == 1
        return
    # Random cuts (no scikit-learn counterpart for oblique trees): every leaf of
    # every tree holds at least the fraction of its tree's total weight.
    X, y = _regression(4) if task == "regression" else _classification(4)
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=y.shape[0])
    cls = gf.ObliqueForestRegressor if task == "regression" else gf.ObliqueForestClassifier
    kw = {} if task == "regression" else {"criterion": task}
    forest = cls(n_estimators=5, splitter="random", min_weight_fraction_leaf=0.03,
                 random_state=0, **kw).fit(X, y, sample_weight=w)  # fmt: skip
    leaves = forest.apply()
    for t in range(len(forest.trees_)):
        weight = w * forest.inbag_counts_[:, t]
        per_leaf = np.bincount(leaves[:, t], weights=weight)
        in_tree = np.unique(leaves[forest.inbag_counts_[:, t] > 0, t])
        assert per_leaf[in_tree].min() >= 0.03 * weight.sum() * (1 - 1e-12)


def test_limits_follow_class_weight_as_in_sklearn():
    _compare_with_sklearn("gini", 3, {"min_impurity_decrease": 0.02}, class_weight="balanced")
    _compare_with_sklearn("entropy", 3, {"max_leaf_nodes": 5}, class_weight={0: 1, 1: 3, 2: 1})


def _best_first_reference_splits(tree, max_leaves):
    """The nodes a best-first builder splits (heapq; ties to the smaller node id)."""
    split = set()
    frontier = [(-tree.gain[0], 0)] if tree.left[0] >= 0 else []
    leaves = 1
    while frontier and leaves < max_leaves:
        _, node = heapq.heappop(frontier)
        split.add(int(node))
        leaves += 1
        for child in (tree.left[node], tree.right[node]):
            if tree.left[child] >= 0:
                heapq.heappush(frontier, (-tree.gain[child], child))
    return split


def _best_first_reference(tree, max_leaves):
    """The grown ``tree`` cut best first, as ``(left, right, threshold, value)``
    renumbered in pre-order."""
    split = _best_first_reference_splits(tree, max_leaves)
    left, right, threshold, value = [], [], [], []

    def visit(node):
        me = len(left)
        left.append(-1)
        right.append(-1)
        threshold.append(np.nan)
        value.append(tree.value[node])
        if node in split:
            threshold[me] = tree.threshold[node]
            left[me] = visit(tree.left[node])
            right[me] = visit(tree.right[node])
        return me

    visit(0)
    return np.array(left), np.array(right), np.array(threshold), np.array(value)


def _random_preorder_tree(rng, n_splits):
    """``(left, right, gain)`` of a random binary tree numbered in pre-order, with
    gains from {1, 2, 3} (many exact ties)."""
    left, right, gain = [], [], []

    def build(budget):
        me = len(left)
        left.append(-1)
        right.append(-1)
        gain.append(np.nan)
        if budget > 0:
            gain[me] = float(rng.integers(1, 4))
            share = int(rng.integers(0, budget))
            left[me] = build(share)
            right[me] = build(budget - 1 - share)
        return me

    build(n_splits)
    return np.array(left), np.array(right), np.array(gain)


@pytest.mark.parametrize("seed", range(5))
def test_best_first_order_breaks_equal_gains_by_node_id(seed):
    rng = np.random.default_rng(seed)
    left, right, gain = _random_preorder_tree(rng, 40)
    tree = SimpleNamespace(left=left, right=right, gain=gain)
    for max_leaves in (2, 5, 12, 30, 100):
        split = best_first_splits(left, right, gain, left.shape[0], max_leaves)
        expected = _best_first_reference_splits(tree, max_leaves)
        assert set(np.flatnonzero(split)) == expected


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda **kw: gf.ObliqueForestClassifier(**kw), _classification),
        (lambda **kw: gf.ObliqueForestRegressor(**kw), _regression),
        (lambda **kw: gf.ManifoldForestRegressor(image_shape=(2, 5), **kw), _regression),
    ],
)
def test_forest_trees_are_the_unlimited_trees_cut_best_first(make, data):
    X, y = data(5)
    full = make(n_estimators=6, random_state=1).fit(X, y)
    for max_leaves in (2, 7, 30):
        cut = make(n_estimators=6, random_state=1, max_leaf_nodes=max_leaves).fit(X, y)
        for grown, tree in zip(full.trees_, cut.trees_, strict=True):
            left, right, threshold, value = _best_first_reference(grown, max_leaves)
            assert tree.n_leaves == min(max_leaves, grown.n_leaves)
            np.testing.assert_array_equal(tree.left, left)
            np.testing.assert_array_equal(tree.right, right)
            np.testing.assert_array_equal(tree.threshold, threshold)
            np.testing.assert_array_equal(tree.value, value)
            assert tree.proj_ptr[-1] == tree.proj_idx.shape[0] == tree.proj_weight.shape[0]
            assert np.all(np.diff(tree.proj_ptr)[tree.left == -1] == 0)
        # The training leaves the fit kept are those a walk down the cut trees finds.
        np.testing.assert_array_equal(cut.apply(), cut.apply(X))
        np.testing.assert_array_equal(
            cut.inbag_counts_, make(n_estimators=6, random_state=1).fit(X, y).inbag_counts_
        )


def test_defaults_leave_the_trees_unchanged():
    X, y = _regression(2)
    a = gf.ObliqueForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    b = gf.ObliqueForestRegressor(
        n_estimators=4, random_state=0, max_leaf_nodes=None, min_impurity_decrease=0.0,
        min_weight_fraction_leaf=0.0,
    ).fit(X, y)  # fmt: skip
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for field in ta._fields:
            np.testing.assert_array_equal(getattr(ta, field), getattr(tb, field))


@pytest.mark.parametrize(
    "params",
    [
        {"max_leaf_nodes": 1},
        {"max_leaf_nodes": 0},
        {"min_impurity_decrease": -0.1},
        {"min_weight_fraction_leaf": 0.6},
        {"min_weight_fraction_leaf": -0.1},
    ],
)
def test_bad_limits_are_refused(params):
    X, y = _classification(0)
    with pytest.raises(ValueError, match=next(iter(params))):
        gf.ObliqueForestClassifier(n_estimators=2, **params).fit(X, y)
