"""The graph layer as the one door: fit_geometry's contract on ordinary and careless inputs.

Each property here failed before issue 53: a forest that centres columns far
from zero made the geometry refuse its own training data and bridge with
doubly centred rows; the graph helpers failed deep inside SciPy on bad lists.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest.graph import (
    SubsetGeometry,
    bridge_components,
    fit_geometry,
    knn_affinity,
    spanning_tree,
)

FAST = settings(max_examples=12, deadline=None, derandomize=True)


def _blobs(seed: int, n: int = 60, d: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    half = n // 2
    return np.vstack([rng.normal(0, 0.3, (half, d)), rng.normal(3, 0.3, (n - half, d))])


def _forest():
    return gf.UnsupervisedForest(20, random_state=0)


@FAST
@given(seed=st.integers(0, 2**16), shift=st.sampled_from([0.0, 1e3, 1e4, 1e6]))
def test_a_fitted_forest_is_accepted_as_the_geometry_of_its_own_data_far_from_zero(seed, shift):
    X = _blobs(seed) + shift
    forest = _forest().fit(X)
    g = fit_geometry(X, "forest", forest=forest, n_neighbors=5)
    assert g.forest_ is forest
    d, i = g.neighbors()
    d0, i0 = forest.kneighbors(None, 5)
    np.testing.assert_array_equal(i, i0)


@FAST
@given(seed=st.integers(0, 2**16), shift=st.sampled_from([1e3, 1e4, 1e6]))
def test_bridges_of_the_forest_geometry_do_not_move_with_the_data(seed, shift):
    X = _blobs(seed)
    trees = []
    for Z in (X, X + shift):
        g = fit_geometry(Z, "forest", forest=_forest(), n_neighbors=3)
        trees.append(g.spanning_tree())
    (w0, _), (w1, _) = trees
    # float32 rounds X + shift differently from X (last bits), nothing more: before
    # the fix the bridges of the shifted data were searched from doubly centred rows.
    np.testing.assert_allclose(w0, w1, rtol=1e-3, atol=1e-4)


def test_a_forest_grown_on_other_points_is_refused_in_one_line():
    X = _blobs(0)
    forest = _forest().fit(X[:40])
    with pytest.raises(ValueError, match="grown on other points"):
        fit_geometry(X, "forest", forest=forest)


@pytest.mark.parametrize("metric", ["euclidean", "forest", "precomputed"])
def test_complex_input_is_refused(metric):
    X = _blobs(1, n=12).astype(complex)
    if metric == "precomputed":
        X = np.abs(X[:, :1] - X[:, :1].T) + 0j
    with pytest.raises(ValueError, match="[Cc]omplex"):
        fit_geometry(X, metric, n_neighbors=3)


def test_a_feature_matrix_given_as_a_graph_says_what_to_pass():
    with pytest.raises(ValueError, match="metric='euclidean' or metric='forest'"):
        fit_geometry(np.ones((178, 13)), "precomputed")


@pytest.mark.parametrize("k", [0, -1, 12, 2.5, True])
def test_n_neighbors_is_checked_once_where_it_is_read(k):
    g = fit_geometry(_blobs(2, n=12), n_neighbors=3)
    with pytest.raises((ValueError, TypeError)):
        g.neighbors(k)


def test_precomputed_dense_distances_give_the_euclidean_neighbours_and_tree():
    X = _blobs(3, n=40)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    ge, gp = fit_geometry(X, n_neighbors=6), fit_geometry(D, "precomputed", n_neighbors=6)
    np.testing.assert_array_equal(ge.neighbors()[1], gp.neighbors()[1])
    np.testing.assert_allclose(ge.neighbors()[0], gp.neighbors()[0])
    (we, _), (wp, _) = ge.spanning_tree(), gp.spanning_tree()
    np.testing.assert_allclose(np.sort(we), np.sort(wp))


def test_subset_geometry_lists_the_kept_points_of_the_same_metric():
    X = _blobs(4, n=50)
    g = fit_geometry(X, n_neighbors=4)
    rows = np.arange(0, 50, 2)
    sub = g.subset(rows)
    assert isinstance(sub, SubsetGeometry)
    d, i = sub.neighbors()
    ref = fit_geometry(X[rows], n_neighbors=4).neighbors()
    np.testing.assert_array_equal(i, ref[1])
    np.testing.assert_allclose(d, ref[0])
    with pytest.raises(ValueError, match="increasing"):
        SubsetGeometry(g, rows[::-1])


# ------------------------------------------------------------------ graph helpers
@FAST
@given(
    n=st.integers(1, 6),
    k=st.integers(0, 3),
    bad=st.sampled_from(["negative", "too_big", "float", "rows", "1d"]),
)
def test_knn_affinity_refuses_bad_lists_with_its_own_message(n, k, bad):
    ind = np.zeros((n, max(k, 1)), dtype=np.int64)
    if bad == "negative":
        ind[0, 0] = -1
    elif bad == "too_big":
        ind[0, 0] = n
    elif bad == "float":
        ind = ind + 0.5
    elif bad == "rows":
        ind = np.zeros((n + 1, 1), dtype=np.int64)
    else:
        ind = ind.ravel()
    with pytest.raises(ValueError, match="ind|n must"):
        knn_affinity(ind, n)


@pytest.mark.parametrize(
    "case", ["graph_shape", "lists_shape", "lists_range", "x_1d", "x_nan", "dist_shape"]
)
def test_bridge_components_refuses_bad_inputs_with_its_own_message(case):
    X, G = np.random.default_rng(0).normal(size=(6, 2)), sp.eye(6, format="csr")
    nb = (np.zeros((6, 2)), np.zeros((6, 2), dtype=np.int64))
    if case == "graph_shape":
        G = sp.eye(5, format="csr")
    elif case == "lists_shape":
        nb = (np.zeros((5, 2)), np.zeros((5, 2), dtype=np.int64))
    elif case == "lists_range":
        nb = (np.zeros((6, 2)), np.full((6, 2), 6))
    elif case == "x_1d":
        X = X[:, 0]
    elif case == "x_nan":
        X[0, 0] = np.nan
    else:
        nb = (np.zeros((6, 3)), nb[1])
    with pytest.raises(ValueError, match="bridge_components|X must|G must|neighbors"):
        bridge_components(X, G, nb)


def test_spanning_tree_refuses_bad_edges():
    with pytest.raises(ValueError, match="one length per edge"):
        spanning_tree(3, [0, 1], [1, 2], [1.0])
    with pytest.raises(ValueError, match=r"in \[0, 3\)"):
        spanning_tree(3, [0, 3], [1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative"):
        spanning_tree(3, [0, 1], [1, 2], [1.0, np.nan])


def test_a_dense_query_row_keeps_its_zeros_as_copies():
    X = _blobs(5, n=20)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    g = fit_geometry(D, "precomputed", n_neighbors=3)
    d, i = g.query(D[:4], 2)  # each row is a training point: itself at distance 0 first
    np.testing.assert_array_equal(i[:, 0], np.arange(4))
    np.testing.assert_array_equal(d[:, 0], 0.0)
