"""The geometries behind every clusterer's graph, against brute force."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial.distance import cdist
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.graph import make_geometry
from tests.properties._strategies import repeated_scales, repeated_shifts, repeated_values


def _blobs(seed, n_blobs=4, per=25, d=3, gap=8.0):
    rng = np.random.RandomState(seed)
    centres = rng.uniform(-gap * n_blobs, gap * n_blobs, (n_blobs, d))
    return np.vstack([rng.randn(per, d) + c for c in centres])


def _knn_graph(ind, n):
    k = ind.shape[1]
    return sp.csr_matrix((np.ones(ind.size), ind.ravel(), np.arange(0, ind.size + 1, k)), (n, n))


def _quotient_mst_length(D, comp):
    """Total length of the minimum spanning forest joining the components (brute force)."""
    c = comp.max() + 1
    Q = np.full((c, c), np.inf)
    for a in range(c):
        for b in range(c):
            if a != b:
                Q[a, b] = D[np.ix_(comp == a, comp == b)].min()
    Q[~np.isfinite(Q)] = 0
    return minimum_spanning_tree(Q).sum()


def test_euclidean_neighbors_are_brute_force():
    X = _blobs(0)
    g = make_geometry("euclidean").fit(X)
    dist, ind = g.neighbors(5)
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    np.testing.assert_allclose(dist, np.sort(D, axis=1)[:, :5])
    qd, qi = g.query(X[:3] + 0.01, 4)
    np.testing.assert_allclose(qd, np.sort(cdist(X[:3] + 0.01, X), axis=1)[:, :4])


def test_precomputed_neighbors_and_queries():
    X = _blobs(1)
    D = cdist(X, X)
    g = make_geometry("precomputed").fit(D)
    dist, ind = g.neighbors(6)
    Dn = D.copy()
    np.fill_diagonal(Dn, np.inf)
    np.testing.assert_allclose(dist, np.sort(Dn, axis=1)[:, :6])
    qd, _ = g.query(cdist(X[:2] + 0.5, X), 3)
    np.testing.assert_allclose(qd, np.sort(cdist(X[:2] + 0.5, X), axis=1)[:, :3])
    from sklearn.neighbors import kneighbors_graph

    sparse = kneighbors_graph(X, 3, mode="distance")
    with pytest.raises(ValueError, match="stores 3 neighbours"):
        make_geometry("precomputed").fit(sparse).neighbors(5)
    with pytest.raises(ValueError, match="metric must be one of"):
        make_geometry("cosine")


def test_precomputed_keeps_zero_edges_and_leaves_the_callers_graph_alone():
    data = np.array([0.0, 0.0, 2.0, 0.0, 1.0, 2.0, 1.0])  # stored zeros: 0-0, 0-1, 1-0
    G = sp.csr_matrix((data, [0, 1, 2, 0, 2, 0, 1], [0, 3, 5, 7]), shape=(3, 3))
    before = G.copy()
    dist, ind = make_geometry("precomputed").fit(G).neighbors(1)
    np.testing.assert_array_equal(ind[:, 0], [1, 0, 1])
    np.testing.assert_array_equal(dist[:, 0], [0.0, 0.0, 1.0])
    assert G.nnz == before.nnz and (G != before).nnz == 0


def test_forest_geometry_reuses_a_fitted_forest_on_its_own_data_only():
    X = _blobs(2)
    forest = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X)
    g = make_geometry("forest", forest).fit(X)
    assert g.forest_ is forest
    np.testing.assert_array_equal(g.neighbors(5)[1], forest.kneighbors(n_neighbors=5)[1])
    with pytest.raises(ValueError, match="grown on other points"):
        make_geometry("forest", forest).fit(X[:-1])
    fresh = make_geometry("forest", gf.UnsupervisedForest(n_estimators=20)).fit(X)
    assert fresh.forest_ is not forest and fresh.n_samples_ == X.shape[0]
    trans = gf.ForestNeighborsTransformer(n_neighbors=5, random_state=0).fit(X)
    assert make_geometry("forest", trans).fit(X).forest_ is trans.forest_
    with pytest.raises(TypeError, match="geoforest forest"):
        make_geometry("forest", object())


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 4), blobs=st.integers(2, 6))
def test_bridges_are_a_minimum_spanning_forest_of_the_components(seed, k, blobs):
    X = _blobs(seed, n_blobs=blobs, per=12)
    D = cdist(X, X)
    for metric in ("euclidean", "forest"):
        g = make_geometry(metric, gf.UnsupervisedForest(n_estimators=10), random_state=seed)
        g.fit(X)
        dist, ind = g.neighbors(k)
        G = _knn_graph(ind, X.shape[0])
        n_comp, comp = connected_components(G, directed=False)
        pairs, lengths = g.bridges(G, (dist, ind))
        assert len(pairs) == n_comp - 1
        joined = G + sp.csr_matrix((np.ones(len(pairs)), pairs.T), G.shape)
        assert connected_components(joined, directed=False)[0] == 1
        if metric == "euclidean":
            np.testing.assert_allclose(lengths, D[pairs[:, 0], pairs[:, 1]])
            np.testing.assert_allclose(lengths.sum(), _quotient_mst_length(D, comp))
        else:
            # the forest's own distances: every listed pair, as its full ranking gives
            full_d, full_i = g.neighbors(X.shape[0] - 1)
            F = np.full(D.shape, np.inf)
            np.put_along_axis(F, full_i, full_d, axis=1)
            F = np.minimum(F, F.T)
            np.testing.assert_allclose(lengths.sum(), _quotient_mst_length(F, comp), rtol=1e-6)


def test_coordinates_are_the_users_points_or_none_for_distances():
    """The one door the label-free rules draw their references through: the
    user's points (far from zero, unchanged), a subset's own rows, and None
    where the geometry holds only distances."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3)) * [1.0, 10.0, 0.1] + 1e6
    for metric in ("euclidean", "forest"):
        geometry = make_geometry(metric, random_state=0, n_neighbors=5).fit(X)
        C = geometry.coordinates()
        assert C.dtype == np.float64
        np.testing.assert_array_equal(C, X)
        rows = np.array([3, 7, 11])
        np.testing.assert_array_equal(geometry.subset(rows).coordinates(), X[rows])
    D = sp.csr_matrix(cdist(X, X))
    assert make_geometry("precomputed", n_neighbors=5).fit(D).coordinates() is None


