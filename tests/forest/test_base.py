"""UnsupervisedForest: determinism, invariances, kernels and neighbours vs brute force."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

import geoforest as gf
from geoforest import UnsupervisedForest, merge_forests


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (60, 4)), rng.normal(4, 1, (60, 4))]
    return X[rng.permutation(len(X))]


def small_forest(**kw):
    # The proximity distance: these tests check the engine and the proximity search
    # (the relevance distance: tests/forest/test_relevance.py).
    params = dict(n_estimators=12, min_samples_split=8, random_state=0, distance="proximity")
    params.update(kw)
    return UnsupervisedForest(**params)


def dense_counts(train_leaves, query_leaves, qmask=None, rmask=None):
    """L and T from leaves by definition (n x n, for small tests)."""
    same = query_leaves[:, None, :] == train_leaves[None, :, :]
    if qmask is None:
        counted = np.ones_like(same)
    else:
        counted = qmask[:, None, :] & rmask[None, :, :]
    return (same & counted).sum(-1), counted.sum(-1)


def assert_trees_equal(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for xa, xb in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(xa, xb)


@pytest.mark.parametrize("projection", ["sparse", "axis"])
@pytest.mark.parametrize("criterion", ["fastbic", "twomeans", "gmm"])
def test_n_jobs_gives_identical_forest(data, projection, criterion):
    kw = dict(projection=projection, criterion=criterion, max_samples=0.7)
    a = small_forest(n_jobs=1, **kw).fit(data)
    b = small_forest(n_jobs=2, **kw).fit(data)
    assert_trees_equal(a, b)
    np.testing.assert_array_equal(a.inbag_counts_, b.inbag_counts_)


@pytest.mark.parametrize("projection", ["sparse", "axis"])
@pytest.mark.parametrize("criterion", ["fastbic", "twomeans", "gmm"])
def test_row_and_column_major_builds_give_identical_forests(data, projection, criterion):
    # fit() builds from a column-major copy; a row-major build must match it.
    a = small_forest(projection=projection, criterion=criterion).fit(data)
    b = small_forest(projection=projection, criterion=criterion)
    b._validate_params()
    X = b._validate_X(data, reset=True)
    b._grow(X, X_build=np.ascontiguousarray(X))
    assert_trees_equal(a, b)


@pytest.mark.parametrize(
    "make",
    [
        lambda: small_forest(max_samples=0.5),
        lambda: small_forest(bootstrap=True, max_samples=None),
        lambda: gf.RandomProjectionForest(n_estimators=8, random_state=0),
        lambda: gf.ObliqueForestClassifier(n_estimators=8, random_state=0),
    ],
)
def test_training_leaves_from_the_fit_equal_a_fresh_walk(data, make):
    # In-bag rows' leaves come from the fit, the others are walked on first use:
    # together they must be exactly what apply() gives every row.
    y = (data[:, 0] > 2).astype(int)
    forest = make()
    forest.fit(data, y) if hasattr(forest, "predict") else forest.fit(data)
    partial = forest._inbag_leaves.copy()
    # The fit knows exactly the in-bag rows' leaves.
    np.testing.assert_array_equal(partial < 0, forest.inbag_counts_ == 0)
    leaves, is_train = forest._leaves_of(None)
    assert is_train
    np.testing.assert_array_equal(leaves, forest.apply(data))
    seen = partial >= 0
    np.testing.assert_array_equal(partial[seen], leaves[seen])
    # A loaded forest drops the cache and walks every row; a merged one keeps it.
    loaded = pickle.loads(pickle.dumps(forest))
    assert loaded._inbag_leaves is None and loaded._train_leaves is None
    np.testing.assert_array_equal(loaded._leaves_of(None)[0], leaves)
    other = make()
    other.set_params(random_state=1)
    other.fit(data, y) if hasattr(other, "predict") else other.fit(data)
    merged = merge_forests(forest, other)
    np.testing.assert_array_equal(merged._leaves_of(None)[0], merged.apply(data))


@pytest.mark.parametrize("bootstrap", [False, True])
def test_row_order_does_not_change_the_forest(data, bootstrap):
    perm = np.random.default_rng(1).permutation(len(data))
    kw = dict(max_samples=0.6, bootstrap=bootstrap)
    a = small_forest(**kw).fit(data)
    b = small_forest(**kw).fit(data[perm])
    assert_trees_equal(a, b)  # same splits, same node sizes
    # ... and the same partition of the points into leaves, tree by tree.
    np.testing.assert_array_equal(a.apply(data)[perm], b.apply(data[perm]))
    np.testing.assert_array_equal(a.inbag_counts_[perm], b.inbag_counts_)


def test_random_state_changes_the_forest(data):
    a = small_forest(random_state=0).fit(data)
    b = small_forest(random_state=1).fit(data)
    assert not np.array_equal(a.apply(data), b.apply(data))


@pytest.mark.parametrize("method", ["all", "inbag", "oob"])
def test_proximity_matches_dense_definition(data, method, search_block):
    f = small_forest(max_samples=0.5, bootstrap=True).fit(data)
    leaves = f.apply(data)
    inbag = f.inbag_counts_ > 0
    mask = {"all": None, "inbag": inbag, "oob": ~inbag}[method]
    L, T = dense_counts(leaves, leaves, mask, mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(T > 0, L / np.maximum(T, 1), 0.0)
    S = f.proximity(method=method)
    assert sp.issparse(S) and S.format == "csr"
    np.testing.assert_allclose(S.toarray(), expected)
    np.testing.assert_allclose(f.proximity(method=method, dense=True), expected)


def test_proximity_between_new_points(data, search_block):
    f = small_forest().fit(data)
    rng = np.random.default_rng(5)
    Xq = rng.normal(2, 2, (17, 4))
    Y = data[:40]
    L, _ = dense_counts(f.apply(Y), f.apply(Xq))
    S = f.proximity(Xq, Y)
    assert S.shape == (17, 40)
    np.testing.assert_allclose(S.toarray(), L / f.n_estimators)
    np.testing.assert_allclose(
        f.proximity(Xq).toarray(), dense_counts(f.apply(data), f.apply(Xq))[0] / f.n_estimators
    )


def test_training_proximity_is_symmetric_with_unit_diagonal(data):
    S = small_forest().fit(data).proximity().toarray()
    np.testing.assert_allclose(S, S.T)
    np.testing.assert_allclose(np.diag(S), 1.0)


def brute_kneighbors(S, k, exclude_self):
    n_q, n = S.shape
    dist = np.empty((n_q, k))
    ind = np.empty((n_q, k), dtype=np.int64)
    for i in range(n_q):
        cand = [j for j in range(n) if not (exclude_self and j == i)]
        cand.sort(key=lambda j: (-S[i, j], j))
        ind[i] = cand[:k]
        dist[i] = 1 - S[i, ind[i]]
    return dist, ind


@pytest.mark.parametrize("method", ["all", "inbag", "oob"])
def test_kneighbors_training_matches_brute_force(data, method, search_block):
    f = small_forest(max_samples=0.5).fit(data)
    S = f.proximity(method=method, dense=True)
    for k in (1, 7, 119):  # 119 = n - 1 forces padding with zero-proximity points
        dist, ind = f.kneighbors(n_neighbors=k, method=method)
        ref_dist, ref_ind = brute_kneighbors(S, k, exclude_self=True)
        np.testing.assert_array_equal(ind, ref_ind)
        np.testing.assert_allclose(dist, ref_dist)


def test_kneighbors_new_points_matches_brute_force(data, search_block):
    f = small_forest().fit(data)
    Xq = np.random.default_rng(9).normal(2, 3, (25, 4))
    S = f.proximity(Xq, dense=True)
    dist, ind = f.kneighbors(Xq, n_neighbors=30)
    ref_dist, ref_ind = brute_kneighbors(S, 30, exclude_self=False)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist)
    assert np.array_equal(f.kneighbors(Xq, 30, return_distance=False), ind)


def test_kneighbors_graph(data):
    f = small_forest().fit(data)
    dist, ind = f.kneighbors(n_neighbors=5)
    G = f.kneighbors_graph(n_neighbors=5)
    n = len(data)
    # the training graph is the union of every point's 5 nearest and its transpose
    expected = np.zeros((n, n))
    expected[np.repeat(np.arange(n), 5), ind.ravel()] = 1
    expected = np.maximum(expected, expected.T)
    # plus one edge (both ways) joining each connected component to the next
    from scipy.sparse.csgraph import connected_components

    n_comp = connected_components(sp.csr_matrix(expected), directed=False)[0]
    extra = G.toarray() - expected
    assert np.all(extra >= 0) and extra.sum() == 2 * (n_comp - 1)
    assert connected_components(G, directed=False)[0] == 1
    assert isinstance(G, sp.csr_matrix) and G.indices.dtype == G.indptr.dtype == np.int32
    D = f.kneighbors_graph(n_neighbors=5, mode="distance")
    np.testing.assert_allclose(D[3, ind[3]].toarray().ravel(), dist[3], atol=1e-300)
    assert (D != D.T).nnz == 0 and D.nnz == G.nnz  # zeros stored as edges, symmetric
    for i in (0, 3, 7):  # rows sorted by distance, as scikit-learn expects
        row = D.data[D.indptr[i] : D.indptr[i + 1]]
        assert np.all(np.diff(row) >= 0)
    # with queries: exactly the k nearest per row, as in scikit-learn
    Q = f.kneighbors_graph(data[:4], n_neighbors=5, mode="distance")
    d4, i4 = f.kneighbors(data[:4], n_neighbors=5)
    assert Q.shape == (4, n) and Q.nnz == 20
    np.testing.assert_allclose(Q.toarray()[1, i4[1]], d4[1], atol=1e-300)
    with pytest.raises(ValueError, match="mode"):
        f.kneighbors_graph(mode="bogus")


@pytest.mark.filterwarnings("ignore:.* training rows are never .* of any tree:UserWarning")
def test_merged_forests_equal_one_forest_of_summed_size(data):
    parts = [
        small_forest(n_estimators=5, random_state=s, max_samples=0.6).fit(data) for s in range(4)
    ]
    merged = merge_forests(*parts)
    assert merged.n_estimators == 20
    for method in ("all", "inbag"):
        summed = parts[0].proximity_counts(method=method)
        for p in parts[1:]:
            summed = summed + p.proximity_counts(method=method)
        whole = merged.proximity_counts(method=method)
        np.testing.assert_array_equal(summed.coleaf.toarray(), whole.coleaf.toarray())
        np.testing.assert_allclose(
            summed.proximity().toarray(), merged.proximity(method=method).toarray()
        )
    # Averaging the parts' normalised kernels is NOT the same for in-bag (the known bug).
    avg = sum(p.proximity(method="inbag").toarray() for p in parts) / 4
    assert not np.allclose(avg, merged.proximity(method="inbag").toarray())


def test_merge_rejects_different_data(data):
    a = small_forest().fit(data)
    b = small_forest().fit(data[:50])
    with pytest.raises(ValueError, match="same training data"):
        merge_forests(a, b)


def test_apply_without_X_gives_the_kept_training_leaves(data):
    # Like kneighbors(X=None): the training points, their leaves computed once.
    forest = small_forest(max_samples=0.5).fit(data)
    leaves = forest.apply()
    np.testing.assert_array_equal(leaves, forest.apply(data))
    assert leaves.dtype == np.int32 and leaves.shape == (data.shape[0], forest.n_estimators)
    assert not leaves.flags.writeable  # a view of the forest's own array
    assert np.shares_memory(forest.apply(), leaves)  # kept, not walked again
    dist, ind = forest.kneighbors(n_neighbors=5)
    np.testing.assert_array_equal(forest.apply(), leaves)  # unchanged by the queries
    with pytest.raises(NotFittedError):
        small_forest().apply()


@pytest.mark.parametrize(
    "make",
    [
        lambda: small_forest(),
        lambda: gf.RandomProjectionForest(n_estimators=4, random_state=0),
        lambda: gf.ObliqueForestClassifier(n_estimators=4, random_state=0),
    ],
)
def test_nbytes_counts_the_trees_their_flat_copy_and_the_inbag_counts(data, make):
    forest = make()
    forest.fit(data, (data[:, 0] > 2).astype(int))
    trees = sum(a.nbytes for t in forest.trees_ for a in t)
    flat = sum(a.nbytes for a in forest._flat)
    proba = forest._leaf_proba.nbytes if hasattr(forest, "predict") else 0
    assert forest.nbytes_ == trees + flat + forest.inbag_counts_.nbytes + proba


def test_transform_is_one_hot_of_apply(data):
    f = small_forest().fit(data)
    E = f.transform(data)
    assert E.shape[1] == sum(t.n_leaves for t in f.trees_)
    np.testing.assert_array_equal(E.sum(axis=1).A.ravel(), f.n_estimators)
    # Inner products of the embedding are the co-leaf counts.
    np.testing.assert_allclose((E @ E.T).toarray() / f.n_estimators, f.proximity(dense=True))


def test_pickle_round_trip(data):
    f = small_forest().fit(data)
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(f.apply(data), g.apply(data))
    np.testing.assert_array_equal(f.kneighbors(n_neighbors=4)[1], g.kneighbors(n_neighbors=4)[1])


def test_constant_columns_are_never_split(data):
    X = np.c_[data, np.full(len(data), 2.5), np.zeros(len(data))]
    for projection in ("axis", "sparse"):
        f = small_forest(projection=projection, feature_combinations=1.0).fit(X)
        used = np.concatenate([t.proj_idx for t in f.trees_])
        assert not np.isin(used, [4, 5]).any()


def test_one_feature_works():
    x = np.r_[np.linspace(0, 1, 30), np.linspace(5, 6, 30)].reshape(-1, 1)
    f = small_forest().fit(x)
    for t in f.trees_:  # every root cuts the gap (projection weight is +-1)
        assert 1 < abs(t.threshold[0]) < 5
    dist, ind = f.kneighbors(n_neighbors=5)
    close = dist < 1  # neighbours that share at least one leaf
    same_side = (ind < 30) == (np.arange(60) < 30)[:, None]
    assert np.all(same_side[close])


def test_all_constant_warns_and_gives_single_leaf():
    with pytest.warns(UserWarning, match="constant"):
        f = small_forest().fit(np.ones((10, 3)))
    assert all(t.n_nodes == 1 for t in f.trees_)
    np.testing.assert_allclose(f.proximity(dense=True), 1.0)


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]]), "NaN"),
        (np.array([[0.0, np.inf], [1.0, 2.0], [3.0, 4.0]]), "infinity"),
        (np.empty((0, 3)), "0 sample"),
        (np.ones((1, 3)), "n_samples=1"),
        (np.empty((5, 0)), "0 feature"),
        (np.ones(5), "2D array"),
    ],
)
def test_bad_input_raises_clear_errors(X, match):
    with pytest.raises(ValueError, match=match):
        small_forest().fit(X)


def test_wrong_n_features_at_predict(data):
    f = small_forest().fit(data)
    for method in (f.apply, f.transform, f.kneighbors):
        with pytest.raises(ValueError, match="features"):
            method(data[:, :3])
    with pytest.raises(ValueError, match="features"):
        f.proximity(data[:, :3])


def test_bad_parameters(data):
    with pytest.raises(ValueError, match="criterion"):
        small_forest(criterion="gini").fit(data)
    with pytest.raises(ValueError, match="min_samples_split"):
        small_forest(min_samples_split=1).fit(data)
    f = small_forest().fit(data)
    with pytest.raises(ValueError, match="n_neighbors"):
        f.kneighbors(n_neighbors=len(data))
    with pytest.raises(ValueError, match="training data only"):
        f.proximity(data[:5], method="inbag")
    with pytest.raises(ValueError, match="method"):
        f.proximity(method="bogus")


def test_stopping_rules(data):
    f = small_forest(max_depth=2).fit(data)
    assert all(t.n_nodes <= 7 for t in f.trees_)
    f = small_forest(min_samples_leaf=10, min_samples_split=2).fit(data)
    for t in f.trees_:
        assert t.n_node_samples[t.left == -1].min() >= 10
    f = small_forest(min_samples_split=200).fit(data)
    assert all(t.n_nodes == 1 for t in f.trees_)
    # min_gain=0 stops where two Gaussians are no better than one by BIC.
    f0 = small_forest(min_gain=0.0, max_redraws=0).fit(data)
    for t in f0.trees_:
        assert np.all(t.gain[t.left != -1] > 0)
    f1 = small_forest(max_redraws=0).fit(data)
    assert sum(t.n_nodes for t in f0.trees_) < sum(t.n_nodes for t in f1.trees_)


def _same_forest(a, b):
    return all(
        np.array_equal(x, y, equal_nan=True)
        for ta, tb in zip(a.trees_, b.trees_, strict=True)
        for x, y in zip(ta, tb, strict=True)
    )


def test_decay_redraws():
    noise = np.random.default_rng(3).normal(size=(600, 6))
    # The root always gets the full budget: one level deep, nothing changes.
    assert _same_forest(
        small_forest(max_depth=1, decay_redraws=True).fit(noise),
        small_forest(max_depth=1).fit(noise),
    )
    # Two-means always finds a positive gain, so no budget ever decays.
    assert _same_forest(
        small_forest(criterion="twomeans", decay_redraws=True).fit(noise),
        small_forest(criterion="twomeans").fit(noise),
    )
    # Nor does anything decay without redraws.
    assert _same_forest(
        small_forest(max_redraws=0, decay_redraws=True).fit(noise),
        small_forest(max_redraws=0).fit(noise),
    )
    # On noise the root finds no structure, so its children redraw less.
    decayed = small_forest(max_depth=3, decay_redraws=True).fit(noise)
    full = small_forest(max_depth=3).fit(noise)
    assert any(t.gain[0] <= 0 for t in full.trees_)
    assert not _same_forest(decayed, full)


def test_paper_feature_combinations(data):
    X = np.c_[data, np.random.default_rng(0).normal(size=(len(data), 76))]  # p = 80
    f = small_forest(feature_combinations="paper").fit(X)
    nnz = np.concatenate([np.diff(t.proj_ptr)[t.left != -1] for t in f.trees_])
    assert nnz.mean() > 2.5  # p / 20 = 4 nonzeros on average
    f = small_forest().fit(X)
    nnz = np.concatenate([np.diff(t.proj_ptr)[t.left != -1] for t in f.trees_])
    assert 1 <= nnz.min() and nnz.mean() < 2.5


def test_forest_separates_mixture_components():
    X, y = gf.datasets.make_gaussian_mixture(300, random_state=0)
    X = gf.datasets.add_noise_dims(X, 20, random_state=0)
    ind = (
        UnsupervisedForest(n_estimators=30, random_state=0)
        .fit(X)
        .kneighbors(n_neighbors=20, return_distance=False)
    )
    res = gf.metrics.geodesic_precision_recall(ind, labels=y, ks=[20])
    assert res.precision[0] > 0.8


def _depths(tree):
    depth = np.zeros(tree.n_nodes, dtype=int)
    for node in range(tree.n_nodes):  # pre-order: parents come before children
        if tree.left[node] != -1:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return depth


def test_structureless_data_gives_shallow_trees():
    """Gaussian noise must not produce chains that peel one point at a time (O(n^2))."""
    X = np.random.default_rng(0).normal(size=(4000, 5))
    f = UnsupervisedForest(n_estimators=3, random_state=0).fit(X)
    for t in f.trees_:
        assert _depths(t).max() < 60
        assert t.n_node_samples[t.left != -1].sum() < 40 * 2000


@pytest.mark.parametrize(
    "kw", [dict(), dict(bootstrap=True, max_redraws=20), dict(projection="axis", criterion="gmm")]
)
def test_stored_splits_reproduce_the_fitted_partition(kw):
    """Leaf sizes recorded while growing equal the in-bag points apply() routes there."""
    X = np.random.default_rng(4).normal(size=(300, 30))  # structureless: many redraws
    f = UnsupervisedForest(n_estimators=6, random_state=0, **kw).fit(X)
    leaves = f.apply(X)
    for t, tree in enumerate(f.trees_):
        routed = np.bincount(leaves[:, t], weights=f.inbag_counts_[:, t], minlength=tree.n_nodes)
        is_leaf = tree.left == -1
        np.testing.assert_array_equal(routed[is_leaf], tree.n_node_samples[is_leaf])
        assert routed[~is_leaf].sum() == 0


def test_public_names_resolve():
    import geoforest

    # The three lists of __init__ (lazy map, submodules, __all__) name the same things.
    assert set(geoforest.__all__) == {*geoforest._NAMES, *geoforest._SUBMODULES, "__version__"}
    for name in geoforest.__all__:
        assert getattr(geoforest, name) is not None
    assert set(geoforest.__all__) <= set(dir(geoforest))
    with pytest.raises(AttributeError, match="no attribute"):
        geoforest.not_a_name  # noqa: B018


def test_dense_proximity_refused_above_the_byte_limit_before_computing(monkeypatch):
    """Issue 23: proximity(dense=True) checks its size in bytes before any work."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    f = gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"dense 30 x 30 matrix .*max_bytes"):
        f.proximity(dense=True, max_bytes=30 * 30 * 8 - 1)
    assert f.proximity(dense=True, max_bytes=30 * 30 * 8).shape == (30, 30)
    with pytest.raises(ValueError, match=r"dense 30 x 4 matrix"):
        f.proximity(Y=X[:4], dense=True, max_bytes=10)

    def no_work(*args, **kwargs):
        raise AssertionError("computed before the size check")

    monkeypatch.setattr(type(f), "proximity_counts", no_work)
    with pytest.raises(ValueError, match=r"100,000 x 30 matrix"):
        f.proximity(np.zeros((100_000, 3)), dense=True, max_bytes=1e6)


