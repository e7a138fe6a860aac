"""DiffusionMap against dense computations from the definitions; graph helpers; errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist
from sklearn.neighbors import kneighbors_graph

import geoforest as gf
from geoforest.diffusion import DiffusionMap


def _blobs(n=40, seed=0, gap=3.0):
    rng = np.random.RandomState(seed)
    half = n // 2
    return np.vstack([rng.normal(0, 0.3, (half, 2)), rng.normal(gap, 0.3, (n - half, 2))])


def _dense_reference(X, k, sigma, t):
    """W, P^t and D_t straight from the definitions, all n x n."""
    G = kneighbors_graph(X, k, mode="distance", include_self=False).toarray()
    edge = (G > 0) | (G.T > 0)
    D = cdist(X, X)
    W = np.where(edge, np.exp(-((D / sigma) ** 2)), 0.0)
    d = W.sum(axis=1)
    P = W / d[:, None]
    pi = d / d.sum()
    Pt = np.linalg.matrix_power(P, t)
    Dt = np.sqrt(((Pt[:, None, :] - Pt[None, :, :]) ** 2 / pi[None, None, :]).sum(axis=2))
    return W, Dt


@pytest.mark.parametrize("t", [1, 2, 5])
def test_diffusion_distance_matches_definition(t):
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, (30, 2))
    dm = DiffusionMap(
        n_neighbors=6, sigma=0.3, n_components=30, cutoff=None, eigen_solver="dense"
    ).fit(X)
    assert dm.n_bridges_ == 0
    W, Dt = _dense_reference(X, 6, 0.3, t)
    np.testing.assert_allclose(dm.affinity_.toarray(), W, atol=1e-12)
    np.testing.assert_allclose(dm.distances(t), Dt, atol=1e-8)
    # Sub-blocks and neighbours from the same geometry.
    np.testing.assert_allclose(
        dm.distances(t, rows=[3, 4], cols=[0, 29]), Dt[np.ix_([3, 4], [0, 29])], atol=1e-8
    )
    dist, ind = dm.kneighbors(n_neighbors=4, t=t)
    np.fill_diagonal(Dt, np.inf)
    np.testing.assert_allclose(dist, np.sort(Dt, axis=1)[:, :4], atol=1e-8)


def test_eigenvectors_are_right_eigenvectors_with_textbook_norm():
    X = _blobs(60)
    dm = DiffusionMap(n_neighbors=8, n_components=6, random_state=0).fit(X)
    W = dm.affinity_.toarray()
    P = W / W.sum(axis=1)[:, None]
    psi, lam = dm.eigenvectors_, dm.eigenvalues_
    np.testing.assert_allclose(P @ psi, psi * lam, atol=1e-7)
    np.testing.assert_allclose((dm.stationary_[:, None] * psi**2).sum(axis=0), 1.0, atol=1e-7)
    assert lam[0] == pytest.approx(1.0) and np.all(np.diff(lam) <= 1e-12)
    np.testing.assert_allclose(psi[:, 0], 1.0, atol=1e-7)  # constant on a connected graph


def test_symmetric_normalization_is_unit_eigenvectors_of_M():
    X = _blobs(50)
    dm = DiffusionMap(n_neighbors=8, n_components=5, normalization="symmetric", random_state=0)
    dm.fit(X)
    W = dm.affinity_.toarray()
    s = 1 / np.sqrt(W.sum(axis=1))
    M = s[:, None] * W * s[None, :]
    phi = dm.eigenvectors_
    np.testing.assert_allclose(M @ phi, phi * dm.eigenvalues_, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(phi, axis=0), 1.0, atol=1e-10)


def test_truncated_diffusion_distance_converges_with_t():
    X = _blobs(60, seed=3)
    full = DiffusionMap(n_neighbors=8, n_components=60, eigen_solver="dense").fit(X)
    part = DiffusionMap(n_neighbors=8, n_components=10, random_state=0).fit(X)
    err = [np.abs(full.distances(t) - part.distances(t)).max() for t in (1, 16, 256)]
    assert err[2] < err[0] and err[2] < 1e-6


def test_precomputed_affinity_and_distance_graph_match_gaussian():
    X = _blobs(40, gap=1.0)
    dm = DiffusionMap(n_neighbors=7, sigma=0.5, n_components=5, cutoff=None, random_state=0).fit(X)
    pre = DiffusionMap(n_components=5, affinity="precomputed", random_state=0)
    pre.fit(dm.affinity_)
    np.testing.assert_allclose(pre.distances(3), dm.distances(3), atol=1e-8)
    G = kneighbors_graph(X, 7, mode="distance")
    dist = DiffusionMap(
        7, metric="precomputed", n_components=5, sigma=0.5, cutoff=None, random_state=0
    ).fit(G)
    # Without bridges (one component here) it is the same graph.
    assert connected_components(dm.affinity_)[0] == 1
    np.testing.assert_allclose(dist.distances(3), dm.distances(3), atol=1e-8)
    # The former spelling still works, for one release, with a FutureWarning.
    old = DiffusionMap(
        7, n_components=5, sigma=0.5, cutoff=None, affinity="precomputed_distance", random_state=0
    )
    with pytest.warns(FutureWarning, match="metric='precomputed'"):
        old.fit(G)
    np.testing.assert_array_equal(old.embedding(), dist.embedding())


@pytest.mark.parametrize("kernel", ["gaussian", "adaptive"])
def test_precomputed_dense_distances_give_the_euclidean_map(kernel):
    """Issue 53: ``n_neighbors`` means the same on a precomputed graph (each row's
    ``n_neighbors`` smallest entries) as on features, and so do ``sigma`` (the
    median ``n_neighbors``-th distance) and ``cutoff``: a dense distance matrix
    gives the map of its features, fit and transform."""
    X = _blobs(60, gap=1.0)
    Z = X[:7] + 0.01
    euc = DiffusionMap(n_components=5, kernel=kernel, random_state=0).fit(X)
    assert euc.n_bridges_ == 0 and euc.n_graph_components_ == 1
    pre = DiffusionMap(metric="precomputed", n_components=5, kernel=kernel, random_state=0)
    Y = pre.fit_transform(cdist(X, X))
    assert pre.sigma_ == pytest.approx(euc.sigma_, rel=1e-12)
    np.testing.assert_allclose(pre.knn_distances_, euc.knn_distances_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(pre.knn_indices_, euc.knn_indices_)
    np.testing.assert_allclose(np.abs(Y), np.abs(euc.embedding()), atol=1e-8)
    signs = np.sign(Y[0]) * np.sign(euc.embedding()[0])
    np.testing.assert_allclose(pre.transform(cdist(Z, X)) * signs, euc.transform(Z), atol=1e-8)
    np.testing.assert_allclose(pre.transform(cdist(X, X)), Y, atol=0)  # the training rows


def test_forest_kneighbors_graph_drives_a_diffusion_map():
    X = _blobs(200)
    forest = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X)
    G = forest.kneighbors_graph(n_neighbors=10, mode="distance")
    dm = DiffusionMap(10, n_components=4, metric="precomputed", random_state=0)
    # The lists are each row's 10 smallest entries (the forest's rows may hold
    # more, tied); their graph's components are the user's: not bridged (only
    # what the cutoff splits within one of them is rejoined).
    order = [np.argsort(G[i].data, kind="stable")[:10] for i in range(200)]
    lists = sp.csr_matrix(
        (
            np.ones(2000),
            np.concatenate([G[i].indices[o] for i, o in enumerate(order)]),
            np.arange(0, 2001, 10),
        ),
        shape=(200, 200),
    )
    n_comp = connected_components(lists, directed=False)[0]
    if n_comp > 1:  # the forest's graph may or may not be connected already
        with pytest.warns(UserWarning, match=f"{n_comp} connected components"):
            dm.fit(G)
    else:
        dm.fit(G)
    assert dm.n_graph_components_ == n_comp
    assert dm.sigma_ > 0
    same = dm.distances(256, rows=[0], cols=np.arange(1, 100)).max()
    other = dm.distances(256, rows=[0], cols=np.arange(100, 200)).min()
    assert same < other


def test_graph_is_connected_after_bridging_noise():
    X, _ = gf.datasets.make_multidensity_clusters(600, n_clusters=3, random_state=0)
    dm = DiffusionMap(random_state=0).fit(X)
    assert dm.n_graph_components_ == 1 and dm.n_bridges_ > 0
    assert np.sum(dm.eigenvalues_ > 1 - 1e-10) == 1


def test_same_seed_same_result():
    X = _blobs(300)
    a = DiffusionMap(n_components=6, random_state=3).fit(X).embedding(4)
    b = DiffusionMap(n_components=6, random_state=3).fit(X).embedding(4)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "X, params, match",
    [
        (np.array([[0.0, np.nan], [1.0, 1.0], [2.0, 2.0]]), {}, "NaN"),
        (np.zeros((1, 2)), {}, "minimum of 2"),
        (np.zeros((0, 2)), {}, "minimum of 2"),
        (_blobs(10), {"n_neighbors": 10}, "n_neighbors"),
        (_blobs(10), {"n_neighbors": 3, "n_components": 11}, "n_components"),
        (np.ones((10, 3)), {"n_neighbors": 3}, "coincides"),
    ],
)
def test_bad_input(X, params, match):
    with pytest.raises(ValueError, match=match):
        DiffusionMap(**params).fit(X)


def test_bad_precomputed_and_queries():
    with pytest.raises(ValueError, match="negative"):
        DiffusionMap(affinity="precomputed", n_components=2).fit(-sp.eye(3, format="csr"))
    with pytest.raises(ValueError, match="square"):
        DiffusionMap(affinity="precomputed").fit(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="no edge"):
        DiffusionMap(affinity="precomputed", n_components=2).fit(sp.csr_matrix((4, 4)))
    dm = DiffusionMap(n_neighbors=3, n_components=3).fit(_blobs(12))
    with pytest.raises(ValueError, match="t must"):
        dm.embedding(-1)
    with pytest.raises(ValueError, match="n_neighbors"):
        dm.kneighbors(n_neighbors=12, t=1)
    with pytest.raises(IndexError):
        dm.distances(1, rows=[12])


@pytest.mark.parametrize("affinity", ["gaussian", "precomputed", "precomputed_distance"])
def test_complex_input_refused_in_one_line(affinity):
    """Issue 23: complex X dumped the whole array (features) or lost its imaginary part."""
    X = sp.csr_matrix(np.ones((6, 6)) * (1 + 1j)) if affinity != "gaussian" else _blobs(12) + 1j
    with warnings.catch_warnings():
        # "precomputed_distance" is the deprecated spelling; its warning has its own test.
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="^Complex data not supported by DiffusionMap") as e:
            DiffusionMap(n_neighbors=3, n_components=2, affinity=affinity).fit(X)
        assert "\n" not in str(e.value)
        with pytest.raises(ValueError, match="^Complex data not supported by LUND"):
            gf.LUND(n_neighbors=3, n_components=2, affinity=affinity).fit(X)


# ------------------------------------------------------------- transform ----------
def _nystrom_reference(dm, X, Z, t):
    """Nyström coordinates written out from the definition, one new point at a time."""
    D = cdist(Z, X)
    k, sigma = dm.n_neighbors, dm.sigma_
    lam, vec = dm.eigenvalues_, dm.eigenvectors_
    scale = np.sort(cdist(X, X), axis=1)[:, dm.local_scale_neighbor]  # column 0: the point
    out = []
    for d in D:
        nbr = np.argsort(d, kind="stable")[:k]
        dk = d[nbr]
        if dm.kernel == "adaptive":
            w = np.exp(-(dk**2) / (dk[dm.local_scale_neighbor - 1] * scale[nbr]))
        else:
            w = np.exp(-((dk / sigma) ** 2))
            if dm.cutoff is not None:
                keep = w >= np.exp(-(dm.cutoff**2))
                if not keep.any():  # bridged to the nearest training point
                    keep[0] = True
                    w[0] = np.exp(-(min(dk[0] / sigma, dm.cutoff) ** 2))
                nbr, w = nbr[keep], w[keep]
        p = w / w.sum()
        if dm.normalization == "symmetric":
            psi_x = np.sqrt(w.sum()) * (p @ (vec[nbr] / np.sqrt(dm.degree_[nbr, None]))) / lam
        else:
            psi_x = (p @ vec[nbr]) / lam
        out.append(np.sign(lam) * np.abs(lam) ** t * psi_x)
    return np.array(out)


def _new_points(seed=5):
    rng = np.random.RandomState(seed)
    return np.vstack(
        [
            rng.normal(0, 0.3, (5, 2)),
            rng.normal(3, 0.3, (5, 2)),
            [[1.5, 1.5], [-1.6, 0.0], [0.0, 4.5]],  # between the blobs; far (no edge under cutoff)
        ]
    )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"normalization": "symmetric"},
        {"kernel": "adaptive", "local_scale_neighbor": 4},
        {"cutoff": None},
        {"t": 3.5},
        {"t": 0.0},
    ],
)
def test_transform_new_points_is_the_nystrom_formula(params):
    X = _blobs(60)
    dm = DiffusionMap(n_neighbors=6, n_components=8, eigen_solver="dense", **params).fit(X)
    Z = _new_points()
    if dm.cutoff is not None and dm.kernel == "gaussian":
        d = np.sort(cdist(Z, X), axis=1)[:, 0]
        assert np.sum(d > dm.cutoff * dm.sigma_) >= 1  # the bridge rule is exercised
    ref = _nystrom_reference(dm, X, Z, dm.t)
    np.testing.assert_allclose(dm.transform(Z), ref, rtol=1e-10, atol=1e-12)
    # Other times without a refit: set_params(t=...) changes transform only.
    before = dm.eigenvectors_.copy()
    dm.set_params(t=8.0)
    np.testing.assert_allclose(
        dm.transform(Z), _nystrom_reference(dm, X, Z, 8.0), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_array_equal(dm.eigenvectors_, before)


@pytest.mark.parametrize(
    "params", [{}, {"normalization": "symmetric"}, {"kernel": "adaptive"}, {"t": 16.0}]
)
def test_transform_of_the_training_points_is_fit_transform(params):
    X = _blobs(80, seed=2)
    dm = DiffusionMap(n_neighbors=7, n_components=6, random_state=0, **params)
    Y = dm.fit_transform(X)
    np.testing.assert_array_equal(dm.transform(X), Y)
    np.testing.assert_array_equal(Y, dm.embedding(dm.t))
    np.testing.assert_array_equal(dm.transform(X[::-1][:9]), Y[::-1][:9])


@pytest.mark.parametrize("t", [1.0, 2.5, 8.0])
@pytest.mark.parametrize("normalization", ["textbook", "symmetric"])
def test_nystrom_with_the_graph_rows_reproduces_the_eigenvectors(t, normalization):
    """Why training points get their fitted values: with the fitted graph's rows the
    Nyström formula is the eigenvector equation, and holds to the solver's precision."""
    X = _blobs(60, seed=1)
    dm = DiffusionMap(
        n_neighbors=6,
        n_components=8,
        eigen_solver="dense",
        normalization=normalization,
        random_state=0,
    ).fit(X)
    W = dm.affinity_.toarray()
    d = W.sum(axis=1)
    lam, vec = dm.eigenvalues_, dm.eigenvectors_
    if normalization == "symmetric":
        psi = np.sqrt(d)[:, None] * ((W / d[:, None]) @ (vec / np.sqrt(d)[:, None])) / lam
    else:
        psi = ((W / d[:, None]) @ vec) / lam
    np.testing.assert_allclose(np.sign(lam) * np.abs(lam) ** t * psi, dm.embedding(t), atol=1e-10)
    # The same through transform, with the graph's rows as a precomputed affinity.
    pre = DiffusionMap(
        n_components=8,
        affinity="precomputed",
        eigen_solver="dense",
        normalization=normalization,
        t=t,
    ).fit(dm.affinity_)
    np.testing.assert_allclose(
        pre.transform(dm.affinity_), pre.fit_transform(dm.affinity_), atol=1e-10
    )


