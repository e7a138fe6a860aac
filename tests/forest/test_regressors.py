"""Regression forests (SPORF / MORF with the squared-error criterion) against scikit-learn
and brute force: single axis trees are scikit-learn's CART, predictions are means of leaf
means, weights act as repeated rows, and the forest is the same for any n_jobs or row
order."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import DataConversionWarning
from sklearn.tree import DecisionTreeRegressor

import geoforest as gf


def _one_axis_tree(**kw):
    """One tree on every row (no bootstrap) with every feature a candidate: CART."""
    return gf.ObliqueForestRegressor(
        n_estimators=1, projection="axis", max_features=None, bootstrap=False, random_state=0,
        **kw,
    )  # fmt: skip


def _friedman(n, seed, noise=1.0):
    X, y = make_friedman1(n, noise=noise, random_state=seed)
    return X.astype(np.float32).astype(np.float64), y


@pytest.mark.parametrize("seed", range(4))
def test_axis_tree_is_sklearn_cart(seed):
    X, y = _friedman(150, seed)
    Xt, _ = _friedman(300, seed + 10)
    for depth in (1, 3):
        ours = _one_axis_tree(max_depth=depth).fit(X, y)
        ref = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X.astype(np.float32), y)
        t = ours.trees_[0]
        assert t.proj_idx[0] == ref.tree_.feature[0]
        assert t.threshold[0] == pytest.approx(ref.tree_.threshold[0], rel=1e-6)
        assert t.n_leaves == ref.get_n_leaves()
        np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt.astype(np.float32)))
    # The root's gain is scikit-learn's weighted decrease of the squared error, times n.
    ref = DecisionTreeRegressor(max_depth=1).fit(X.astype(np.float32), y)
    imp, nw = ref.tree_.impurity, ref.tree_.weighted_n_node_samples
    expected = nw[0] * imp[0] - nw[1] * imp[1] - nw[2] * imp[2]
    assert ours.trees_[0].gain[0] == pytest.approx(expected, rel=1e-9)


def test_full_axis_tree_fits_the_training_targets_and_matches_sklearn_importances():
    X, y = _friedman(200, 0)
    # Depth-limited: Friedman's sin(pi x0 x1) is symmetric in x0 and x1, so deep
    # small nodes can tie between them up to rounding, broken differently.
    ours = _one_axis_tree(importance="impurity", max_depth=3).fit(X, y)
    ref = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, atol=1e-9)
    full = _one_axis_tree().fit(X, y)
    np.testing.assert_allclose(full.predict(X), y)  # distinct rows: one row per leaf


def test_targets_far_from_zero_are_cut_as_centred_ones():
    # Squared-error sums of targets near 1e9 would lose every digit of the variance
    # without centring on the node mean; the trees must not depend on the shift.
    X, y = _friedman(200, 1)
    a = _one_axis_tree(max_depth=5).fit(X, y)
    b = _one_axis_tree(max_depth=5).fit(X, y + 1e9)
    for field in ("left", "proj_idx", "threshold"):
        np.testing.assert_array_equal(getattr(a.trees_[0], field), getattr(b.trees_[0], field))
    np.testing.assert_allclose(b.predict(X) - 1e9, a.predict(X), atol=1e-5)


def test_forest_r2_matches_sklearn_random_forest():
    X, y = _friedman(1600, 2)
    Xtr, ytr, Xte, yte = X[:600], y[:600], X[600:], y[600:]
    ours = gf.ObliqueForestRegressor(n_estimators=50, projection="axis", random_state=0)
    ref = RandomForestRegressor(n_estimators=50, random_state=0)
    r2_ours = ours.fit(Xtr, ytr).score(Xte, yte)
    r2_ref = ref.fit(Xtr, ytr).score(Xte, yte)
    assert r2_ours > 0.75
    assert abs(r2_ours - r2_ref) < 0.02
    sporf = gf.ObliqueForestRegressor(n_estimators=50, random_state=0).fit(Xtr, ytr)
    assert sporf.score(Xte, yte) > r2_ref - 0.02


def test_predict_is_the_mean_of_in_bag_leaf_means():
    X, y = _friedman(120, 3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=120)
    reg = gf.ObliqueForestRegressor(n_estimators=6, max_depth=4, random_state=0)
    reg.fit(X, y, sample_weight=w)
    train_leaves, query_leaves = reg.apply(), reg.apply(X[:25])
    expected = np.zeros(25)
    for t in range(6):
        # Each leaf's mean target over the tree's in-bag rows, weighted by draws x weight.
        bag = reg.inbag_counts_[:, t] * w
        for i, leaf in enumerate(query_leaves[:, t]):
            here = train_leaves[:, t] == leaf
            expected[i] += np.sum(bag[here] * y[here]) / np.sum(bag[here])
    np.testing.assert_allclose(reg.predict(X[:25]), expected / 6, rtol=1e-10)


def test_multi_output_and_the_shape_of_y():
    X, y = _friedman(200, 4)
    Y = np.column_stack([y, -3.0 * y + 1.0])
    reg = gf.ObliqueForestRegressor(n_estimators=8, random_state=0).fit(X, Y)
    assert reg.n_outputs_ == 2 and reg.predict(X[:5]).shape == (5, 2)
    assert reg.trees_[0].value.shape[1] == 2
    # The second output is an affine function of the first: so are the leaf means.
    P = reg.predict(X)
    np.testing.assert_allclose(P[:, 1], -3.0 * P[:, 0] + 1.0, rtol=1e-9, atol=1e-9)
    single = gf.ObliqueForestRegressor(n_estimators=8, random_state=0)
    assert single.fit(X, y).predict(X[:5]).shape == (5,)
    # A column vector is one output, as in scikit-learn: flattened with its warning.
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        single.fit(X, y[:, None])
    assert single.n_outputs_ == 1 and single.predict(X[:5]).shape == (5,)


def test_integer_weights_equal_duplicated_rows():
    # One feature: no gain ties between features, which the random feature order
    # (depending on the number of rows) would break differently.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 1))
    y = X[:, 0] ** 2 + 0.3 * rng.normal(size=40)
    w = rng.integers(1, 4, size=40)
    a = _one_axis_tree().fit(X, y, sample_weight=w)
    b = _one_axis_tree().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    ta, tb = a.trees_[0], b.trees_[0]
    np.testing.assert_array_equal(ta.left, tb.left)
    np.testing.assert_array_equal(ta.threshold, tb.threshold)
    np.testing.assert_allclose(ta.value, tb.value)
    np.testing.assert_allclose(a.predict(X), b.predict(X))


@pytest.mark.parametrize("cls", ["sporf", "morf"])
def test_same_forest_for_any_n_jobs_and_row_order(cls):
    X, _ = gf.datasets.make_impulse_signal(150, random_state=0)
    y = X[:, 40:60].sum(axis=1)
    Xt, _ = gf.datasets.make_impulse_signal(50, random_state=1)

    def make(n_jobs):
        if cls == "sporf":
            return gf.ObliqueForestRegressor(n_estimators=6, n_jobs=n_jobs, random_state=4)
        return gf.ManifoldForestRegressor(
            image_shape=(100,), max_patch_shape=5, n_estimators=6, n_jobs=n_jobs, random_state=4
        )

    a = make(1).fit(X, y)
    b = make(2).fit(X, y)
    perm = np.random.default_rng(0).permutation(len(y))
    c = make(1).fit(X[perm], y[perm])
    for other in (b, c):
        for ta, tb in zip(a.trees_, other.trees_, strict=True):
            np.testing.assert_array_equal(ta.proj_idx, tb.proj_idx)
            np.testing.assert_array_equal(ta.threshold, tb.threshold)
            np.testing.assert_array_equal(ta.value, tb.value)
        np.testing.assert_array_equal(a.predict(Xt), other.predict(Xt))


def test_patches_find_the_signal_window():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 64))
    y = X[:, 18:22].sum(axis=1)  # a 4-pixel window of an 8 x 8 image (row 2, cols 2-5)
    reg = gf.ManifoldForestRegressor(image_shape=(8, 8), n_estimators=20, random_state=0)
    reg.fit(X, y)
    top = np.argsort(reg.feature_importances_)[-4:]
    assert set(top) == {18, 19, 20, 21}


def test_merged_regressors_average_all_trees():
    X, y = _friedman(100, 5)
    a = gf.ObliqueForestRegressor(n_estimators=4, random_state=1).fit(X, y)
    b = gf.ObliqueForestRegressor(n_estimators=6, random_state=2).fit(X, y)
    merged = gf.merge_forests(a, b)
    np.testing.assert_allclose(merged.predict(X), (4 * a.predict(X) + 6 * b.predict(X)) / 10)
    other = gf.ObliqueForestRegressor(n_estimators=2, random_state=3).fit(X, y + 1.0)
    with pytest.raises(ValueError, match="same labels and sample weights"):
        gf.merge_forests(a, other)


@pytest.mark.filterwarnings("ignore:every feature of X is constant:UserWarning")
@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        (np.zeros((1, 3)), np.zeros(1), "at least 2 samples"),
        (np.ones((5, 2)), np.array([0.0, 1.0, np.nan, 2.0, 3.0]), "NaN"),
        (np.ones((5, 2)), np.zeros(4), "inconsistent numbers of samples"),
        (np.ones((5, 2)), np.array(["a", "b", "c", "d", "e"]), "convert"),
    ],
)
def test_bad_input_raises(X, y, match):
    with pytest.raises(ValueError, match=match):
        gf.ObliqueForestRegressor(n_estimators=2).fit(X, y)


def test_constant_targets_give_one_leaf_per_tree():
    X = np.random.default_rng(0).normal(size=(30, 3))
    reg = gf.ObliqueForestRegressor(n_estimators=3, random_state=0).fit(X, np.full(30, 2.5))
    assert all(t.n_nodes == 1 for t in reg.trees_)
    np.testing.assert_array_equal(reg.predict(X), 2.5)


# ------------------------------------------------------------ out of bag
def _oob_recount(forest, X, y_shape_table):
    """Brute-force out-of-bag means: each row walked down (as a new point) every tree
    whose sample left it out, the tree's leaf table read, averaged over those trees."""
    n = X.shape[0]
    out = np.zeros((n, y_shape_table))
    count = np.zeros(n)
    for i in range(n):
        leaves = forest.apply(X[i : i + 1])[0]
        for t, tree in enumerate(forest.trees_):
            if forest.inbag_counts_[i, t] == 0:
                v = tree.value[leaves[t]]
                out[i] += v / v.sum() if hasattr(forest, "classes_") else v
                count[i] += 1
    return out / np.maximum(count, 1)[:, None], count


