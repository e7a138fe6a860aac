"""Tests of the experiment baselines against independent brute-force references."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.sparse.csgraph import connected_components, shortest_path
from sklearn.neighbors import kneighbors_graph

from geoforest_experiments.baselines import (
    BASELINES,
    baseline_neighbors,
    breiman_urf_neighbors,
    breiman_urf_proximity,
    euclidean_neighbors,
    isomap_neighbors,
    nndescent_neighbors,
    umap_neighbors,
)


# --------------------------------------------------------------------------- references
def _exact_dist(X: np.ndarray) -> np.ndarray:
    """Dense Euclidean distances by explicit differences (exact ties stay exact)."""
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))


def _rank_ascending(D: np.ndarray, k: int) -> np.ndarray:
    """Per row: ascending ``D``, ties by lower index, self excluded."""
    D = np.array(D, dtype=np.float64)
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _rank_descending(P: np.ndarray, k: int) -> np.ndarray:
    """Per row: descending ``P``, ties by lower index, self excluded."""
    n = P.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    idx = np.arange(n)
    for i in range(n):
        order = np.lexsort((idx, -P[i]))
        out[i] = order[order != i][:k]
    return out


def _blobs(n_per: int = 60, noise_dims: int = 5, seed: int = 0):
    """Three well-separated 3-D Gaussian blobs plus standard-normal noise dimensions."""
    rng = np.random.default_rng(seed)
    centres = 10.0 * np.eye(3)
    signal = np.vstack([c + rng.normal(size=(n_per, 3)) for c in centres])
    noise = rng.normal(size=(3 * n_per, noise_dims))
    labels = np.repeat(np.arange(3), n_per)
    return np.hstack([signal, noise]), labels


def _same_label_fraction(ind: np.ndarray, labels: np.ndarray) -> float:
    return float((labels[ind] == labels[:, None]).mean())


def _assert_valid(ind: np.ndarray, n: int, k: int) -> None:
    assert isinstance(ind, np.ndarray)
    assert ind.dtype == np.int64
    assert ind.shape == (n, k)
    assert ind.min() >= 0 and ind.max() < n
    assert not (ind == np.arange(n)[:, None]).any(), "self must be excluded"
    assert all(len(set(row)) == k for row in ind.tolist()), "neighbours must be distinct"


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "func", [euclidean_neighbors, isomap_neighbors, breiman_urf_neighbors], ids=lambda f: f.__name__
)
def test_input_validation(func):
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(ValueError, match="2-D"):
        func(X[:, 0], 2)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        func(bad, 2)
    for k in (0, 10, -1):
        with pytest.raises(ValueError, match="n_neighbors"):
            func(X, k)
    for k in (2.0, True, "3"):
        with pytest.raises(ValueError, match="n_neighbors must be an integer"):
            func(X, k)
    with pytest.raises(ValueError, match="numbers"):
        func(np.array([["a", "b"], ["c", "d"]]), 1)


def test_other_parameter_validation():
    X = np.random.default_rng(0).normal(size=(10, 3))
    with pytest.raises(ValueError, match="isomap_neighbors"):
        isomap_neighbors(X, 2, isomap_neighbors=10)
    with pytest.raises(ValueError, match="n_estimators"):
        breiman_urf_neighbors(X, 2, n_estimators=0)
    with pytest.raises(ValueError, match="n_synthetic"):
        breiman_urf_proximity(X, n_synthetic=0)
    with pytest.raises(ValueError, match="source"):
        umap_neighbors(X, 2, source="bogus")


# --------------------------------------------------------------------------- Euclidean
def test_euclidean_matches_brute_force():
    X = np.random.default_rng(1).normal(size=(200, 6))
    k = 12
    got = euclidean_neighbors(X, k)
    _assert_valid(got, 200, k)
    np.testing.assert_array_equal(got, _rank_ascending(_exact_dist(X), k))
    # k = n - 1 returns every other point.
    full = euclidean_neighbors(X[:30], 29)
    np.testing.assert_array_equal(full, _rank_ascending(_exact_dist(X[:30]), 29))


def test_euclidean_duplicates_and_ties():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(50, 3))
    X = np.vstack([base, base[:20], base[:5], base[:5]])  # pairs and quadruples
    n = X.shape[0]
    for k in (1, 3, 7):
        got = euclidean_neighbors(X, k)
        _assert_valid(got, n, k)
        np.testing.assert_array_equal(got, _rank_ascending(_exact_dist(X), k))
    # Exact ties on a grid go to the lower index.
    grid = np.arange(8.0)[:, None]
    assert euclidean_neighbors(grid, 1)[3, 0] == 2
    np.testing.assert_array_equal(euclidean_neighbors(grid, 2)[3], [2, 4])
    # All points identical: lowest other indices.
    same = np.ones((6, 2))
    np.testing.assert_array_equal(
        euclidean_neighbors(same, 2), _rank_ascending(np.zeros((6, 6)), 2)
    )


# --------------------------------------------------------------------------- Isomap
def _helix(n: int = 240, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 4 * np.pi, n)
    X = np.column_stack([np.cos(t), np.sin(t), 0.3 * t])
    return X + 0.02 * rng.normal(size=X.shape)


def test_isomap_matches_shortest_path_reference():
    X = _helix()
    G = kneighbors_graph(X, 5, mode="distance")
    G = G.maximum(G.T)
    assert connected_components(G, directed=False)[0] == 1
    D = shortest_path(G, directed=False)
    k = 10
    got = isomap_neighbors(X, k)
    _assert_valid(got, X.shape[0], k)
    ref = _rank_ascending(D, k)
    for i in range(X.shape[0]):
        assert set(got[i]) == set(ref[i]), i
        assert np.all(np.diff(D[i, got[i]]) >= -1e-12), "not sorted by geodesic distance"
    # Geodesic, not Euclidean: the two differ on the helix for larger k.
    assert not np.array_equal(isomap_neighbors(X, 40), euclidean_neighbors(X, 40))


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
def test_isomap_ties_and_disconnected_graph():
    grid = np.arange(8.0)[:, None]
    np.testing.assert_array_equal(isomap_neighbors(grid, 2, isomap_neighbors=2)[3], [2, 4])
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(size=(20, 2)), 100 + rng.normal(size=(20, 2))])
    with pytest.warns(UserWarning, match="connected components"):
        got = isomap_neighbors(X, 25, isomap_neighbors=3)
    _assert_valid(got, 40, 25)
    # Each point's own cluster (19 others) comes before the far cluster.
    assert (got[:20, :19] < 20).all() and (got[20:, :19] >= 20).all()


# --------------------------------------------------------------------------- NNDescent
@pytest.fixture(scope="module")
def nndescent_case():
    pytest.importorskip("pynndescent")
    X = np.random.default_rng(5).normal(size=(300, 5))
    k = 10
    first = nndescent_neighbors(X, k, random_state=0)
    second = nndescent_neighbors(X, k, random_state=0)
    return X, k, first, second


def test_nndescent_recall_and_determinism(nndescent_case):
    X, k, first, second = nndescent_case
    _assert_valid(first, X.shape[0], k)
    np.testing.assert_array_equal(first, second)
    ref = _rank_ascending(_exact_dist(X), k)
    recall = np.mean([len(set(a) & set(b)) / k for a, b in zip(first, ref, strict=True)])
    assert recall >= 0.95, recall


def test_candidate_lists_drop_self_and_pad_missing():
    from geoforest_experiments.baselines import _sort_and_drop_self

    # Rows as an approximate index returns them: self present or missing, -1 = none.
    ind = np.array([[0, 2, 1], [3, 1, -1], [-1, -1, 2], [1, 2, 0]])
    dist = np.array([[0.0, 1.0, 1.0], [0.5, 0.0, np.inf], [np.inf, np.inf, 0.0], [2.0, 1.0, 3.0]])
    got = _sort_and_drop_self(ind, dist, 2)
    np.testing.assert_array_equal(got, [[1, 2], [3, 0], [0, 1], [2, 1]])
    assert got.dtype == np.int64


# --------------------------------------------------------------------------- URF-Breiman
def _brute_proximity(X: np.ndarray, forests) -> np.ndarray:
    n = X.shape[0]
    P = np.zeros((n, n))
    n_trees = 0
    for forest in forests:
        leaves = forest.apply(X)
        for t in range(leaves.shape[1]):
            for i in range(n):
                for j in range(n):
                    P[i, j] += leaves[i, t] == leaves[j, t]
            n_trees += 1
    return P / n_trees


def test_breiman_sparse_proximity_matches_brute_force():
    X = np.random.default_rng(6).normal(size=(60, 4))
    params = {"n_estimators": 6, "n_synthetic": 2, "random_state": 3}
    P, forests = breiman_urf_proximity(X, return_forests=True, **params)
    assert len(forests) == 2 and all(len(f.estimators_) == 6 for f in forests)
    dense = _brute_proximity(X, forests)
    Pd = P.toarray()
    np.testing.assert_allclose(Pd, dense, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(Pd > 0, dense > 0)
    assert P.nnz == np.count_nonzero(dense), "only co-leaf pairs are stored"
    np.testing.assert_allclose(np.diag(Pd), 1.0)
    # Same seed, same forests, same proximity; neighbours are the brute-force top-k.
    np.testing.assert_array_equal(breiman_urf_proximity(X, **params).toarray(), Pd)
    for k in (1, 5, 30):
        got = breiman_urf_neighbors(X, k, **params)
        _assert_valid(got, 60, k)
        np.testing.assert_array_equal(got, _rank_descending(dense, k))
    # k = 30 needs padding for some rows (fewer co-leaf points than k).
    assert ((dense > 0).sum(axis=1) - 1 < 30).any()


def test_breiman_blobs_and_determinism():
    X, labels = _blobs(n_per=100)
    k = 5
    got = breiman_urf_neighbors(X, k, random_state=0)
    _assert_valid(got, X.shape[0], k)
    assert _same_label_fraction(got, labels) > 0.8
    np.testing.assert_array_equal(got, breiman_urf_neighbors(X, k, random_state=0))
    assert not np.array_equal(got, breiman_urf_neighbors(X, k, random_state=1))


# --------------------------------------------------------------------------- UMAP
@pytest.fixture(scope="module")
def umap_case():
    umap = pytest.importorskip("umap")
    X, labels = _blobs(n_per=50)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reducer = umap.UMAP(random_state=0).fit(X)
    return X, labels, reducer


@pytest.mark.parametrize("source", ["embedding", "graph"])
def test_umap_neighbors(umap_case, source):
    X, labels, reducer = umap_case
    n = X.shape[0]
    k = 10
    got = umap_neighbors(X, k, source=source, random_state=0)
    _assert_valid(got, n, k)
    np.testing.assert_array_equal(got, umap_neighbors(X, k, source=source, random_state=0))
    assert _same_label_fraction(got, labels) > 0.8
    # Independent reference from the same (deterministic) UMAP fit.
    emb = np.asarray(reducer.embedding_, dtype=np.float64)
    if source == "embedding":
        np.testing.assert_array_equal(got, _rank_ascending(_exact_dist(emb), k))
    else:
        assert (np.diff(reducer.graph_.indptr) >= k).all()
        np.testing.assert_array_equal(got, _rank_descending(reducer.graph_.toarray(), k))


def test_umap_graph_source_fills_by_embedding_distance(umap_case):
    X, _, reducer = umap_case
    n = X.shape[0]
    k = 60  # more than any row's graph nonzeros
    G = reducer.graph_.toarray()
    emb = np.asarray(reducer.embedding_, dtype=np.float64)
    De = _exact_dist(emb)
    assert ((G > 0).sum(axis=1) < k).all()
    got = umap_neighbors(X, k, source="graph", random_state=0)
    _assert_valid(got, n, k)
    for i in range(n):
        nz = np.flatnonzero(G[i] > 0)
        nz = nz[nz != i]
        head = nz[np.lexsort((nz, -G[i, nz]))]
        rest = np.setdiff1d(np.arange(n), np.append(nz, i))
        tail = rest[np.lexsort((rest, De[i, rest]))]
        np.testing.assert_array_equal(got[i], np.concatenate([head, tail])[:k])


# --------------------------------------------------------------------------- dispatch
@pytest.mark.filterwarnings("ignore:The number of connected components:UserWarning")
@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
def test_dispatch_all_baselines():
    X, labels = _blobs(n_per=20, noise_dims=2)
    k = 5
    assert BASELINES == ("Euclidean", "Isomap", "UMAP", "NNDescent", "URF-Breiman")
    direct = {
        "Euclidean": euclidean_neighbors,
        "Isomap": isomap_neighbors,
        "UMAP": umap_neighbors,
        "NNDescent": nndescent_neighbors,
        "URF-Breiman": breiman_urf_neighbors,
    }
    for name in BASELINES:
        module = {"UMAP": "umap", "NNDescent": "pynndescent"}.get(name)
        if module is not None:
            pytest.importorskip(module)
        got = baseline_neighbors(name, X, k, random_state=0)
        _assert_valid(got, X.shape[0], k)
        np.testing.assert_array_equal(got, direct[name](X, k, random_state=0))
    # Baseline-specific options are forwarded.
    np.testing.assert_array_equal(
        baseline_neighbors("URF-Breiman", X, k, n_estimators=7),
        breiman_urf_neighbors(X, k, n_estimators=7),
    )


def test_dispatch_rejects_unknown_name():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="unknown baseline") as info:
        baseline_neighbors("FLANN", X, 2)
    for name in BASELINES:
        assert name in str(info.value)


# --------------------------------------------------------------------------- optional deps
@pytest.mark.parametrize(
    ("module", "func"), [("umap", umap_neighbors), ("pynndescent", nndescent_neighbors)]
)
def test_missing_optional_dependency(monkeypatch, module, func):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ImportError, match=r"pip install 'geoforest\[experiments\]'"):
        func(X, 2)


def test_module_imports_without_optional_dependencies():
    code = (
        "import sys; sys.modules['umap'] = None; sys.modules['pynndescent'] = None; "
        "import geoforest_experiments.baselines as b; "
        "assert 'umap' not in dir(b) and sys.modules['umap'] is None; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