def test_transform_precomputed_rows():
    rng = np.random.RandomState(3)
    X, Z = rng.uniform(0, 2, (50, 2)), rng.uniform(-0.2, 2.2, (12, 2))
    A = np.exp(-(cdist(X, X) ** 2))
    dm = DiffusionMap(n_components=5, affinity="precomputed", t=2.0).fit(A)
    K = np.exp(-(cdist(Z, X) ** 2))
    lam = dm.eigenvalues_
    ref = (K / K.sum(axis=1)[:, None]) @ dm.eigenvectors_ * np.abs(lam) ** (2.0 - 1)
    np.testing.assert_allclose(dm.transform(K), ref, atol=1e-12)
    np.testing.assert_allclose(dm.transform(sp.csr_matrix(K)), ref, atol=1e-12)
    with pytest.raises(ValueError, match=r"\(n_queries, 50\) affinity"):
        dm.transform(K[:, :10])
    with pytest.raises(ValueError, match="no positive affinity"):
        dm.transform(np.zeros((2, 50)))
    with pytest.raises(ValueError, match="negative"):
        dm.transform(-K)
    # Distance rows: their n_neighbors smallest stored entries are the edges,
    # weighted exp(-d^2 / sigma_^2) as a feature's would be (cutoff None here).
    G = kneighbors_graph(X, 7, mode="distance")
    dist = DiffusionMap(7, n_components=5, metric="precomputed", cutoff=None).fit(G)
    from sklearn.neighbors import NearestNeighbors

    R = NearestNeighbors(n_neighbors=7).fit(X).kneighbors_graph(Z, mode="distance")
    W = R.toarray()
    W[R.toarray() > 0] = np.exp(-((W[R.toarray() > 0] / dist.sigma_) ** 2))
    lam = dist.eigenvalues_
    ref = (W / W.sum(axis=1)[:, None]) @ dist.eigenvectors_
    np.testing.assert_allclose(dist.transform(R), ref, atol=1e-12)