@pytest.mark.parametrize("outputs", [1, 2])
def test_oob_prediction_is_the_brute_force_recount(outputs):
    X, y = _friedman(150, 6)
    Y = y if outputs == 1 else np.column_stack([y, np.sin(y)])
    reg = gf.ObliqueForestRegressor(n_estimators=12, oob_score=True, random_state=0).fit(X, Y)
    expected, count = _oob_recount(reg, X, outputs)
    assert count.min() >= 1
    np.testing.assert_allclose(reg.oob_prediction_, expected if outputs == 2 else expected[:, 0])
    from sklearn.metrics import r2_score

    assert reg.oob_score_ == pytest.approx(r2_score(Y, reg.oob_prediction_))
    # A callable scores the same predictions.
    mae = gf.ObliqueForestRegressor(
        n_estimators=12, random_state=0, oob_score=lambda a, b: float(np.mean(np.abs(a - b)))
    ).fit(X, Y)
    assert mae.oob_score_ == pytest.approx(np.mean(np.abs(Y - reg.oob_prediction_)))


def test_oob_classifier_is_the_brute_force_recount_and_close_to_sklearn():
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(300, 8, n_informative=4, n_classes=3, random_state=0)
    clf = gf.ObliqueForestClassifier(n_estimators=15, oob_score=True, random_state=0)
    clf.fit(X, y + 5)
    expected, _ = _oob_recount(clf, X, 3)
    np.testing.assert_allclose(clf.oob_decision_function_, expected)
    pred = clf.classes_[np.argmax(expected, axis=1)]
    assert clf.oob_score_ == pytest.approx(np.mean(pred == y + 5))
    ref = RandomForestClassifier(100, oob_score=True, random_state=0).fit(X, y)
    big = gf.ObliqueForestClassifier(100, projection="axis", oob_score=True, random_state=0)
    assert abs(big.fit(X, y).oob_score_ - ref.oob_score_) < 0.05


