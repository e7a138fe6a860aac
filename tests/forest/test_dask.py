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
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


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
