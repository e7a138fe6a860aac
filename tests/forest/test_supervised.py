"""Classification forests (SPORF, MORF) against brute force and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

import geoforest as gf
from geoforest._engine.splits import ENTROPY, GINI, best_class_cut


# ---------------------------------------------------------------- split rules
def brute_impurity(counts, rule):
    w = counts.sum()
    if w <= 0:
        return 0.0
    p = counts / w
    if rule == GINI:
        return w * (1.0 - np.sum(p * p))
    nz = p[p > 0]
    return -w * np.sum(nz * np.log2(nz))


def brute_gains(z, ys, ws, n_classes, rule, min_leaf, cs=None):
    """Gain of every valid cut (dict pos -> gain), by direct counting.

    ``cs`` are the samples' multiplicities (default one each): a side must
    hold ``min_leaf`` samples counted with them.
    """
    cs = np.ones(len(z), dtype=np.int64) if cs is None else cs
    parent = brute_impurity(np.bincount(ys, ws, minlength=n_classes), rule)
    gains = {}
    for pos in range(1, len(z)):
        if cs[:pos].sum() < min_leaf or cs[pos:].sum() < min_leaf:
            continue
        if not z[pos - 1] < z[pos]:
            continue
        left = np.bincount(ys[:pos], ws[:pos], minlength=n_classes)
        right = np.bincount(ys[pos:], ws[pos:], minlength=n_classes)
        if left.sum() <= 0 or right.sum() <= 0:
            continue
        gains[pos] = parent - brute_impurity(left, rule) - brute_impurity(right, rule)
    return gains


@pytest.mark.parametrize("rule", [GINI, ENTROPY])
@pytest.mark.parametrize("seed", range(6))
def test_impurity_cut_matches_brute_force(rule, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    n_classes = int(rng.integers(2, 5))
    z = np.sort(rng.integers(0, n // 2 + 2, size=n).astype(np.float64))  # many ties
    ys = rng.integers(0, n_classes, size=n).astype(np.int32)
    ws = rng.choice([0.5, 1.0, 2.0, 3.0], size=n) if seed % 2 else np.ones(n)
    min_leaf = int(rng.integers(1, 6))
    scratch = np.empty(2 * n_classes)
    # Bootstrap multiplicities (weights scale with them, as the builder passes them).
    cs = rng.integers(1, 4, size=n).astype(np.int32) if seed >= 3 else np.ones(n, np.int32)
    ws = ws * cs
    pos, score, gain = best_class_cut(rule, z, ys, ws, cs, n, n_classes, min_leaf, 0.0, scratch)
    gains = brute_gains(z, ys, ws, n_classes, rule, min_leaf, cs)
    if not gains:
        assert pos == -1
        return
    best = max(gains.values())
    assert pos in gains
    assert gain == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert gains[pos] == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert score == gain
    # The first of the (numerically) best cuts, as a left-to-right scan finds it.
    first = min(p for p, g in gains.items() if g >= best - 1e-9 * max(1.0, abs(best)))
    assert pos == first


def test_impurity_cut_of_a_pure_or_constant_node():
    z = np.arange(6, dtype=np.float64)
    ones = np.ones(6, dtype=np.int32)
    pos, _, gain = best_class_cut(
        GINI, z, np.zeros(6, np.int32), np.ones(6), ones, 6, 2, 1, 0.0, np.empty(4)
    )
    assert gain == 0.0 and pos == 1
    pos, _, _ = best_class_cut(
        GINI,
        np.ones(6),
        np.arange(6, dtype=np.int32) % 2,
        np.ones(6),
        ones,
        6,
        2,
        1,
        0.0,
        np.empty(4),
    )
    assert pos == -1


# ------------------------------------------------- axis trees against sklearn
def _one_axis_tree(criterion, **kw):
    return gf.ObliqueForestClassifier(
        n_estimators=1,
        projection="axis",
        criterion=criterion,
        max_features=None,
        bootstrap=False,
        random_state=0,
        **kw,
    )


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", range(4))
def test_axis_stump_is_sklearn_best_split(criterion, seed):
    X, y = make_classification(
        120, 6, n_informative=3, n_classes=3, n_clusters_per_class=1, random_state=seed
    )
    X = X.astype(np.float32)
    for depth in (1, 2):
        ours = _one_axis_tree(criterion, max_depth=depth).fit(X, y)
        ref = DecisionTreeClassifier(criterion=criterion, max_depth=depth, random_state=0).fit(X, y)
        t = ours.trees_[0]
        assert t.proj_idx[0] == ref.tree_.feature[0]
        assert t.threshold[0] == pytest.approx(ref.tree_.threshold[0], rel=1e-6)
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    # Root gain = sklearn's weighted impurity decrease times n.
    ref = DecisionTreeClassifier(criterion=criterion, max_depth=1).fit(X, y)
    imp = ref.tree_.impurity
    nw = ref.tree_.weighted_n_node_samples
    expected = nw[0] * imp[0] - nw[1] * imp[1] - nw[2] * imp[2]
    assert ours.trees_[0].gain[0] == pytest.approx(expected, rel=1e-9)


def test_axis_tree_matches_sklearn_importances():
    X, y = make_classification(200, 5, n_informative=3, n_redundant=0, random_state=1)
    # Depth-limited: deep small nodes have exact gain ties between features,
    # which each library breaks by its own random feature order.
    ours = _one_axis_tree("gini", importance="impurity", max_depth=3).fit(X, y)
    ref = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X.astype(np.float32), y)
    assert ours.trees_[0].n_leaves == ref.get_n_leaves()
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, atol=1e-9)
    full = _one_axis_tree("gini").fit(X, y)
    ref = DecisionTreeClassifier(random_state=0).fit(X.astype(np.float32), y)
    assert np.all(full.predict(X) == y)
    Xt, _ = make_classification(500, 5, n_informative=3, n_redundant=0, random_state=2)
    assert np.mean(full.predict(Xt) == ref.predict(Xt.astype(np.float32))) > 0.85


def test_axis_forest_accuracy_matches_sklearn_random_forest():
    X, y = make_classification(1200, 10, n_informative=4, random_state=3)
    Xtr, ytr, Xte, yte = X[:400], y[:400], X[400:], y[400:]
    ours = gf.ObliqueForestClassifier(n_estimators=50, projection="axis", random_state=0)
    ref = RandomForestClassifier(n_estimators=50, random_state=0)
    acc_ours = np.mean(ours.fit(Xtr, ytr).predict(Xte) == yte)
    acc_ref = np.mean(ref.fit(Xtr, ytr).predict(Xte) == yte)
    assert acc_ours > 0.85
    assert abs(acc_ours - acc_ref) < 0.03


# ------------------------------------------------------ weights and invariance
def test_integer_weights_equal_duplicated_rows():
    # One feature, so no gain ties between features (broken by the tree's random
    # feature order, which depends on the number of rows drawn).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 1))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    w = rng.integers(1, 4, size=40)
    a = _one_axis_tree("gini").fit(X, y, sample_weight=w)
    b = _one_axis_tree("gini").fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    ta, tb = a.trees_[0], b.trees_[0]
    np.testing.assert_array_equal(ta.left, tb.left)
    np.testing.assert_array_equal(ta.proj_idx, tb.proj_idx)
    np.testing.assert_array_equal(ta.threshold, tb.threshold)
    np.testing.assert_allclose(ta.value, tb.value)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("min_leaf", [1, 3])
@pytest.mark.parametrize("kind", ["patch", "sparse"])
def test_bootstrap_counts_grow_the_tree_of_the_repeated_rows(kind, min_leaf):
    # The builder takes each drawn row once with its bootstrap count; the tree
    # must be the one grown on the sample with its repeats listed out.
    from geoforest._engine.builder import EngineConfig, TreeLimits, build_tree
    from geoforest._engine.projections import PATCH, SPARSE, max_nonzeros, patch_params
    from geoforest._engine.rng import make_state

    X, y = gf.datasets.make_bars(300, image_size=8, mean_bars=3, random_state=1)
    X = X + 0.1 * np.random.default_rng(0).integers(0, 3, size=X.shape)  # few levels
    y = y.astype(np.int32)
    if kind == "patch":
        proj, params = PATCH, patch_params((8, 8), (1, 1), (3, 3), False, 64)
    else:
        proj, params = SPARSE, np.array([1.5])
    nnz = max_nonzeros(proj, params, 64)
    samples = np.sort(np.random.default_rng(2).integers(0, 300, size=300))
    counts = np.bincount(samples, minlength=300).astype(np.int32)
    rows = np.flatnonzero(counts)
    weight = np.ones(300)
    common = (
        EngineConfig(proj, params, nnz, GINI, np.zeros(1), 8).typed(),
        TreeLimits(2, min_leaf, -1, -np.inf),
    )
    for layout in (np.ascontiguousarray, np.asfortranarray):
        Xl = layout(X.astype(np.float32))
        repeated, rows_r, leaf_r = build_tree(
            Xl,
            samples,
            *common,
            make_state(5),
            y,
            np.zeros((0, 0)),
            weight,
            np.ones(300, np.int32),
            2,
            None,
            None,
        )
        once, rows_o, leaf_o = build_tree(
            Xl,
            rows,
            *common,
            make_state(5),
            y,
            np.zeros((0, 0)),
            weight * counts,
            counts,
            2,
            None,
            None,
        )
        for a, b in zip(repeated, once, strict=True):
            np.testing.assert_array_equal(a, b)
        assert repeated[0].shape[0] > 20  # a real tree
        # Every repeat of a row reached the leaf its single copy reached.
        leaf_of_row = dict(zip(rows_o, leaf_o, strict=True))
        assert sorted(rows_o) == list(rows) and sorted(rows_r) == list(samples)
        assert all(leaf_of_row[r] == lf for r, lf in zip(rows_r, leaf_r, strict=True))


def test_column_major_projection_and_duplicate_check_match_row_major():
    from geoforest._engine.nodes import all_rows_equal as _all_rows_equal
    from geoforest._engine.projections import project_samples

    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(50, 12)).astype(np.float32) / 3
    idx = np.array([3, 0, 7, 11, 5], dtype=np.int32)
    w = rng.normal(size=5).astype(np.float32)
    rows = np.array([1, 4, 4, 9, 30, 49])
    # float32 products summed in float64 from 0.0, in the stored order (project_samples)
    expected = np.array([sum(float(w[q] * X[r, idx[q]]) for q in range(5)) for r in rows[1:5]])
    for layout in (np.ascontiguousarray, np.asfortranarray):
        out = np.empty(4)
        project_samples(layout(X), rows, 1, 5, idx, w, 0, 5, out)
        np.testing.assert_array_equal(out, expected)
    same = np.repeat(X[:1], 6, axis=0)
    same[5, 11] += 1.0
    for layout in (np.ascontiguousarray, np.asfortranarray):
        assert _all_rows_equal(layout(same), np.arange(6), 0, 5)
        assert not _all_rows_equal(layout(same), np.arange(6), 0, 6)
        assert _all_rows_equal(layout(X), rows, 1, 3)  # row 4 twice
        assert not _all_rows_equal(layout(X), rows, 2, 4)


def test_zero_weight_samples_do_not_vote():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    clf = _one_axis_tree("gini").fit(X, y, sample_weight=[1, 1, 0, 1])
    np.testing.assert_allclose(clf.trees_[0].value[0], [2.0, 1.0])


@pytest.mark.parametrize("cls", ["sporf", "morf"])
def test_same_forest_for_any_n_jobs_and_row_order(cls):
    X, y = gf.datasets.make_impulse_signal(150, random_state=0)
    Xt, _ = gf.datasets.make_impulse_signal(50, random_state=1)

    def make(n_jobs):
        if cls == "sporf":
            return gf.ObliqueForestClassifier(n_estimators=6, n_jobs=n_jobs, random_state=4)
        return gf.ManifoldForestClassifier(
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
        np.testing.assert_array_equal(a.predict_proba(Xt), other.predict_proba(Xt))
    np.testing.assert_array_equal(a.apply(X)[perm], c.apply(X[perm]))


# ------------------------------------------------------------ the estimators
def test_predict_proba_is_the_mean_of_leaf_distributions():
    X, y = make_classification(150, 6, n_classes=3, n_informative=4, random_state=0)
    clf = gf.ObliqueForestClassifier(
        n_estimators=5, max_depth=3, random_state=0, criterion="entropy"
    ).fit(X, y + 10)
    leaves = clf.apply(X[:20])
    expected = np.zeros((20, 3))
    for t, tree in enumerate(clf.trees_):
        v = tree.value[leaves[:, t]]
        expected += v / v.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(X[:20]), expected / 5)
    assert set(clf.predict(X)) <= {10, 11, 12}
    np.testing.assert_array_equal(clf.classes_, [10, 11, 12])


def test_count_importance_counts_split_nodes_per_feature():
    X, y = gf.datasets.make_circle_segments(120, random_state=0)
    clf = gf.ManifoldForestClassifier(
        image_shape=(100,), max_patch_shape=6, wrap=True, n_estimators=4, random_state=0
    ).fit(X, y)
    counts = np.zeros(100)
    for tree in clf.trees_:
        for node in range(tree.n_nodes):
            if tree.left[node] != -1:
                for f in tree.proj_idx[tree.proj_ptr[node] : tree.proj_ptr[node + 1]]:
                    counts[f] += 1
    np.testing.assert_allclose(clf.feature_importances_, counts / counts.sum())
    clf.set_params(importance="impurity")
    imp = clf.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and np.all(imp >= 0)


def test_classifier_kernels_and_neighbours():
    X, y = gf.datasets.make_impulse_signal(80, random_state=0)
    clf = gf.ObliqueForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    P = clf.proximity(dense=True)
    np.testing.assert_allclose(np.diag(P), 1.0)
    dist, ind = clf.kneighbors(n_neighbors=5)
    assert ind.shape == (80, 5) and np.all(dist >= 0)
    # Supervised trees put same-class points together.
    assert np.mean(y[ind] == y[:, None]) > 0.9
    assert clf.transform(X).shape[0] == 80


def test_morf_beats_random_forest_on_the_circle():
    X, y = gf.datasets.make_circle_segments(300, random_state=0)
    Xt, yt = gf.datasets.make_circle_segments(1000, random_state=1)
    morf = gf.ManifoldForestClassifier(
        image_shape=(100,),
        max_patch_shape=15,
        wrap=True,
        max_features=40,
        n_estimators=30,
        random_state=0,
    )
    rf = gf.ObliqueForestClassifier(projection="axis", n_estimators=30, random_state=0)
    err_morf = np.mean(morf.fit(X, y).predict(Xt) != yt)
    err_rf = np.mean(rf.fit(X, y).predict(Xt) != yt)
    assert err_morf < err_rf - 0.2


@pytest.mark.parametrize(
    ("X", "y", "kw", "match"),
    [
        (np.array([[0.0, np.nan], [1.0, 2.0]]), [0, 1], {}, "NaN"),
        (np.zeros((0, 3)), [], {}, "0 sample"),
        (np.zeros((4, 3)), [0, 1, 0], {}, "inconsistent numbers of samples"),
        (np.arange(8.0).reshape(4, 2), [1, 1, 1, 1], {}, "only one class"),
        (np.arange(8.0).reshape(4, 2), [0.5, 1.5, 0.2, 0.1], {}, "Unknown label type"),
        (
            np.arange(8.0).reshape(4, 2),
            [0, 1, 0, 1],
            {"sample_weight": [1, -1, 1, 1]},
            "(?i)negative",
        ),
        (np.arange(8.0).reshape(4, 2), [0, 1, 0, 1], {"sample_weight": [0, 0, 0, 0]}, "non-zero"),
    ],
)
def test_bad_input_raises(X, y, kw, match):
    with pytest.raises(ValueError, match=match):
        gf.ObliqueForestClassifier(n_estimators=2).fit(X, y, **kw)


def test_predict_checks_n_features():
    X, y = gf.datasets.make_impulse_signal(30, random_state=0)
    clf = gf.ManifoldForestClassifier(image_shape=(100,), n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :50])


# ------------------------------------------------------------------- datasets
def _runs_on_circle(row):
    """Lengths of the runs of ones of a circular 0/1 vector."""
    n = row.size
    start = int(np.flatnonzero(row == 0)[0])
    r = np.roll(row, -start)
    runs, cur = [], 0
    for v in np.append(r, 0):
        if v:
            cur += 1
        elif cur:
            runs.append(cur)
            cur = 0
    assert sum(runs) == row.sum() and len(r) == n
    return sorted(runs)


def test_circle_segments():
    X, y = gf.datasets.make_circle_segments(200, random_state=0)
    assert X.shape == (200, 100) and np.bincount(y).tolist() == [100, 100]
    for row, label in zip(X, y, strict=True):
        assert _runs_on_circle(row) == ([5, 5] if label == 0 else [4, 6])
    # Segments start anywhere.
    assert X.sum(axis=0).min() > 0


def test_bars():
    X, y = gf.datasets.make_bars(100, random_state=0)
    imgs = X.reshape(-1, 28, 28)
    for img, label in zip(imgs, y, strict=True):
        lines = img if label == 0 else img.T  # rows of class 0, columns of class 1
        assert np.all(lines.min(axis=1) == lines.max(axis=1))
    k = np.array(
        [(img if lab == 0 else img.T)[:, 0].sum() for img, lab in zip(imgs, y, strict=True)]
    )
    assert 8 < k.mean() < 12


def test_bars_of_random_length():
    X, y = gf.datasets.make_bars(200, bar_length="random", random_state=0)
    lengths = []
    for img, label in zip(X.reshape(-1, 28, 28), y, strict=True):
        lines = img if label == 0 else img.T
        for line in lines:
            on = np.flatnonzero(line)
            if on.size:  # one run of at least two consecutive pixels per line
                assert on.size >= 2 and on[-1] - on[0] + 1 == on.size
                lengths.append(on.size)
    lengths = np.array(lengths)
    assert lengths.min() == 2 and lengths.max() == 28
    assert abs(lengths.mean() - 15.0) < 0.5  # U{2..28}
    with pytest.raises(ValueError, match="bar_length"):
        gf.datasets.make_bars(10, bar_length="half")


def test_impulse_signal():
    X, y = gf.datasets.make_impulse_signal(4000, random_state=0)
    diff = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    t = np.arange(100)
    truth = np.where(t >= 20, np.exp(-(t - 20.0)), 0.0)
    assert np.max(np.abs(diff - truth)) < 0.15
    assert abs(X[y == 0].std() - 1.0) < 0.02


def test_load_mnist35():
    bunch = gf.datasets.load_mnist35()
    assert bunch.data.shape == (1000, 784) and bunch.images.shape == (1000, 28, 28)
    assert np.bincount(bunch.target).tolist()[3::2] == [500, 500]
    assert bunch.data.min() == 0 and bunch.data.max() == 255
    assert "BSD" in bunch.license or "Redistribution" in bunch.license
    X, y = gf.datasets.load_mnist35(n_per_class=100, random_state=0, return_X_y=True)
    assert X.shape == (200, 784) and np.sum(y == 3) == 100
    # The class means differ where a 3 and a 5 differ (upper-left stroke of the 5).
    with pytest.raises(ValueError):
        gf.datasets.load_mnist35(n_per_class=501)


def test_merged_classifiers_average_all_trees():
    X, y = gf.datasets.make_impulse_signal(100, random_state=0)
    a = gf.ObliqueForestClassifier(n_estimators=4, random_state=1).fit(X, y)
    b = gf.ObliqueForestClassifier(n_estimators=6, random_state=2).fit(X, y)
    merged = gf.merge_forests(a, b)
    np.testing.assert_allclose(
        merged.predict_proba(X), (4 * a.predict_proba(X) + 6 * b.predict_proba(X)) / 10
    )
    np.testing.assert_array_equal(merged.classes_, a.classes_)
    c = gf.ObliqueForestClassifier(n_estimators=2, random_state=0).fit(X, y + 1)
    with pytest.raises(ValueError, match="same classes"):
        gf.merge_forests(a, c)
    # same classes, other labels: the merged model would vote with trees of other data
    flipped = gf.ObliqueForestClassifier(n_estimators=2, random_state=3).fit(X, y[::-1])
    with pytest.raises(ValueError, match="same labels and sample weights"):
        gf.merge_forests(a, flipped)
    weighted = gf.ObliqueForestClassifier(n_estimators=2, random_state=3).fit(
        X, y, sample_weight=np.arange(1, X.shape[0] + 1)
    )
    with pytest.raises(ValueError, match="same labels and sample weights"):
        gf.merge_forests(a, weighted)


def test_sort_pairs_against_numpy():
    from geoforest._engine.sorting import sort_pairs

    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 15, 17, 200, 3000):
        for z in (
            rng.normal(size=n),
            rng.integers(0, 3, n).astype(float),  # few distinct values
            np.ones(n),
            np.arange(n, dtype=float)[::-1].copy(),
        ):
            a = z.copy()
            idx = np.arange(n, dtype=np.int64)
            sort_pairs(a, idx, n)
            np.testing.assert_array_equal(a, np.sort(z))
            np.testing.assert_array_equal(z[idx], a)
            np.testing.assert_array_equal(np.sort(idx), np.arange(n))


@pytest.mark.parametrize("cls", [gf.ObliqueForestClassifier, gf.ManifoldForestClassifier])
def test_classifiers_warn_on_all_identical_rows_like_the_unsupervised_forests(cls):
    """Issue 23: the classifiers were silent where the unsupervised forests warn."""
    X = np.ones((20, 4))
    y = np.arange(20) % 2
    kw = {"image_shape": (2, 2)} if cls is gf.ManifoldForestClassifier else {}
    with pytest.warns(UserWarning, match="every feature of X is constant"):
        cls(n_estimators=3, random_state=0, **kw).fit(X, y)


@pytest.mark.parametrize("cls", [gf.UnsupervisedForest, gf.ObliqueForestClassifier])
def test_n_jobs_zero_is_refused_at_validation(cls):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="'n_jobs' parameter"):
        cls(n_jobs=0).fit(X, np.arange(20) % 2)


# ------------------------------------------------------------ class weights
@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 3.0, 2: 0.5}])
def test_class_weight_is_sample_weight_per_class(class_weight):
    from sklearn.utils.class_weight import compute_sample_weight

    X, y = make_classification(
        200, 5, n_informative=3, n_classes=3, weights=[0.7, 0.2, 0.1], random_state=0
    )
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=200)
    a = gf.ObliqueForestClassifier(n_estimators=4, class_weight=class_weight, random_state=0)
    b = gf.ObliqueForestClassifier(n_estimators=4, random_state=0)
    a.fit(X, y, sample_weight=w)
    b.fit(X, y, sample_weight=w * compute_sample_weight(class_weight, y))
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        np.testing.assert_array_equal(ta.threshold, tb.threshold)
        np.testing.assert_allclose(ta.value, tb.value)
    # Balanced weights: every class carries the same total weight at the root.
    bal = gf.ObliqueForestClassifier(n_estimators=1, class_weight="balanced", bootstrap=False)
    np.testing.assert_allclose(bal.fit(X, y).trees_[0].value[0], [200 / 3] * 3)
    with pytest.raises(ValueError, match="class_weight"):
        gf.ObliqueForestClassifier(class_weight="balanced_subsample").fit(X, y)


@pytest.mark.parametrize(
    ("class_weight", "match"),
    [
        ({0: -1.0, 1: 1.0, 2: 1.0}, r"class_weight\[0\] = -1.0"),
        ({0: np.nan}, r"class_weight\[0\] = nan"),
        ({2: np.inf}, r"class_weight\[2\] = inf"),
        ({1: 1e39}, r"class_weight\[1\] = 1e\+39"),
        ({0: 0, 1: 0, 2: 0}, "leaves every sample with weight 0"),
    ],
)
def test_class_weights_are_finite_and_non_negative(class_weight, match):
    # Issue 44: a negative weight gave probabilities like [-40.2, 33.0, 8.2];
    # NaN or all-zero weights uniform ones, silently.
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)  # fmt: skip
    with pytest.raises(ValueError, match=match):
        gf.ObliqueForestClassifier(n_estimators=2, class_weight=class_weight).fit(X, y)
    # A zero weight for some classes is allowed: those classes get probability 0.
    clf = gf.ObliqueForestClassifier(n_estimators=4, class_weight={0: 0.0}, random_state=0)
    assert (clf.fit(X, y).predict_proba(X)[:, 0] == 0).all()


def test_weights_beyond_float32_are_refused():
    X, y = make_classification(40, 3, n_informative=2, n_redundant=0, random_state=0)
    clf = gf.ObliqueForestClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="sample_weight holds values too large"):
        clf.fit(X, y, sample_weight=np.full(40, 1e39))
    with pytest.raises(ValueError, match=r"sample_weight \* class_weight holds values too large"):
        clf.set_params(class_weight={0: 1e30}).fit(X, y, sample_weight=np.full(40, 1e10))


def test_zero_weight_rows_are_never_drawn():
    # Issue 44: a tree whose sample held only zero-weight rows voted a uniform
    # distribution. One positive weight: every tree is that row, its class.
    X, y = make_classification(50, 3, n_informative=2, n_redundant=0, random_state=0)
    w = np.zeros(50)
    w[7] = 2.0
    clf = gf.ObliqueForestClassifier(n_estimators=20, oob_score=True, random_state=0)
    with pytest.warns(UserWarning, match="do not have OOB"):  # row 7 is in every sample
        clf.fit(X, y, sample_weight=w)
    assert (clf.inbag_counts_[np.arange(50) != 7] == 0).all()
    np.testing.assert_array_equal(clf.predict_proba(X)[:, y[7]], 1.0)
    # Zero-weight rows are out of every tree's sample: their OOB votes use every tree.
    np.testing.assert_array_equal(np.delete(clf.oob_decision_function_, 7, 0)[:, y[7]], 1.0)
