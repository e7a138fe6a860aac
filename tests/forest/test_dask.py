"""Forests on a Dask cluster give exactly the local forest (issue: scale, item 1).

A ``distributed.LocalCluster`` with two worker *processes* stands in for a real
cluster: every task's arguments and results cross a process boundary, as they
would between machines.
"""

from __future__ import annotations

import numpy as np
import pytest

import geoforest as gf

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=4.0, size=(3, 6))
    X = np.vstack([c + rng.normal(size=(1500, 6)) for c in centers]).astype(np.float32)
    y = np.repeat(np.arange(3), 1500)
    return X, y


def _same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for xa, xb in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(xa, xb)
    np.testing.assert_array_equal(a.inbag_counts_, b.inbag_counts_)


def _on_dask(client):
    return joblib.parallel_config(backend="dask")


def test_workers_are_processes(client):
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2
    assert __import__("os").getpid() not in pids


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_unsupervised_forest_identical_on_dask(client, data, n_jobs):
    X, _ = data
    params = dict(n_estimators=12, max_features=4, random_state=7)
    local = gf.UnsupervisedForest(**params, n_jobs=1).fit(X)
    with _on_dask(client):
        remote = gf.UnsupervisedForest(**params, n_jobs=n_jobs).fit(X)
        # Queries in blocks of rows (more than one block: 4,500 > 2,048 rows).
        d_remote, i_remote = remote.kneighbors(n_neighbors=15)
        leaves_remote = remote.apply(X[:3000])
        S_remote = remote.proximity(X[:2500], X)
    _same_trees(local, remote)
    d_local, i_local = local.kneighbors(n_neighbors=15)
    np.testing.assert_array_equal(i_remote, i_local)
    np.testing.assert_array_equal(d_remote, d_local)
    np.testing.assert_array_equal(leaves_remote, local.apply(X[:3000]))
    S_local = local.proximity(X[:2500], X)
    assert (S_remote != S_local).nnz == 0


@pytest.mark.filterwarnings("ignore:.* training rows are never .* of any tree:UserWarning")
def test_inbag_kneighbors_identical_on_dask(client, data):
    X, _ = data
    local = gf.UnsupervisedForest(n_estimators=8, random_state=3).fit(X)
    with _on_dask(client):
        remote = gf.UnsupervisedForest(n_estimators=8, random_state=3).fit(X)
        i_remote = remote.kneighbors(n_neighbors=5, return_distance=False, method="inbag")
    np.testing.assert_array_equal(
        i_remote, local.kneighbors(n_neighbors=5, return_distance=False, method="inbag")
    )


def test_classifier_identical_on_dask(client, data):
    X, y = data
    local = gf.ObliqueForestClassifier(n_estimators=10, random_state=5).fit(X, y)
    with _on_dask(client):
        remote = gf.ObliqueForestClassifier(n_estimators=10, random_state=5).fit(X, y)
        proba = remote.predict_proba(X)
    _same_trees(local, remote)
    np.testing.assert_array_equal(proba, local.predict_proba(X))


def test_random_projection_forest_identical_on_dask(client, data):
    X, _ = data
    local = gf.RandomProjectionForest(n_estimators=10, random_state=2).fit(X)
    with _on_dask(client):
        remote = gf.RandomProjectionForest(n_estimators=10, random_state=2).fit(X)
    _same_trees(local, remote)


# ---------------------------------------------------- Dask arrays in, Dask arrays out
da = pytest.importorskip("dask.array")

#: Row chunks of the 4,500 queries: equal chunks; an odd last chunk (4 x 1,000 + 500)
#: with the columns split in two (rechunked to one column chunk).
CHUNKS = [(1500, 6), (1000, 3)]


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    forest = gf.UnsupervisedForest(n_estimators=10, random_state=4).fit(X)
    clf = gf.ObliqueForestClassifier(n_estimators=10, random_state=4).fit(X, y)
    return forest, clf


