"""The graph layer's exact Euclidean MST and the Borůvka kernel behind it, against scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist

from geoforest.graph import euclidean_mst
from geoforest.graph._boruvka import boruvka_forest, no_neighbor_lists
from geoforest.graph._mst import _resolve_method


def _scipy_mst_weight(X):
    return minimum_spanning_tree(cdist(X, X)).sum()


@pytest.mark.parametrize(
    ("n", "d", "method"),
    [
        (3000, 2, "auto"),
        (1500, 3, "boruvka"),
        (1000, 5, "auto"),
        (800, 10, "boruvka"),
        (600, 20, "auto"),
        (500, 35, "auto"),
        (400, 35, "boruvka"),
        (500, 50, "boruvka"),
        (300, 8, "brute"),
    ],
)
def test_mst_weight_equals_scipy(n, d, method):
    X = np.random.default_rng(n + d).standard_normal((n, d))
    weights, edges = euclidean_mst(X, method=method)
    assert weights.shape == (n - 1,) and edges.shape == (n - 1, 2)
    assert np.all(np.diff(weights) >= 0) and np.all(edges[:, 0] < edges[:, 1])
    np.testing.assert_allclose(weights.sum(), _scipy_mst_weight(X), rtol=1e-10)
    np.testing.assert_allclose(
        weights, np.linalg.norm(X[edges[:, 0]] - X[edges[:, 1]], axis=1), rtol=1e-12
    )
    tree = sp.coo_array((np.ones(n - 1), (edges[:, 0], edges[:, 1])), shape=(n, n))
    assert sp.csgraph.connected_components(tree, directed=False)[0] == 1


def test_boruvka_with_ties_and_duplicates_matches_kdtree():
    X = np.random.default_rng(5).integers(0, 5, (400, 3)).astype(float)
    w_b, _ = euclidean_mst(X, method="boruvka")
    w_k, _ = euclidean_mst(X, method="kdtree")
    np.testing.assert_array_equal(w_b, w_k)
    unique = np.unique(X, axis=0)
    assert w_b.sum() == pytest.approx(_scipy_mst_weight(unique))  # duplicates add 0


def test_mst_method_by_dimension():
    assert _resolve_method("auto", 2) == "kdtree"
    assert _resolve_method("auto", 20) == "kdtree"
    assert _resolve_method("auto", 21) == "brute"
    assert _resolve_method("auto", 1) == "boruvka"  # quitefastmst's trees need d >= 2
    with pytest.raises(ValueError, match="2 <= d <= 20"):
        _resolve_method("kdtree", 30)
    with pytest.raises(ValueError, match="method must be"):
        _resolve_method("prim", 3)
    # One-dimensional data goes through our Borůvka.
    x = np.array([[3.0], [0.0], [1.0], [7.0]])
    w, e = euclidean_mst(x)
    assert w.tolist() == [1.0, 2.0, 4.0] and e.tolist() == [[1, 2], [0, 2], [0, 3]]


def test_boruvka_forest_from_components_matches_the_emst_restricted_to_them():
    # The kernel behind euclidean_mst(method="boruvka") and bridge_components: started
    # from groups of points, it joins the groups by their closest pairs (Borůvka rounds).
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(c, 0.1, (20, 2)) for c in ([0, 0], [3, 0], [0, 4], [7, 7])])
    uf = np.repeat(np.arange(4) * 20, 20).astype(np.int64)
    weights, edges, rounds = boruvka_forest(X, 16, uf, *no_neighbor_lists())
    assert weights.shape == (3,) and np.all(np.diff(rounds) >= 0)
    groups = edges // 20
    assert len({frozenset(g) for g in groups.tolist()}) == 3
    for (a, b), (ga, gb), w in zip(edges, groups, weights, strict=True):
        A, B = X[ga * 20 : ga * 20 + 20], X[gb * 20 : gb * 20 + 20]
        block = np.linalg.norm(A[:, None] - B[None], axis=2)
        assert w == pytest.approx(block.min()) == pytest.approx(np.linalg.norm(X[a] - X[b]))