def test_oob_needs_left_out_rows_and_warns_like_sklearn():
    X, y = _friedman(60, 7)
    with pytest.raises(ValueError, match="out-of-bag estimates need rows left out"):
        gf.ObliqueForestRegressor(n_estimators=3, bootstrap=False, oob_score=True).fit(X, y)
    sub = gf.ObliqueForestRegressor(
        n_estimators=8, bootstrap=False, max_samples=0.5, oob_score=True, random_state=0
    ).fit(X, y)  # subsampling without replacement leaves rows out too
    assert np.isfinite(sub.oob_score_)
    with pytest.warns(UserWarning, match="Some inputs do not have OOB scores"):
        gf.ObliqueForestRegressor(n_estimators=1, oob_score=True, random_state=0).fit(X, y)
    plain = gf.ObliqueForestRegressor(n_estimators=2, random_state=0).fit(X, y)
    assert not hasattr(plain, "oob_score_")


# ------------------------------------------------------------ random cuts
def test_axis_random_cuts_are_extra_trees():
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    X, y = _friedman(1600, 8)
    Xtr, ytr, Xte, yte = X[:600], y[:600], X[600:], y[600:]
    ours = gf.ObliqueForestRegressor(
        n_estimators=60, projection="axis", splitter="random", bootstrap=False, random_state=0
    ).fit(Xtr, ytr)
    ref = ExtraTreesRegressor(60, random_state=0).fit(Xtr, ytr)
    assert abs(ours.score(Xte, yte) - ref.score(Xte, yte)) < 0.02
    # Fully grown on distinct rows, as extra trees are: every training target is fitted.
    np.testing.assert_allclose(ours.predict(Xtr), ytr)
    from sklearn.datasets import make_classification

    Xc, yc = make_classification(1200, 10, n_informative=5, random_state=1)
    clf = gf.ObliqueForestClassifier(
        n_estimators=60, projection="axis", splitter="random", bootstrap=False, random_state=0
    ).fit(Xc[:400], yc[:400])
    ref_c = ExtraTreesClassifier(60, random_state=0).fit(Xc[:400], yc[:400])
    assert abs(clf.score(Xc[400:], yc[400:]) - ref_c.score(Xc[400:], yc[400:])) < 0.03


