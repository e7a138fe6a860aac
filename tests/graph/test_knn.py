"""The graph layer's kNN graphs: spatial neighbours, and the bridges that connect a graph."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial.distance import cdist
from sklearn.neighbors import kneighbors_graph

from geoforest.graph import bridge_components, spatial_knn
from geoforest.graph._knn import knn


def test_bridges_are_a_minimum_spanning_forest_of_the_components():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(c, 0.1, (15, 2)) for c in ([0, 0], [3, 0], [0, 4], [7, 7])])
    G = kneighbors_graph(X, 4, include_self=False)
    n_comp, comp = connected_components(G, directed=False)
    assert n_comp == 4
    pairs, lengths = bridge_components(X, G)
    # Reference: MST of the component graph weighted by the closest pair, brute force.
    D = cdist(X, X)
    closest = np.array(
        [
            [D[np.ix_(comp == a, comp == b)].min() if a != b else 0 for b in range(4)]
            for a in range(4)
        ]
    )
    ref = minimum_spanning_tree(closest).sum()
    assert lengths.sum() == pytest.approx(ref)
    np.testing.assert_allclose(lengths, np.linalg.norm(X[pairs[:, 0]] - X[pairs[:, 1]], axis=1))
    # The same forest read from neighbour lists (exact shortcut) where it can be.
    dist, ind = knn(X, 4)
    pairs2, lengths2 = bridge_components(X, G, (dist, ind))
    assert lengths2.sum() == pytest.approx(ref)
    B = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=G.shape)
    assert connected_components(G + B, directed=False)[0] == 1


def test_spatial_knn_matches_brute_force():
    rng = np.random.RandomState(0)
    h, w, r, k = 7, 9, 2, 5
    X = rng.normal(size=(h * w, 3))
    dist, ind = spatial_knn(X, (h, w), r, k)
    rows, cols = np.divmod(np.arange(h * w), w)
    for i in range(h * w):
        near = (np.abs(rows - rows[i]) <= r) & (np.abs(cols - cols[i]) <= r)
        near[i] = False
        cand = np.flatnonzero(near)
        d = np.linalg.norm(X[cand] - X[i], axis=1)
        np.testing.assert_allclose(dist[i], np.sort(d)[:k])
        assert set(ind[i]) == set(cand[np.argsort(d)[:k]])