def _with_copies(seed, n=80, d=3, groups=((0, 12), (5, 3), (9, 1))):
    """Continuous points (no ties between distinct ones) plus exact copies:
    ``(row, extra copies)`` for each group, appended at the end."""
    X = np.random.RandomState(seed).normal(size=(n, d)) * [1.0, 5.0, 0.2] + 1e4
    extra = [np.repeat(X[[row]], m, axis=0) for row, m in groups]
    return np.vstack([X, *extra])


def _brute_distinct(X, k):
    """The k nearest points not equal to each row; the plain k nearest (its
    copies first) where those all lie in groups of more than k copies."""
    plain = cdist(X, X)
    np.fill_diagonal(plain, np.inf)
    same = (X[:, None, :] == X[None, :, :]).all(axis=2)
    D = np.where(same, np.inf, plain)  # a point and its copies are not distinct neighbours
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    among_atoms = (same.sum(axis=1)[order] > k).all(axis=1)
    D[among_atoms] = plain[among_atoms]
    return np.sort(D, axis=1)[:, :k]


@pytest.mark.parametrize("k", [3, 5, 10])
def test_distinct_neighbors_leave_copies_out(k):
    """Each list is the k nearest points *not equal* to the row (brute force),
    ascending; copies get the same list; without copies it is neighbors()."""
    X = _with_copies(0)
    g = make_geometry("euclidean").fit(X)
    dist, ind = g.distinct_neighbors(k)
    np.testing.assert_allclose(dist, _brute_distinct(X, k), rtol=1e-12)
    assert np.all(np.diff(dist, axis=1) >= 0)
    listed = (X[ind] == X[:, None, :]).all(axis=2)  # copies listed: next to one atom only
    assert np.array_equal(listed.any(axis=1), dist[:, 0] == 0)
    copies = np.flatnonzero((X == X[0]).all(axis=1))
    assert copies.size == 13 and all(set(ind[c]) == set(ind[0]) for c in copies)
    Y = X[:80]  # no copies: the plain lists, exactly
    plain = make_geometry("euclidean").fit(Y)
    for a, b in zip(plain.distinct_neighbors(k), plain.neighbors(k), strict=True):
        np.testing.assert_array_equal(a, b)