@pytest.mark.parametrize("min_leaf", [1, 4])
def test_random_cut_trees_partition_validly_and_reproducibly(min_leaf):
    X, y = _friedman(300, 9)
    make = lambda n_jobs: gf.ObliqueForestRegressor(  # noqa: E731
        n_estimators=4, splitter="random", min_samples_leaf=min_leaf, n_jobs=n_jobs,
        random_state=3,
    )  # fmt: skip
    a = make(1).fit(X, y)
    perm = np.random.default_rng(0).permutation(300)
    b = make(2).fit(X[perm], y[perm])
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        assert ta.n_node_samples[ta.left == -1].min() >= min_leaf
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_zero_weight_rows_are_never_drawn():
    # Issue 44: a tree whose bootstrap held only zero-weight rows predicted 0 and
    # was averaged in (one nonzero weight, 20 trees: 0.85 where the answer is 1.42).
    X, y = _friedman(60, 4)
    w = np.zeros(60)
    w[11] = 1.0
    reg = gf.ObliqueForestRegressor(n_estimators=20, oob_score=True, random_state=0)
    with pytest.warns(UserWarning, match="do not have OOB"):  # row 11 is in every sample
        reg.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(reg.predict(X), y[11], rtol=1e-12)
    np.testing.assert_allclose(np.delete(reg.oob_prediction_, 11), y[11], rtol=1e-12)
    assert (reg.inbag_counts_[np.arange(60) != 11] == 0).all()
    # Mostly zero weights, without bootstrap: only the weighted rows are drawn,
    # predictions stay within their targets, RF-GAP rows are finite and sum to 1.
    w = np.where(np.arange(60) % 5 == 0, 1.5, 0.0)
    reg = gf.ObliqueForestRegressor(n_estimators=5, bootstrap=False, random_state=0)
    reg.fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(reg.inbag_counts_ > 0, (w > 0)[:, None].repeat(5, 1))
    pred = reg.predict(X)
    held = y[w > 0]
    assert held.min() <= pred.min() and pred.max() <= held.max()
    P = reg.proximity(X, method="rfgap")
    assert np.isfinite(P.data).all()
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0)


@pytest.mark.parametrize("scale", [1e39, 1e170])
def test_targets_beyond_float32_are_refused(scale):
    # Issue 44: y around 1e170 gave one-leaf stumps with only numpy's cast warning.
    X, y = _friedman(30, 3)
    with pytest.raises(ValueError, match="y holds values too large"):
        gf.ObliqueForestRegressor(n_estimators=2).fit(X, y * scale)
    reg = gf.ObliqueForestRegressor(n_estimators=4, random_state=0).fit(X, y * 1e30)
    assert reg.trees_[0].left.shape[0] > 1  # large but within range: real trees
