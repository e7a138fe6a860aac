"""A forest grown from a Dask array is the in-memory forest, tree for tree, and so
are its training points' leaves and forest neighbours (computed on the workers)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import geoforest as gf
from geoforest.forest import _relevance
from geoforest.forest._dask import _fit as _dask_fit
from geoforest.forest._dask import _neighbors as _dask_neighbors
from geoforest.forest._dask import _ranked as _dask_ranked
from geoforest.forest._input import PrecisionWarning

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def small_partitions(monkeypatch):
    # Several sorting groups and reference partitions at test sizes.
    monkeypatch.setattr(_dask_fit, "GROUP_ROWS", 700)
    monkeypatch.setattr(_dask_neighbors, "REF_ROWS", 900)


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=4.0, size=(3, 5))
    return np.vstack([c + rng.normal(size=(800, 5)) for c in centers]).astype(np.float32)


def _same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ta, tb in zip(a.trees_, b.trees_, strict=True):
        for xa, xb in zip(ta, tb, strict=True):
            np.testing.assert_array_equal(xa, xb)


def _same_neighbours(a, b, k, X=None):
    d1, i1 = a.kneighbors(X, n_neighbors=k)
    d2, i2 = b.kneighbors(X, n_neighbors=k)
    if isinstance(i2, da.Array):
        d2, i2 = dask.compute(d2, i2)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)


CASES = [
    (gf.UnsupervisedForest, {"distance": "proximity"}),
    (
        gf.UnsupervisedForest,
        dict(
            distance="proximity",
            criterion="twomeans",
            projection="axis",
            max_samples=800,
            bootstrap=True,
        ),
    ),
    (gf.RandomProjectionForest, dict(max_samples=None)),
    # Large nodes cut on a drawn sample of their rows: the draw reads the rows'
    # values, not their order, so a Dask task's row stack gives the same trees.
    (gf.UnsupervisedForest, {"distance": "proximity", "split_samples": 150}),
]


@pytest.mark.parametrize(("Est", "params"), CASES)
@pytest.mark.parametrize("chunks", [400, (1000, 1400), 2400])
def test_dask_fit_equals_in_memory(client, X, Est, params, chunks):
    a = Est(n_estimators=6, random_state=4, **params).fit(X)
    b = Est(n_estimators=6, random_state=4, **params).fit(da.from_array(X, chunks=(chunks, -1)))
    _same_trees(a, b)
    assert isinstance(b.inbag_counts_, da.Array)
    np.testing.assert_array_equal(a.inbag_counts_, b.inbag_counts_.compute())
    leaves = b.apply()
    assert isinstance(leaves, da.Array) and leaves.chunks[0] == b._X_fit.chunks[0]
    np.testing.assert_array_equal(a.apply(), leaves.compute())
    for k in (1, 10):
        _same_neighbours(a, b, k)
    assert b.nbytes_ == a.nbytes_ - a.inbag_counts_.nbytes


def test_dask_fit_same_trees_for_any_row_order(client, X):
    perm = np.random.default_rng(1).permutation(X.shape[0])
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=2).fit(
        da.from_array(X, chunks=500)
    )
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=2).fit(
        da.from_array(X[perm], chunks=300)
    )
    _same_trees(a, b)
    np.testing.assert_array_equal(a.inbag_counts_.compute()[perm], b.inbag_counts_.compute())


def test_dask_fit_same_trees_on_any_scheduler(client, X):
    Xd = da.from_array(X, chunks=600)
    on_cluster = gf.UnsupervisedForest(distance="proximity", n_estimators=4, random_state=9).fit(Xd)
    with dask.config.set(scheduler="sync"):
        local = gf.UnsupervisedForest(distance="proximity", n_estimators=4, random_state=9).fit(Xd)
        _same_neighbours(on_cluster, local, 5)
    _same_trees(on_cluster, local)


def test_dask_fit_shifts_float64_like_in_memory(client, X):
    # Far from zero compared with their spread: the fit shifts the columns
    # before the float32 cast, and every query gets the same shift.
    X64 = X.astype(np.float64) * 1e-3 + 1e6
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=3).fit(X64)
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=3).fit(
        da.from_array(X64, chunks=(500, 2))
    )
    assert b._offset is not None
    np.testing.assert_array_equal(a._offset, b._offset)
    _same_trees(a, b)
    Q = X64[::7] + 1e-4
    _same_neighbours(a, b, 6, Q)  # in-memory queries: in-memory answers
    _same_neighbours(a, b, 6, da.from_array(Q, chunks=100))
    np.testing.assert_array_equal(a.apply(Q), b.apply(da.from_array(Q, chunks=90)).compute())


def test_dask_kneighbors_pads_across_small_partitions(client, monkeypatch):
    # Partitions smaller than k: each pads with INT64_MAX at proximity -1,
    # which the merge drops; the answer is the in-memory padding (lowest
    # indices at distance 1).
    monkeypatch.setattr(_dask_neighbors, "REF_ROWS", 40)
    X = np.random.default_rng(5).normal(size=(300, 3)).astype(np.float32)
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0).fit(X)
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0).fit(
        da.from_array(X, chunks=30)
    )
    assert len(_dask_neighbors._partitions(b._X_fit.chunks[0])) == 10
    for k in (1, 45, 299):
        _same_neighbours(a, b, k)


def test_dask_fit_shows_progress(client, X, capsys):
    pytest.importorskip("tqdm")
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0).fit(X)
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0, verbose=1)
    b.fit(da.from_array(X, chunks=800))
    _same_trees(a, b)
    assert "trees" in capsys.readouterr().err


def test_dask_fit_keeps_nothing_n_sized_on_the_client(client, X):
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0).fit(
        da.from_array(X, chunks=600)
    )
    held = {
        name: value.shape
        for name, value in vars(b).items()
        if isinstance(value, np.ndarray) and value.shape[:1] == (X.shape[0],)
    }
    assert held == {}
    assert isinstance(b._X_fit, da.Array) and b._X_fit.dtype == np.float32


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda X: da.from_array(np.where(X > 2, np.nan, X), chunks=500), "NaN"),
        (lambda X: da.from_array(np.where(X > 2, np.inf, X), chunks=500), "infinity"),
        (lambda X: da.from_array(X[:1], chunks=1), "at least 2 samples"),
        (lambda X: da.from_array(X[:, :0], chunks=500), "at least 1 feature"),
        (lambda X: da.from_array(X[:, 0], chunks=500), "2D"),
        (lambda X: da.from_array(X.astype(np.complex64), chunks=500), "Complex"),
        (lambda X: da.from_array(X, chunks=500)[da.from_array(X[:, 0] > 0)], "unknown"),
    ],
)
def test_dask_fit_refuses_bad_input(X, make, match):
    with pytest.raises(ValueError, match=match):
        gf.UnsupervisedForest(distance="proximity", n_estimators=2).fit(make(X))


def test_dask_fit_warns_like_in_memory(client):
    const = np.ones((50, 3), dtype=np.float32)
    with pytest.warns(UserWarning, match="constant"):
        gf.UnsupervisedForest(distance="proximity", n_estimators=2).fit(
            da.from_array(const, chunks=20)
        )
    merged = np.array([[1e8, 0.0], [1e8 + 1, 0.0], [0.0, 0.0], [5.0, 5.0]])
    with pytest.warns(PrecisionWarning, match="1 of the 4 distinct"):
        gf.UnsupervisedForest(distance="proximity", n_estimators=2).fit(
            da.from_array(merged, chunks=3)
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gf.UnsupervisedForest(distance="proximity", n_estimators=2).fit(
            da.from_array(merged[1:], chunks=3)
        )


def test_dask_fitted_forest_says_what_it_cannot_do(client, X):
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=0).fit(
        da.from_array(X, chunks=600)
    )
    for call in (
        lambda: b.proximity(method="inbag"),
        lambda: b.proximity(Y=X[:5]),
        lambda: b.proximity_counts(),
        lambda: b.kneighbors_graph(n_neighbors=3),
        lambda: b.kneighbors(n_neighbors=3, method="oob"),
    ):  # each says what is available instead
        with pytest.raises(NotImplementedError, match="Dask array.*Available there: kneighbors"):
            call()
    with pytest.raises(NotImplementedError, match="Dask array"):
        gf.forest.merge_forests(b, b)


@pytest.mark.parametrize(
    "est",
    [gf.ObliqueForestClassifier(n_estimators=2), gf.LLPD(), gf.ForestNeighborsTransformer()],
    ids=type,
)
def test_estimators_refuse_dask_arrays_they_would_materialise(X, est):
    y = np.repeat([0, 1, 2], 800)
    args = (da.from_array(X, chunks=500),) + ((y,) if hasattr(est, "predict_proba") else ())
    with pytest.raises(TypeError, match="X.compute()"):
        est.fit(*args)


@pytest.mark.parametrize("dense", [False, True])
def test_dask_proximity_rows_equal_in_memory(client, X, dense):
    forest = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=0).fit(X)
    Q = X[::5] + 0.01
    expected = forest.proximity(Q, dense=dense)
    got = forest.proximity(da.from_array(Q, chunks=(150, 2)), dense=dense)
    assert got.chunks[0] == (150, 150, 150, 30)
    got = got.compute()
    if not dense:
        expected, got = expected.toarray(), got.toarray()
    np.testing.assert_array_equal(expected, got)
    with pytest.raises(ValueError, match="Y must be None"):
        forest.proximity(da.from_array(Q, chunks=150), Y=Q)
    with pytest.raises(ValueError, match="block"):
        forest.proximity(da.from_array(Q, chunks=150), dense=True, max_bytes=1000)


def test_docs_example_writes_what_the_in_memory_forest_gives(tmp_path):
    # docs/scale.md's example, shrunk: it starts its own cluster, writes the
    # training leaves and some neighbours as npy stacks, and reads them back.
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "scale.md").read_text()
    section = text.split("### Example: fit, leaves and neighbours, results to storage")[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    for big, small in [
        ("n, p = 4_000_000, 10", "n, p = 6_000, 4"),
        ("chunks=(250_000, p)", "chunks=(1_000, p)"),
        ("max_samples=100_000", "max_samples=500"),
        ("ind[:200_000]", "ind[:2_500]"),
        ("tempfile.mkdtemp()", repr(str(tmp_path))),
    ]:
        assert big in code
        code = code.replace(big, small)
    namespace: dict = {}
    exec(compile(code, "docs/scale.md example", "exec"), namespace)
    X = namespace["X"].compute(scheduler="sync")
    forest = gf.UnsupervisedForest(
        distance="proximity", n_estimators=20, max_samples=500, random_state=0
    ).fit(X)
    np.testing.assert_array_equal(namespace["leaves"].compute(), forest.apply())
    ind = da.from_npy_stack(str(tmp_path / "ind")).compute()
    np.testing.assert_array_equal(ind, forest.kneighbors(n_neighbors=20)[1][:2_500])


@pytest.mark.parametrize("dense", [False, True])
def test_dask_fitted_proximity_equals_in_memory(client, X, dense):
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=0).fit(X)
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=0).fit(
        da.from_array(X, chunks=400)
    )
    S = b.proximity(dense=dense)
    assert S.chunks == ((400,) * 6, (800, 800, 800))  # rows: X's chunks; columns: partitions
    Q = X[::5] + 0.01
    pairs = [
        (a.proximity(dense=dense), S.compute()),
        (a.proximity(Q, dense=dense), b.proximity(Q, dense=dense)),
        (a.proximity(Q, dense=dense), b.proximity(da.from_array(Q, chunks=100), dense=dense)),
    ]
    for expected, got in pairs:
        got = got.compute() if isinstance(got, da.Array) else got
        if not dense:
            expected, got = expected.toarray(), got.toarray()
        np.testing.assert_array_equal(expected, got)
    with pytest.raises(ValueError, match="block"):
        b.proximity(dense=True, max_bytes=1000)


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
def test_dask_kneighbors_graph_rows_equal_in_memory(client, X, mode):
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=0).fit(X)
    b = gf.UnsupervisedForest(distance="proximity", n_estimators=5, random_state=0).fit(
        da.from_array(X, chunks=500)
    )
    Q = X[::4] + 0.01
    expected = a.kneighbors_graph(Q, n_neighbors=6, mode=mode).toarray()
    for forest in (a, b):
        G = forest.kneighbors_graph(da.from_array(Q, chunks=(170, 2)), n_neighbors=6, mode=mode)
        assert isinstance(G, da.Array)
        np.testing.assert_array_equal(G.compute().toarray(), expected)
    np.testing.assert_array_equal(b.kneighbors_graph(Q, 6, mode=mode).toarray(), expected)


def test_partitions_are_whole_chunks_and_capped_in_number(monkeypatch):
    monkeypatch.setattr(_dask_neighbors, "REF_ROWS", 100)
    monkeypatch.setattr(_dask_neighbors, "MAX_PARTITIONS", 4)
    parts = _dask_neighbors._partitions((60, 30, 30, 200, 10))  # 330 rows, limit 100
    assert parts == [(0, 2), (2, 3), (3, 4), (4, 5)]
    many = _dask_neighbors._partitions((10,) * 100)  # 1,000 rows: limit 250, not 100
    assert len(many) == 4 and all(b - a == 25 for a, b in many)


def test_dask_fit_verbose_without_a_distributed_client(X, monkeypatch):
    # Local schedulers have no client to follow the trees with: no bar, same trees.
    monkeypatch.setattr(_dask_fit, "_distributed_client", lambda: None)
    a = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=1).fit(X)
    with dask.config.set(scheduler="sync"):
        b = gf.UnsupervisedForest(distance="proximity", n_estimators=3, random_state=1, verbose=1)
        b.fit(da.from_array(X, chunks=800))
    _same_trees(a, b)


# ------------------------------------------------------------- the learned metric on Dask
def _close_neighbours(a, b, k, X=None):
    """Same indices, distances equal to rounding (the column variances, which set
    the weights when nothing is learned, are summed chunk by chunk)."""
    d1, i1 = a.kneighbors(X, n_neighbors=k)
    d2, i2 = b.kneighbors(X, n_neighbors=k)
    if isinstance(i2, da.Array):
        d2, i2 = dask.compute(d2, i2)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(d1, d2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("chunks", "ref_rows", "trees"),
    [(400, 900, 8), ((1000, 1400), 900, 8), (2400, 900, 3), (150, 300, 8), (130, 40, 3)],
)
def test_dask_fit_ranks_by_the_learned_metric_as_in_memory(X, monkeypatch, chunks, ref_rows,
                                                           trees):  # fmt: skip
    # At defaults (distance="auto"): the same relevance and the same neighbours
    # for X=None, in-memory and Dask queries.  Reference partitions of
    # ref_rows rows (several merge; chunks of 130 rows against partitions of
    # 40: one chunk per partition); 3 trees leave many queries fewer co-leaf
    # points than candidates, so the candidates are padded by index.
    monkeypatch.setattr(_dask_neighbors, "REF_ROWS", ref_rows)
    # A query chunk is searched in blocks of QUERY_BLOCK rows, each merged and
    # ranked on its own; 97 cuts every chunk here into several (with 3 trees,
    # and chunks of 150 rows).  Inside a block a partition searches
    # SEARCH_ROWS at a time; 61 splits every block into several, whose ragged
    # answers are joined.
    small = trees == 3 or chunks == 150
    monkeypatch.setattr(_dask_ranked, "QUERY_BLOCK", 97 if small else 1 << 14)
    monkeypatch.setattr(_dask_ranked, "SEARCH_ROWS", 61 if trees == 3 else 1 << 14)
    a = gf.UnsupervisedForest(n_estimators=trees, random_state=2).fit(X)
    with dask.config.set(scheduler="sync"):
        b = gf.UnsupervisedForest(n_estimators=trees, random_state=2).fit(
            da.from_array(X, chunks=(chunks, 5))
        )
        assert b.distance_ == "relevance"
        n_parts = len(_dask_neighbors._partitions(b._X_fit.chunks[0]))
        assert (n_parts > 1) == (chunks != 2400)
        # The same rows, pools and values in the same order: the same relevance.
        np.testing.assert_array_equal(b.feature_relevance_, a.feature_relevance_)
        np.testing.assert_allclose(b._metric.weights, a._metric.weights, rtol=1e-14)
        Q = X[::9] + 1e-3
        for k in (1, 7, 40):
            _close_neighbours(a, b, k)
            _close_neighbours(a, b, k, Q)
            _close_neighbours(a, b, k, da.from_array(Q, chunks=(57, 5)))
        _close_neighbours(a, b, 7, X[:300])  # training rows as new points: each finds itself
        _close_neighbours(a, b, 2399)  # every other point: padding to the end
        # One search per reference partition and query block, each block ranked alone.
        graph = dict(b.kneighbors(n_neighbors=5)[1].__dask_graph__())
        n_blocks = sum(-(-c // _dask_ranked.QUERY_BLOCK) for c in b._X_fit.chunks[0])
        names = [str(key[0] if isinstance(key, tuple) else key) for key in graph]
        assert sum(name.startswith("_search_ranked") for name in names) == n_blocks * n_parts
        assert sum(name.startswith("_rank_merged") for name in names) == n_blocks


def test_dask_fit_learned_ranking_on_a_cluster(client, X):
    # Through worker processes: the metric, partitions and query rows are pickled.
    a = gf.UnsupervisedForest(n_estimators=6, random_state=1).fit(X)
    b = gf.UnsupervisedForest(n_estimators=6, random_state=1).fit(da.from_array(X, chunks=500))
    np.testing.assert_allclose(b.feature_relevance_, a.feature_relevance_, rtol=1e-9)
    _close_neighbours(a, b, 10)
    _close_neighbours(a, b, 10, da.from_array(X[::5] + 0.01, chunks=100))
    G = b.kneighbors_graph(X[::5] + 0.01, n_neighbors=4, mode="distance").toarray()
    expected = a.kneighbors_graph(X[::5] + 0.01, n_neighbors=4, mode="distance").toarray()
    np.testing.assert_allclose(G, expected, rtol=1e-12)


@pytest.mark.parametrize("gather_bytes", [1, 2_000, 1 << 23])
def test_gathered_rows_equal_numpy_on_any_scheduler(client, X, monkeypatch, gather_bytes):
    # The estimate's rows written into one array piece by piece: one piece per
    # batch (1 byte), batches of 100 rows, all at once; chunks without rows skipped.
    monkeypatch.setattr(_dask_fit, "GATHER_BYTES", gather_bytes)
    Xd = da.from_array(X, chunks=(300, 5))
    rows = np.flatnonzero(np.random.default_rng(3).random(X.shape[0]) < 0.3)
    rows = rows[(rows < 600) | (rows >= 900)]  # chunk 2 (rows 600-899) has none
    extra = Xd.sum(axis=0, dtype=np.float64)
    for scheduler in (None, "sync"):
        with dask.config.set(scheduler=scheduler):
            taken, (total,) = _dask_fit.gather_rows(Xd, rows, extra)
            assert (_dask_fit._scheduler_client() is None) == (scheduler == "sync")
        assert taken.dtype == np.float32 and taken.flags.c_contiguous
        np.testing.assert_array_equal(taken, X[rows])
        np.testing.assert_array_equal(total, extra.compute())
    empty, extras = _dask_fit.gather_rows(Xd, rows[:0])
    assert empty.shape == (0, 5) and extras == []


def test_read_rows_are_the_sorted_distinct_rows():
    rng = np.random.default_rng(4)
    rows = np.sort(rng.choice(5000, 40, replace=False))
    neighbors = rng.integers(0, 5000, (40, 30))
    np.testing.assert_array_equal(
        _relevance.read_rows(rows, neighbors), np.unique(np.concatenate([rows, neighbors.ravel()]))
    )


def test_dask_fit_learned_metric_on_a_cluster_bit_for_bit(client, X, monkeypatch):
    # The estimate's rows gathered in batches of about 50 rows: the relevance is
    # the in-memory one to the last bit (the weights also read the column
    # variances, summed chunk by chunk).
    monkeypatch.setattr(_dask_fit, "GATHER_BYTES", 1_000)
    a = gf.UnsupervisedForest(n_estimators=6, random_state=5).fit(X)
    b = gf.UnsupervisedForest(n_estimators=6, random_state=5).fit(da.from_array(X, chunks=500))
    np.testing.assert_array_equal(b.feature_relevance_, a.feature_relevance_)
    np.testing.assert_allclose(b._metric.weights, a._metric.weights, rtol=1e-14)