def test_pipeline_with_kmeans():
    """Issue 20: make_pipeline(DiffusionMap(), KMeans(k)) failed (transform took t)."""
    from sklearn.cluster import KMeans
    from sklearn.pipeline import make_pipeline

    rng = np.random.RandomState(0)
    centers = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    X = np.vstack([rng.normal(c, 0.3, (100, 2)) for c in centers])
    y = np.repeat(np.arange(3), 100)
    pipe = make_pipeline(DiffusionMap(t=8.0, random_state=0), KMeans(3, n_init=10, random_state=0))
    labels = pipe.fit_predict(X)
    assert gf.metrics.clustering_accuracy(y, labels) > 0.95
    np.testing.assert_array_equal(pipe.predict(X), labels)
    rng = np.random.RandomState(1)
    Z = X + rng.normal(0, 0.01, X.shape)  # new points next to the training ones
    assert np.mean(pipe.predict(Z) == labels) > 0.98


def test_t_parameter_and_the_time_arguments():
    X = _blobs(40)
    dm = DiffusionMap(n_neighbors=5, n_components=4, t=4.0, random_state=0).fit(X)
    np.testing.assert_array_equal(dm.embedding(), dm.embedding(4.0))
    np.testing.assert_array_equal(dm.distances(), dm.distances(4.0))
    np.testing.assert_array_equal(dm.kneighbors(n_neighbors=3)[1], dm.kneighbors(None, 3, t=4.0)[1])
    # The former kneighbors(t, n_neighbors) works for one release, with a FutureWarning.
    with pytest.warns(FutureWarning, match=r"kneighbors\(t=\.\.\.\)"):
        np.testing.assert_array_equal(dm.kneighbors(4.0, 3)[1], dm.kneighbors(n_neighbors=3)[1])
    # New points: their D_t-nearest training points (a training row finds itself).
    d, i = dm.kneighbors(X[:5], n_neighbors=3)
    np.testing.assert_array_equal(i[:, 0], np.arange(5))
    np.testing.assert_allclose(d[:, 0], 0.0, atol=1e-12)
    # n_neighbors=None is the map's own, as scikit-learn's estimators read it.
    assert dm.kneighbors()[1].shape == (40, 5)
    assert dm.kneighbors(X[:2], return_distance=False).shape == (2, 5)
    with pytest.raises(ValueError, match="t must"):
        dm.embedding(np.inf)
    with pytest.raises(ValueError, match="'t' parameter"):
        DiffusionMap(t=-1.0).fit(X)
    with pytest.raises(ValueError, match="3 features.*expecting 2"):
        dm.transform(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="overflow"):
        dm.transform(np.full((1, 2), 1e200))
    with pytest.raises(ValueError, match=r"formerly transform\(t\), is embedding\(t\)"):
        dm.transform(4.0)  # the old API points to the new name


@pytest.mark.parametrize("scale", [1e200, 1e300, 1e-200])
def test_extreme_values_work(scale):
    """Issue 20: features near 1e200 failed with "cannot reshape array"; the graph only
    depends on d / sigma, so the map of the rescaled data is the map of the data."""
    X = _blobs(40)
    Z = _new_points()
    ref = DiffusionMap(n_neighbors=5, n_components=4, random_state=0).fit(X)
    dm = DiffusionMap(n_neighbors=5, n_components=4, random_state=0).fit(X * scale)
    assert dm.sigma_ == pytest.approx(ref.sigma_ * scale, rel=1e-12)
    np.testing.assert_allclose(dm.embedding(), ref.embedding(), atol=1e-10)
    np.testing.assert_allclose(dm.transform(Z * scale), ref.transform(Z), atol=1e-10)
    for kernel in ("adaptive",):
        a = DiffusionMap(n_neighbors=5, n_components=4, kernel=kernel, random_state=0)
        b = DiffusionMap(n_neighbors=5, n_components=4, kernel=kernel, random_state=0)
        np.testing.assert_allclose(a.fit_transform(X * scale), b.fit_transform(X), atol=1e-10)