def test_merge_refuses_what_cannot_be_one_forest(data):
    """Issue 23: merging a forest with itself, other parameters or other labels."""
    a = small_forest(random_state=0).fit(data)
    with pytest.raises(ValueError, match="twice"):
        merge_forests(a, a)
    with pytest.raises(ValueError, match="holds a tree of forest 0"):
        merge_forests(a, small_forest(random_state=0).fit(data))
    with pytest.raises(ValueError, match="differs in min_samples_split"):
        merge_forests(a, small_forest(random_state=1, min_samples_split=7).fit(data))
    with pytest.raises(ValueError, match="same class"):
        merge_forests(a, gf.RandomProjectionForest(n_estimators=3, random_state=1).fit(data))
    # what may differ between parts of one forest
    b = small_forest(random_state=1, n_estimators=2, n_jobs=1).fit(data)
    merged = merge_forests(a, b)
    assert merged.n_estimators == a.n_estimators + 2
    assert merged.get_params()["min_samples_split"] == a.get_params()["min_samples_split"]


def test_merge_of_a_list_says_how_to_call_it(data):
    """Issue 30: a list of forests was an AttributeError about get_params."""
    a = small_forest(random_state=0).fit(data)
    b = small_forest(random_state=1).fit(data)
    with pytest.raises(TypeError, match=r"merge_forests\(\*forests\)"):
        merge_forests([a, b])
    with pytest.raises(TypeError, match=r"merge_forests\(\*forests\)"):
        merge_forests((a, b))
    with pytest.raises(TypeError, match="argument 1 is a ndarray"):
        merge_forests(a, data)
    assert merge_forests(*[a, b]).n_estimators == a.n_estimators + b.n_estimators