def test_distinct_neighbors_keep_plain_lists_past_the_look_limit_and_without_coordinates():
    k = 2
    big = gf.graph.COPIES_LOOKED_PAST * k + 5  # more copies than are looked past
    X = _with_copies(1, groups=((0, big), (3, 2)))
    g = make_geometry("euclidean").fit(X)
    dist, ind = g.distinct_neighbors(k)
    group = np.flatnonzero((X == X[0]).all(axis=1))
    assert np.isin(ind[group], group).all() and np.all(dist[group] == 0)  # its own cluster
    small = np.flatnonzero((X == X[3]).all(axis=1))
    assert np.all(dist[small] > 0)  # the small group still looks past its copies
    D = sp.csr_matrix(cdist(X, X))
    pre = make_geometry("precomputed", n_neighbors=k).fit(D)
    for a, b in zip(pre.distinct_neighbors(), pre.neighbors(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("metric", ["euclidean", "forest"])
def test_a_group_of_copies_is_no_cluster_of_its_own(metric):
    """One Gaussian blob with 40 copies of one of its points (more than
    n_neighbors).  With the copies in each other's lists they were a clique:
    label-free K = 2, and the 2-way cut took them (and 6 more points) off.
    Now the blob is one cluster, and a forced 2-way cut halves it."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 2))
    X = np.vstack([X, np.repeat(X[[10]], 40, axis=0)])
    with pytest.warns(gf.graph.LabelFreeChoiceWarning, match="no cluster structure"):
        free = gf.ForestSpectralClustering(metric=metric, random_state=0).fit(X)
    assert free.n_clusters_ == 1
    two = gf.ForestSpectralClustering(2, metric=metric, random_state=0).fit(X)
    assert np.bincount(two.labels_).min() > 100


def test_two_atoms_that_only_reach_each_other_keep_their_plain_lists():
    """Two values, 40 copies each, k = 15: each point's 15 nearest other points
    are all copies of the other value.  Leaving a point's copies out would list
    only the other atom, a complete bipartite graph no cut separates (K given
    2 scored ARI 0.05, label-free K = 1); each atom keeps its copies.  An atom
    in a cloud of distinct points still looks past its copies."""
    X = np.repeat([[0.0, 0.0], [5.0, 5.0]], 40, axis=0)
    dist, ind = make_geometry("euclidean").fit(X).distinct_neighbors(15)
    assert np.all(dist == 0) and np.all(ind // 40 == np.arange(80)[:, None] // 40)
    cloud = np.random.RandomState(0).normal(size=(200, 2))
    Y = np.vstack([cloud, np.repeat(cloud[[5]], 40, axis=0)])
    dist, ind = make_geometry("euclidean").fit(Y).distinct_neighbors(15)
    assert np.all(dist[200:] > 0)


@pytest.mark.parametrize("metric", ["euclidean", "forest"])
@settings(max_examples=8, deadline=None)
@given(
    sizes=st.lists(st.integers(16, 80), min_size=2, max_size=5),
    shift=repeated_shifts,
    scale=repeated_scales,
    seed=st.integers(0, 2**16),
)
def test_atoms_of_copies_far_apart_are_its_clusters(metric, sizes, shift, scale, seed):
    """Data of a few distinct values, each repeated more than n_neighbors
    times, far from zero and in any unit: every value is a cluster,
    label-free and with K given."""
    X, y = repeated_values(sizes, shift, scale, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gf.graph.LabelFreeChoiceWarning)
        free = gf.ForestSpectralClustering(metric=metric, random_state=0).fit(X)
    given = gf.ForestSpectralClustering(len(sizes), metric=metric, random_state=0).fit(X)
    assert free.n_clusters_ == len(sizes)
    assert adjusted_rand_score(y, free.labels_) == 1.0
    assert adjusted_rand_score(y, given.labels_) == 1.0


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 30),
    copies=st.lists(st.integers(0, 12), min_size=1, max_size=4),
    k=st.integers(1, 6),
    seed=st.integers(0, 10_000),
)
def test_distinct_neighbors_on_careless_inputs(n, copies, k, seed):
    """Few points, many copies, every row repeated, huge offsets: valid lists of
    shape (n, k), never the row itself, a copy only where no k others exist."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 2)) * 1e3 + 1e12
    X = np.vstack([X, *(np.repeat(X[[i % n]], m, axis=0) for i, m in enumerate(copies))])
    N = X.shape[0]
    if k >= N:
        return
    g = make_geometry("euclidean").fit(X)
    dist, ind = g.distinct_neighbors(k)
    assert dist.shape == ind.shape == (N, k)
    assert np.all((ind >= 0) & (ind < N)) and not np.any(ind == np.arange(N)[:, None])
    same = (X[ind] == X[:, None, :]).all(axis=2)
    equal = (X[:, None, :] == X[None, :, :]).all(axis=2)
    others = N - equal.sum(axis=1)
    size = N - others  # the row's group, itself included
    looked_past = (size - 1 <= gf.graph.COPIES_LOOKED_PAST * k) & (others >= k)
    among_atoms, unclear = _nearest_others_in_atoms(X, equal, k)
    assert not same[looked_past & ~among_atoms & ~unclear].any()
    plain = looked_past & among_atoms  # surrounded by atoms only: the plain list
    np.testing.assert_array_equal(same[plain].sum(axis=1), np.minimum(size[plain] - 1, k))


def _nearest_others_in_atoms(X, equal, k):
    """Brute force: whether each row's k nearest *other* points all lie in groups
    of more than k copies, and the rows where ties at the k-th distance leave
    it open (some orders of the tied points would say yes, some no)."""
    D = cdist(X, X)
    D[equal] = np.inf
    kth = np.sort(D, axis=1)[:, k - 1 : k]
    atom = equal.sum(axis=1) > k
    within, inside = D <= kth, D < kth
    tie = within & ~inside
    yes = np.array([atom[w].all() for w in within])
    no = np.array(
        [(~atom[i]).any() or atom[t].sum() < k - i.sum() for i, t in zip(inside, tie, strict=True)]
    )
    return yes, ~yes & ~no


def test_forest_bridges_are_the_exact_spanning_forest_of_its_learned_metric():
    """Separated blobs far from zero, short lists (no list reaches another blob):
    the bridges are the minimum spanning forest of the components under the
    forest's own metric, sqrt(sum_j w_j (x_j - y_j)^2) over every pair (brute
    force), in its units; with a proximity ranking the lists' Borůvka still runs."""
    X = _blobs(3, n_blobs=5, per=30, d=4, gap=30.0) + 1e7
    forest = gf.UnsupervisedForest(n_estimators=20, random_state=0)
    g = make_geometry("forest", forest, random_state=0, n_neighbors=3).fit(X)
    w = g.forest_.metric_weights_
    assert w is not None and w.shape == (4,) and np.all(w >= 0)
    dist, ind = g.neighbors(3)
    G = _knn_graph(ind, X.shape[0])
    n_comp, comp = connected_components(G, directed=False)
    assert n_comp >= 5
    pairs, lengths = g.bridges(G, (dist, ind))
    F = cdist(X * np.sqrt(w), X * np.sqrt(w))
    np.testing.assert_allclose(lengths, F[pairs[:, 0], pairs[:, 1]], rtol=1e-9)
    np.testing.assert_allclose(lengths.sum(), _quotient_mst_length(F, comp), rtol=1e-9)
    g.forest_.set_params(distance="proximity")
    assert g.forest_.metric_weights_ is None
    pairs, _ = g.bridges(G, g.neighbors(3))
    joined = G + sp.csr_matrix((np.ones(len(pairs)), pairs.T), G.shape)
    assert len(pairs) == n_comp - 1 and connected_components(joined, directed=False)[0] == 1


@settings(max_examples=20, deadline=None)
@given(k=st.one_of(st.integers(-5, 0), st.integers(23, 40), st.floats(0.5, 5.5), st.booleans()))
def test_distinct_neighbors_refuse_what_neighbors_refuses(k):
    """The same one check of n_neighbors as neighbors() (22 points here)."""
    X = _with_copies(2, n=12, groups=((0, 6), (1, 4)))
    g = make_geometry("euclidean").fit(X)
    with pytest.raises((TypeError, ValueError)) as distinct:
        g.distinct_neighbors(k)
    with pytest.raises(type(distinct.value)):
        g.neighbors(k)
