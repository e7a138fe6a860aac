"""ForestSpectralClustering of a Dask array equals the in-memory fit (issue 55, item 3).

The forest grows and searches its neighbours on the workers (the same trees
and lists as in memory, ``tests/forest/test_dask.py``); the graph, its
eigenvectors and k-means run in this process on the gathered lists.  So the
labels must be the in-memory labels exactly: K given, label-free (every
point, and a subset), with exact copies among the rows (found from hashes on
the workers) and with a graph of several components (bridged in the
gathered points, with a warning that they were gathered).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest.graph._distributed import copy_groups_of, rows_of
from geoforest.graph._geometry import copy_groups

da = pytest.importorskip("dask.array")


def _blobs(n, seed=0, dim=6, k=4, spread=3.0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=spread, size=(k, dim))
    y = rng.integers(k, size=n)
    return (centres[y] + rng.normal(size=(n, dim))).astype(np.float32), y


def _pair(X, chunks, **params):
    """The in-memory fit and the Dask fit of the same estimator."""
    forest = gf.UnsupervisedForest(n_estimators=params.pop("n_estimators", 12))
    make = lambda: gf.ForestSpectralClustering(forest=forest, random_state=0, **params)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # label-free evidence, the bridges' gather
        local = make().fit(X)
        on_dask = make()
        labels = on_dask.fit_predict(da.from_array(X, chunks=(chunks, X.shape[1])))
    return local, on_dask, labels


@pytest.mark.parametrize(
    "params",
    [{"n_clusters": 4}, {"n_clusters": None}, {"n_clusters": None, "max_selection_samples": 300}],
    ids=["K given", "label-free", "label-free on a subset"],
)
def test_dask_labels_equal_in_memory(params):
    X, _ = _blobs(900)
    local, on_dask, labels = _pair(X, 250, **params)
    assert isinstance(labels, da.Array) and labels.chunks == ((250, 250, 250, 150),)
    np.testing.assert_array_equal(labels.compute(), local.labels_)
    np.testing.assert_array_equal(on_dask.labels_, local.labels_)
    assert on_dask.n_clusters_ == local.n_clusters_
    assert (on_dask.affinity_matrix_ != local.affinity_matrix_).nnz == 0
    if params.get("max_selection_samples"):
        np.testing.assert_array_equal(on_dask.levels_.rows, local.levels_.rows)
        assert on_dask.levels_.rows.size == 300
    assert on_dask.n_features_in_ == X.shape[1]


def test_dask_copies_are_left_out_as_in_memory():
    X, _ = _blobs(500)
    X = np.vstack([X, X[:60], X[:60], X[10:20]])  # groups of 2, 3 and 4 copies
    local, on_dask, _ = _pair(X, 170, n_clusters=4)
    np.testing.assert_array_equal(on_dask.labels_, local.labels_)
    mine = on_dask.geometry_.copy_groups()
    theirs = copy_groups(X)
    # The same partition of the rows (the numbering may differ).
    assert np.unique(np.c_[mine, theirs], axis=0).shape[0] == np.unique(theirs).size


def test_dask_bridges_gather_with_a_warning_and_equal_in_memory():
    X, _ = _blobs(600)
    X[300:] += 1000.0  # two far-apart halves: the forest graph has two components
    local = gf.ForestSpectralClustering(
        4, forest=gf.UnsupervisedForest(n_estimators=12), random_state=0
    )
    local.fit(X)
    on_dask = gf.ForestSpectralClustering(
        4, forest=gf.UnsupervisedForest(n_estimators=12), random_state=0
    )
    with pytest.warns(UserWarning, match="more than one component.*gathered"):
        on_dask.fit(da.from_array(X, chunks=(200, X.shape[1])))
    assert local.n_bridges_ == on_dask.n_bridges_ >= 1
    np.testing.assert_array_equal(on_dask.labels_, local.labels_)


def test_hash_collisions_cost_a_fetch_not_a_wrong_group(monkeypatch):
    import geoforest.graph._distributed as distributed_rows

    X, _ = _blobs(200)
    X = np.vstack([X, X[:5]])
    Xd = da.from_array(X, chunks=(70, X.shape[1]))
    expected = copy_groups(X)
    monkeypatch.setattr(  # every row hashes alike: all are fetched, compared exactly
        distributed_rows, "_row_hashes", lambda b: np.zeros(b.shape[0], np.uint64)
    )
    got = copy_groups_of(Xd)
    assert np.unique(np.c_[got, expected], axis=0).shape[0] == np.unique(expected).size
    monkeypatch.undo()
    assert copy_groups_of(da.from_array(X[:200], chunks=(70, 6))) is None


def test_rows_of_keeps_the_order_asked_for():
    X = np.arange(60.0).reshape(20, 3)
    rows = np.array([17, 2, 2, 9, 0])
    np.testing.assert_array_equal(rows_of(da.from_array(X, chunks=(6, 3)), rows), X[rows])


def test_dask_input_refused_where_it_would_be_gathered():
    X, _ = _blobs(100)
    Xd = da.from_array(X, chunks=(40, X.shape[1]))
    with pytest.raises(TypeError, match="metric='forest' only"):
        gf.ForestSpectralClustering(2, metric="euclidean").fit(Xd)
    with pytest.raises(TypeError, match="affinity='knn'"):
        gf.ForestSpectralClustering(2, affinity="kernel").fit(Xd)
    with pytest.raises(ValueError, match="2D"):
        gf.ForestSpectralClustering(2).fit(da.from_array(X[:, 0], chunks=40))
    with pytest.raises(ValueError, match="at least 2 samples"):
        gf.ForestSpectralClustering(2).fit(Xd[:1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small forest's graph may need bridges
        fitted = gf.ForestSpectralClustering(
            2, forest=gf.UnsupervisedForest(n_estimators=5), random_state=0
        ).fit(Xd)
    with pytest.raises(TypeError, match="dask.array.Array"):
        fitted.predict(Xd)  # new points are asked for in memory
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        gf.ForestSpectralClustering(2).fit(da.from_array(bad, chunks=(40, 6)))


def _outcome(make, X):
    """Labels of ``make().fit(X)``, or the error it raises (type and message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return make().fit(X).labels_
        except (ValueError, TypeError) as exc:
            return type(exc), str(exc)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(2, 90),
    offset=st.sampled_from([0.0, 1e6]),
    copies=st.integers(0, 15),
    chunk=st.integers(1, 60),
    seed=st.integers(0, 3),
)
def test_dask_fit_equals_in_memory_on_awkward_data(n, offset, copies, chunk, seed):
    """What a careless user would pass, at the defaults (but a small forest): two
    points or more, far from zero, repeated rows, chunks of any size.  The Dask
    fit gives the in-memory labels, or the same error."""
    X, _ = _blobs(n, seed, dim=3, k=2)
    X = np.vstack([X, X[: min(copies, n)]]).astype(np.float64) + offset
    make = lambda: gf.ForestSpectralClustering(  # noqa: E731
        2, forest=gf.UnsupervisedForest(n_estimators=5), random_state=0
    )
    local = _outcome(make, X)
    on_dask = _outcome(make, da.from_array(X, chunks=(chunk, X.shape[1])))
    if isinstance(local, tuple):
        assert on_dask == local
    else:
        np.testing.assert_array_equal(on_dask, local)


@pytest.mark.parametrize("n", [100_000])
def test_dask_cluster_labels_equal_in_memory_at_scale(client, n):
    """On a two-process ``LocalCluster``, 10^5 points in 50 dimensions (10 touching
    clusters, as ``benchmarks/bench_cluster_scale.py``): the labels equal the
    in-memory labels (issue 55's criterion; fewer trees to keep the test short)."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(10, 10))
    y = rng.integers(10, size=n)
    Q, _ = np.linalg.qr(rng.normal(size=(50, 10)))
    X = ((centres[y] + rng.normal(size=(n, 10))) @ Q.T).astype(np.float32)
    X += rng.normal(0.0, 0.5, size=X.shape).astype(np.float32)
    distributed = pytest.importorskip("distributed")
    with distributed.get_task_stream(client) as stream:
        local, on_dask, labels = _pair(X, 25_000, n_clusters=10, n_estimators=10)
    assert len(stream.data) > 0  # the forest and its search ran on the cluster's workers
    np.testing.assert_array_equal(labels.compute(), local.labels_)
    assert on_dask.n_bridges_ == local.n_bridges_