def test_merge_keeps_the_centring_offset(data):
    far = data + 1e7
    a = small_forest(random_state=0).fit(far)
    b = small_forest(random_state=1).fit(far)
    merged = merge_forests(a, b)
    np.testing.assert_array_equal(merged.apply(far), np.hstack([a.apply(far), b.apply(far)]))


def test_oob_without_any_out_of_bag_row_is_an_error(data):
    """Issue 23: RandomProjectionForest's defaults hold every row in every tree."""
    f = gf.RandomProjectionForest(n_estimators=4, random_state=0).fit(data)
    assert f.inbag_counts_.all()
    for call in (
        lambda: f.proximity(method="oob"),
        lambda: f.kneighbors(n_neighbors=3, method="oob"),
        lambda: f.proximity_counts(method="oob"),
    ):
        with pytest.raises(ValueError, match="nothing to count.*bootstrap"):
            call()
    assert f.proximity(method="inbag").shape == (data.shape[0],) * 2  # in-bag = all here


def test_oob_warns_about_rows_never_out_of_bag(data):
    f = small_forest(n_estimators=2, max_samples=0.9, bootstrap=False).fit(data)
    never = int((f.inbag_counts_ > 0).all(axis=1).sum())
    assert never > 0
    with pytest.warns(UserWarning, match=f"{never} of {data.shape[0]} training rows are never"):
        f.proximity(method="oob")