def _row_chunks(n, size):
    return tuple([size] * (n // size) + ([n % size] if n % size else []))


@pytest.mark.parametrize("chunks", CHUNKS)
def test_dask_apply_and_transform_equal_in_memory(client, data, fitted, chunks):
    X, _ = data
    forest, _ = fitted
    Xd = da.from_array(X, chunks=chunks)
    leaves = forest.apply(Xd)
    assert isinstance(leaves, da.Array)
    assert leaves.chunks == (_row_chunks(len(X), chunks[0]), (10,))
    assert leaves.dtype == np.int32
    np.testing.assert_array_equal(leaves.compute(), forest.apply(Xd.compute()))
    emb = forest.transform(Xd)
    assert isinstance(emb, da.Array)
    assert emb.chunks[0] == leaves.chunks[0]
    got, want = emb.compute(), forest.transform(X)
    assert got.shape == want.shape and (got != want).nnz == 0


@pytest.mark.parametrize("chunks", CHUNKS)
def test_dask_kneighbors_equal_in_memory(client, data, fitted, chunks):
    X, _ = data
    forest, _ = fitted
    Xd = da.from_array(X[::-1], chunks=chunks)  # queries in another order than the fit
    dist, ind = forest.kneighbors(Xd, n_neighbors=7)
    for a, dtype in ((dist, np.float64), (ind, np.int64)):
        assert isinstance(a, da.Array) and a.dtype == dtype
        assert a.chunks == (_row_chunks(len(X), chunks[0]), (7,))
    d_local, i_local = forest.kneighbors(Xd.compute(), n_neighbors=7)
    d_got, i_got = da.compute(dist, ind)
    np.testing.assert_array_equal(i_got, i_local)
    np.testing.assert_array_equal(d_got, d_local)
    only_ind = forest.kneighbors(Xd, n_neighbors=7, return_distance=False)
    np.testing.assert_array_equal(only_ind.compute(), i_local)


@pytest.mark.parametrize("chunks", CHUNKS)
def test_dask_predict_proba_equal_in_memory(client, data, fitted, chunks):
    X, _ = data
    _, clf = fitted
    Xd = da.from_array(X, chunks=chunks)
    proba = clf.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    assert proba.chunks == (_row_chunks(len(X), chunks[0]), (3,))
    np.testing.assert_array_equal(proba.compute(), clf.predict_proba(X))
    pred = clf.predict(Xd)
    assert pred.chunks == (_row_chunks(len(X), chunks[0]),)
    np.testing.assert_array_equal(pred.compute(), clf.predict(X))


@pytest.mark.parametrize("outputs", [1, 2])
def test_dask_regressor_predict_equals_in_memory(client, data, outputs):
    X, y = data
    Y = y.astype(float) + X[:, 0] if outputs == 1 else np.column_stack([y, X[:, 0]])
    reg = gf.ObliqueForestRegressor(n_estimators=5, random_state=4).fit(X, Y)
    pred = reg.predict(da.from_array(X, chunks=(1000, 6)))
    assert isinstance(pred, da.Array) and pred.dtype == np.float64
    assert pred.shape == Y.shape
    np.testing.assert_array_equal(pred.compute(), reg.predict(X))


def _forest_keys(graph):
    return [
        k for k, v in graph.items() if isinstance(getattr(v, "value", v), gf.UnsupervisedForest)
    ]


def test_dask_forest_is_one_key_of_the_graph(data, fitted):
    import pickle

    from dask.core import get_dependencies

    X, _ = data
    forest, _ = fitted
    Xd = da.from_array(X, chunks=(500, 6))
    forest_size = len(pickle.dumps(forest))
    for result in (forest.apply(Xd), forest.kneighbors(Xd, n_neighbors=3)[1]):
        graph = dict(result.__dask_graph__())
        keys = _forest_keys(graph)
        assert len(keys) == 1
        blocks = [k for k in graph if isinstance(k, tuple) and k[0].startswith("geoforest-")]
        blocks = [k for k in blocks if "apply" in k[0] or "kneighbors" in k[0]]
        assert len(blocks) == Xd.numblocks[0]
        for key in blocks:
            assert keys[0] in get_dependencies(graph, key)
            # the task refers to the forest's key; it does not carry the forest
            assert len(pickle.dumps(graph[key])) < forest_size / 10


def test_dask_kneighbors_one_training_leaves_task(data, fitted):
    X, _ = data
    forest, _ = fitted
    ind = forest.kneighbors(da.from_array(X, chunks=(500, 6)), 3, return_distance=False)
    graph = dict(ind.__dask_graph__())
    assert len([k for k in graph if "_training_leaves" in str(k)]) == 1


def test_dask_queries_check_their_input_before_any_task(data, fitted):
    X, _ = data
    forest, _ = fitted
    with pytest.raises(ValueError, match="features"):
        forest.apply(da.from_array(X[:, :4], chunks=(1000, 4)))
    with pytest.raises(ValueError, match="training data only"):
        forest.kneighbors(da.from_array(X, chunks=(1000, 6)), 3, method="oob")
    with pytest.raises(ValueError, match="n_neighbors"):
        forest.kneighbors(da.from_array(X, chunks=(1000, 6)), 0)


def test_proximity_counts_refuses_a_dask_array_instead_of_gathering_it(data, fitted):
    X, _ = data
    forest, _ = fitted
    with pytest.raises(NotImplementedError, match="in-memory arrays"):
        forest.proximity_counts(da.from_array(X, chunks=(1000, 6)))


def test_entry_points_leave_in_memory_calls_alone(data, fitted):
    from geoforest.forest import _dask

    X, _ = data
    forest, _ = fitted
    assert _dask.dask_fit(forest, X) is _dask.LOCAL
    for enter in (_dask.dask_apply, _dask.dask_transform, _dask.dask_proximity_counts):
        assert enter(forest, X[:5]) is _dask.LOCAL
    assert _dask.dask_kneighbors(forest, None, 3, True, "all", None) is _dask.LOCAL
    assert _dask.dask_kneighbors_graph(forest, X[:5], 3, "connectivity", "all") is _dask.LOCAL
    assert _dask.dask_apply(forest, da.from_array(X, chunks=(1000, 6))) is not _dask.LOCAL