@pytest.mark.parametrize("criterion", ["fastbic", "twomeans", "gmm"])
def test_split_samples_keeps_row_order_and_threads_and_only_touches_large_nodes(data, criterion):
    # Nodes of more than 20 rows choose their split on 20 of them: the forest is
    # still the same for any row order and any n_jobs; a split_samples at or
    # above the rows per tree (0.7 of 120 = 84) is the forest without sampling.
    perm = np.random.default_rng(2).permutation(len(data))
    kw = dict(criterion=criterion, max_samples=0.7, split_samples=20)
    a = small_forest(n_jobs=1, **kw).fit(data)
    assert_trees_equal(a, small_forest(n_jobs=2, **kw).fit(data))
    b = small_forest(**kw).fit(data[perm])
    assert_trees_equal(a, b)
    np.testing.assert_array_equal(a.apply(data)[perm], b.apply(data[perm]))
    plain = small_forest(criterion=criterion, max_samples=0.7).fit(data)
    assert_trees_equal(plain, small_forest(**{**kw, "split_samples": 84}).fit(data))
    assert not all(
        np.array_equal(ta.threshold, tb.threshold)
        for ta, tb in zip(a.trees_, plain.trees_, strict=True)
    )
    # The two Gaussians 4 apart stay apart: nearly every neighbour is of the point's own.
    _, ind = a.kneighbors(n_neighbors=10)
    truth = data.mean(axis=1) > 2  # which Gaussian (means 0 and 4, four features)
    assert np.mean(truth[ind] == truth[:, None]) > 0.95


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.integers(-5, 1), st.floats(allow_nan=True), st.text(max_size=3), st.just([64])))
def test_split_samples_refuses_what_is_not_an_int_of_at_least_two(data, bad):
    with pytest.raises(ValueError, match="split_samples"):
        small_forest(split_samples=bad).fit(data + 1e6)
