"""Tests for the graph layer's spectral module (normalised spectral clustering).

References are independent dense computations: ``numpy.linalg.eigh`` of the
explicitly built ``D^{-1/2} W D^{-1/2}``, and scikit-learn's ``SpectralClustering``.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, aslinearoperator
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_circles
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.neighbors import kneighbors_graph
from threadpoolctl import threadpool_limits

from geoforest.graph import (
    _eigensolvers,
    canonical_labels,
    estimate_n_clusters,
    normalized_affinity,
    spectral_clustering,
    spectral_eigs,
    spectral_embedding_njw,
)

SOLVERS = ["dense", "arpack", "lobpcg"]


# ------------------------------------------------------------------ fixtures
@pytest.fixture(autouse=True, scope="module")
def _single_threaded():
    """Small problems: threaded BLAS/OpenMP only adds overhead (badly so on a busy machine)."""
    with threadpool_limits(limits=1):
        yield


def knn_gaussian(X, k=10):
    """Gaussian kernel on the k-NN graph (bandwidth: median edge), symmetrised."""
    G = kneighbors_graph(X, k, mode="distance")
    sigma = np.median(G.data)
    G.data = np.exp(-((G.data / sigma) ** 2))
    return G.maximum(G.T).tocsr()


def matvec_operator(W):
    """A LinearOperator that only knows ``W @ x`` (like the LLPD affinity)."""
    n = W.shape[0]
    return LinearOperator((n, n), matvec=lambda x: W @ np.ravel(x), dtype=np.float64)


def dense_reference(W):
    """``D^{-1/2} W D^{-1/2}`` by plain numpy, isolated nodes set to zero by hand."""
    W = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=float)
    d = W.sum(axis=1)
    keep = d > 0
    M = np.zeros_like(W)
    Dk = np.diag(1.0 / np.sqrt(d[keep]))
    M[np.ix_(keep, keep)] = Dk @ W[np.ix_(keep, keep)] @ Dk
    return M


@pytest.fixture(scope="module")
def random_affinity():
    X = np.random.default_rng(0).uniform(size=(400, 3))
    return knn_gaussian(X, k=10)


@pytest.fixture(scope="module")
def reference_eigs(random_affinity):
    values, vectors = np.linalg.eigh(dense_reference(random_affinity))
    return values[::-1], vectors[:, ::-1]


def blob_data():
    """Three blobs and their k-NN Gaussian affinity (also the estimator tests' data)."""
    # Five dimensions: a k-NN graph on 2-d blobs is grid-like and mixes so slowly
    # inside each blob that the eigengap is not where the blobs are.
    X, y = make_blobs(
        300, n_features=5, centers=3, center_box=(-20, 20), cluster_std=1.0, random_state=0
    )
    return X, y, knn_gaussian(X, k=10)


def circle_data():
    """Two circles and their k-NN Gaussian affinity."""
    X, y = make_circles(400, factor=0.4, noise=0.04, random_state=0)
    return X, y, knn_gaussian(X, k=10)


@pytest.fixture(scope="module")
def blobs():
    return blob_data()


@pytest.fixture(scope="module")
def circles():
    return circle_data()


def sparse_with_isolated(seed=0, n=12):
    rng = np.random.default_rng(seed)
    A = rng.uniform(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.5)
    A = np.triu(A, 1)
    A = A + A.T
    A[3, :] = 0.0
    A[:, 3] = 0.0
    return sp.csr_matrix(A)


def block_affinity(sizes, seed=0):
    rng = np.random.default_rng(seed)
    blocks = []
    for s in sizes:
        B = rng.uniform(0.5, 1.0, size=(s, s))
        blocks.append((B + B.T) / 2)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return sp.block_diag(blocks, format="csr"), labels


# ------------------------------------------------------------ normalisation
@pytest.mark.parametrize("kind", ["csr_matrix", "csr_array", "coo", "dense"])
def test_normalized_affinity_explicit(kind):
    W = sparse_with_isolated()
    ref = dense_reference(W)
    inp = {
        "csr_matrix": W,
        "csr_array": sp.csr_array(W),
        "coo": W.tocoo(),
        "dense": W.toarray(),
    }[kind]
    M, degree = normalized_affinity(inp)
    np.testing.assert_allclose(degree, W.toarray().sum(axis=1), rtol=1e-14)
    assert degree[3] == 0
    if kind == "dense":
        assert isinstance(M, np.ndarray)
        dense = M
    else:
        assert sp.issparse(M)
        assert isinstance(M, sp.sparray) == isinstance(inp, sp.sparray)
        dense = M.toarray()
    assert np.all(np.isfinite(dense))
    np.testing.assert_allclose(dense, ref, rtol=1e-13, atol=1e-15)
    assert not np.any(dense[3]) and not np.any(dense[:, 3])
    # The input is left untouched.
    np.testing.assert_array_equal(inp.toarray() if sp.issparse(inp) else inp, W.toarray())


@pytest.mark.parametrize("make_op", [aslinearoperator, matvec_operator])
def test_normalized_affinity_linear_operator(make_op):
    W = sparse_with_isolated(seed=1)
    n = W.shape[0]
    M, degree = normalized_affinity(make_op(W))
    assert isinstance(M, LinearOperator)
    np.testing.assert_allclose(degree, W.toarray().sum(axis=1), rtol=1e-14)
    ref = dense_reference(W)
    np.testing.assert_allclose(M.matmat(np.eye(n)), ref, rtol=1e-13, atol=1e-15)
    x = np.random.default_rng(0).normal(size=n)
    np.testing.assert_allclose(M @ x, ref @ x, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(M.rmatvec(x), ref @ x, rtol=1e-12, atol=1e-14)


def test_normalized_affinity_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        normalized_affinity(np.ones((3, 4)))


# ------------------------------------------------------------ eigensolvers
def assert_eigvecs_match(vectors, ref_vectors, values, atol):
    """Columns equal (our sign rule applied to the reference) or, within a
    group of near-equal eigenvalues, the same subspace."""
    ref = _eigensolvers._fix_signs(ref_vectors.copy())
    k = vectors.shape[1]
    start = 0
    while start < k:
        stop = start + 1
        while stop < k and abs(values[stop - 1] - values[stop]) < 1e-6:
            stop += 1
        if stop - start == 1:
            np.testing.assert_allclose(vectors[:, start], ref[:, start], atol=atol)
        else:
            angles = scipy.linalg.subspace_angles(vectors[:, start:stop], ref[:, start:stop])
            assert np.max(angles) < atol
        start = stop


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("container", ["sparse", "dense", "operator"])
def test_spectral_eigs_match_numpy(random_affinity, reference_eigs, solver, container):
    W = {
        "sparse": random_affinity,
        "dense": random_affinity.toarray(),
        "operator": matvec_operator(random_affinity),
    }[container]
    ref_values, ref_vectors = reference_eigs
    k = 10
    values, vectors = spectral_eigs(W, k, solver=solver, random_state=0)
    assert values.shape == (k,) and vectors.shape == (400, k)
    assert np.all(np.diff(values) <= 0)
    np.testing.assert_allclose(values, ref_values[:k], atol=1e-8)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(k), atol=1e-6)
    # LOBPCG stops at a residual of 1e-7, so its vectors are accurate to ~1e-7/gap.
    atol = 1e-5 if solver == "lobpcg" else 1e-8
    assert_eigvecs_match(vectors, ref_vectors[:, :k], values, atol)
    # Sign rule: the largest-magnitude entry of each vector is positive.
    rows = np.argmax(np.abs(vectors), axis=0)
    assert np.all(vectors[rows, np.arange(k)] > 0)


def test_spectral_eigs_auto_and_n_eigs_bounds(random_affinity, reference_eigs):
    values, _ = spectral_eigs(random_affinity, 3)  # auto -> dense at n = 400
    np.testing.assert_allclose(values, reference_eigs[0][:3], atol=1e-12)
    small = np.kron(np.eye(2), np.ones((3, 3)))
    assert spectral_eigs(small, 6, solver="dense")[0].shape == (6,)
    for bad in (0, 7):
        with pytest.raises(ValueError, match="n_eigs"):
            spectral_eigs(small, bad, solver="dense")
    for solver in ("arpack", "lobpcg"):
        with pytest.raises(ValueError, match="n_eigs"):
            spectral_eigs(small, 6, solver=solver)
    with pytest.raises(TypeError, match="n_eigs"):
        spectral_eigs(small, 2.0)
    with pytest.raises(ValueError, match="solver"):
        spectral_eigs(small, 2, solver="amg")
    with pytest.raises(ValueError, match="dense"):
        spectral_eigs(sp.eye(_eigensolvers.DENSE_MAX_N + 1, format="csr"), 2, solver="dense")


def test_spectral_eigs_deterministic(random_affinity):
    for solver in ("arpack", "lobpcg"):
        a = spectral_eigs(random_affinity, 5, solver=solver, random_state=3)
        b = spectral_eigs(random_affinity, 5, solver=solver, random_state=3)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_lobpcg_falls_back_to_arpack(random_affinity, reference_eigs, monkeypatch):
    monkeypatch.setattr(_eigensolvers, "_LOBPCG_MAXITER", 1)
    with pytest.warns(ConvergenceWarning, match="falling back to ARPACK"):
        values, _ = spectral_eigs(random_affinity, 6, solver="lobpcg", random_state=0)
    np.testing.assert_allclose(values, reference_eigs[0][:6], atol=1e-10)


def _weakly_joined_paths(n_paths=3, length=500, link=1e-4):
    """Paths joined end to end by weak edges: a connected graph whose top
    eigenvalues crowd within 1e-7 of 1, where plain Lanczos stalls."""
    n = n_paths * length
    W = sp.lil_array((n, n))
    idx = np.arange(n - 1)
    W[idx, idx + 1] = 1.0
    W[idx + 1, idx] = 1.0
    for cut in range(length, n, length):
        W[cut - 1, cut] = W[cut, cut - 1] = link
    return sp.csr_array(W)


def test_arpack_stall_goes_to_shift_invert(monkeypatch):
    W = _weakly_joined_paths()
    M, _ = normalized_affinity(W)
    calls = []
    real = _eigensolvers._eigs_shift_invert
    monkeypatch.setattr(
        _eigensolvers, "_eigs_shift_invert", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    values, vectors = _eigensolvers._eigs_arpack(M, 3, np.random.RandomState(0), 1e-6)
    assert calls == [1]  # the bounded plain Lanczos gave up
    dense_values, dense_vectors = np.linalg.eigh(M.toarray())
    # the crowded gaps (1e-7) are resolved, which tol=1e-6 Lanczos cannot do
    np.testing.assert_allclose(1 - values, 1 - dense_values[::-1][:3], rtol=1e-6, atol=1e-14)
    overlap = np.abs(vectors.T @ dense_vectors[:, ::-1][:, :3])
    np.testing.assert_allclose(overlap, np.eye(3), atol=1e-6)
    labels = spectral_clustering(W, 3, solver="arpack", random_state=0, tol=1e-6).labels
    np.testing.assert_array_equal(labels, np.repeat([0, 1, 2], 500))


def test_shift_invert_solver_resolves_crowded_eigenvalues():
    W = _weakly_joined_paths()
    values, vectors = spectral_eigs(W, 3, solver="shift-invert", random_state=0)
    dense_values, dense_vectors = spectral_eigs(W, 3, solver="dense")
    np.testing.assert_allclose(1 - values, 1 - dense_values, rtol=1e-6, atol=1e-14)
    np.testing.assert_allclose(np.abs(vectors.T @ dense_vectors), np.eye(3), atol=1e-6)
    # the arpack solver ends in the same shift-invert solve on this graph
    arpack = spectral_eigs(W, 3, solver="arpack", random_state=0, tol=1e-6)[0]
    np.testing.assert_allclose(1 - arpack, 1 - dense_values, rtol=1e-6, atol=1e-14)
    with pytest.raises(ValueError, match="shift-invert"):
        spectral_eigs(aslinearoperator(W), 3, solver="shift-invert")


def test_arpack_on_linear_operator_keeps_its_budget(monkeypatch):
    W = _weakly_joined_paths()
    reference = spectral_eigs(W, 3, solver="dense")[0]
    budgets = []
    real = _eigensolvers.eigsh
    monkeypatch.setattr(
        _eigensolvers,
        "eigsh",
        lambda *a, **k: budgets.append((k.get("ncv"), k.get("maxiter"))) or real(*a, **k),
    )
    values, _ = spectral_eigs(aslinearoperator(W), 3, solver="arpack", random_state=0, tol=1e-10)
    # no LU of an operator: ARPACK's own restart budget, then a larger Krylov space
    assert budgets[0] == (None, None)
    assert budgets[1:] in ([], [(64, 20 * W.shape[0])])
    np.testing.assert_allclose(1 - values, 1 - reference, rtol=1e-4, atol=1e-12)


def test_isolated_point_has_zero_row_and_is_reported():
    W = sparse_with_isolated(seed=2, n=30)
    W = W + sp.csr_matrix(np.kron(np.eye(2), np.ones((15, 15))))  # make it well connected
    W = W.tolil()
    W[3, :] = 0
    W[:, 3] = 0
    W = W.tocsr()
    values, vectors = spectral_eigs(W, 4)
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(vectors))
    np.testing.assert_allclose(vectors[3], 0.0, atol=1e-12)
    with pytest.warns(UserWarning, match="1 point"):
        result = spectral_clustering(W, 2, random_state=0)
    np.testing.assert_array_equal(result.isolated, [3])
    np.testing.assert_array_equal(result.embedding[3], 0.0)
    assert np.all(np.isfinite(result.embedding))


# ------------------------------------------------------------------ eigengap
def test_estimate_n_clusters_hand_made():
    values = [1.0, 0.99, 0.97, 0.4, 0.35]
    assert estimate_n_clusters(values) == 3
    assert estimate_n_clusters(values[::-1]) == 3  # sorted before use
    assert estimate_n_clusters(values, max_clusters=2) == 2
    assert estimate_n_clusters(values, max_clusters=100) == 3
    # Equivalent Laplacian view: 1 - lambda ascending has its largest jump after 3.
    laplacian = 1 - np.asarray(values)
    assert int(np.argmax(np.diff(laplacian))) + 1 == 3
    assert estimate_n_clusters([1.0, 0.2, 0.1, 0.0]) == 1
    assert estimate_n_clusters([1.0, 1.0, 1.0, 1.0]) == 1  # no gap: at least 1
    assert estimate_n_clusters([1.0, 0.5, 0.0]) == 1  # tie -> smallest k
    assert estimate_n_clusters([0.7]) == 1
    assert estimate_n_clusters([]) == 1
    with pytest.raises(ValueError, match="max_clusters"):
        estimate_n_clusters(values, max_clusters=0)
    with pytest.raises(ValueError, match="finite"):
        estimate_n_clusters([1.0, np.nan])


@pytest.mark.parametrize("n_blocks", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_eigengap_counts_components(n_blocks, solver):
    sizes = list(range(20, 20 + 7 * n_blocks, 7))
    W, truth = block_affinity(sizes, seed=n_blocks)
    values, _ = spectral_eigs(W, 10, solver=solver, random_state=0)
    np.testing.assert_allclose(values[:n_blocks], 1.0, atol=1e-8)
    assert values[n_blocks] < 0.5
    assert estimate_n_clusters(values) == n_blocks
    result = spectral_clustering(W, solver=solver, random_state=0)
    assert result.n_clusters == n_blocks
    assert adjusted_rand_score(truth, result.labels) == 1.0


def test_eigengap_three_blobs_gaussian_kernel(blobs):
    X, y, _ = blobs
    A = rbf_kernel(X, gamma=0.5)
    values, _ = spectral_eigs(A, 11)
    assert estimate_n_clusters(values) == 3
    result = spectral_clustering(A, random_state=0)
    assert result.n_clusters == 3
    assert adjusted_rand_score(y, result.labels) == 1.0


# ----------------------------------------------------------- NJW + labels
def test_spectral_embedding_njw():
    V = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]])
    out = spectral_embedding_njw(V)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]])
    rng = np.random.default_rng(0)
    out = spectral_embedding_njw(rng.normal(size=(50, 4)))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0)
    with pytest.raises(ValueError, match="2-d"):
        spectral_embedding_njw(np.ones(3))


def test_canonical_labels():
    np.testing.assert_array_equal(canonical_labels([2, 2, 0, 1, 0]), [0, 0, 1, 2, 1])
    np.testing.assert_array_equal(canonical_labels([5, 5]), [0, 0])
    np.testing.assert_array_equal(canonical_labels(["b", "a", "b"]), [0, 1, 0])
    assert canonical_labels([]).shape == (0,)
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 7, size=200)
    can = canonical_labels(raw)
    assert adjusted_rand_score(raw, can) == 1.0
    _, first = np.unique(can, return_index=True)
    assert np.all(np.diff(first) > 0)  # ids ordered by first appearance


# -------------------------------------------------------------- clustering
def test_linear_operator_gives_same_clustering(circles):
    _, y, W = circles
    for solver in ("auto", "arpack", "lobpcg"):
        explicit = spectral_clustering(W, 2, solver=solver, random_state=0)
        operator = spectral_clustering(matvec_operator(W), 2, solver=solver, random_state=0)
        np.testing.assert_array_equal(explicit.labels, operator.labels)
        np.testing.assert_allclose(explicit.eigenvalues, operator.eigenvalues, atol=1e-8)
        assert adjusted_rand_score(y, operator.labels) == 1.0


def test_linear_operator_estimates_n_clusters(blobs):
    _, y, W = blobs
    explicit = spectral_clustering(W, random_state=0)
    operator = spectral_clustering(matvec_operator(W), random_state=0)
    assert explicit.n_clusters == operator.n_clusters == 3
    np.testing.assert_array_equal(explicit.labels, operator.labels)
    assert adjusted_rand_score(y, operator.labels) == 1.0


# ------------------------------------------------------------------- errors
def _square(n=5):
    return np.kron(np.eye(1), np.ones((n, n)))


def test_spectral_clustering_argument_errors():
    A = _square()
    with pytest.raises(ValueError, match="n_clusters"):
        spectral_clustering(A, 6)
    with pytest.raises(ValueError, match="n_clusters"):
        spectral_clustering(A, 0)
    with pytest.raises(TypeError, match="n_clusters"):
        spectral_clustering(A, 2.0)
    with pytest.raises(ValueError, match="max_clusters"):
        spectral_clustering(A, max_clusters=0)
    with pytest.raises(ValueError, match="n_clusters=5 needs"):
        spectral_clustering(A, 5, solver="arpack")
    with pytest.raises(ValueError, match="solver"):
        spectral_clustering(A, 2, solver="amg")
    with pytest.raises(ValueError, match="at least 2"):
        spectral_clustering(np.ones((1, 1)))
    with pytest.raises(ValueError, match="square"):
        spectral_clustering(np.ones((3, 4)))


@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_many_components_still_give_every_eigenpair(solver):
    # 60 disconnected 5-cliques: eigenvalue 1 repeated 60 times.  LAPACK's subset
    # driver may return fewer pairs and ARPACK may not converge; both must recover.
    W = sp.csr_array(np.kron(np.eye(60), np.ones((5, 5))))
    values, vectors = spectral_eigs(W, 4, solver=solver, random_state=0)
    assert values.shape == (4,) and vectors.shape == (300, 4)
    assert np.allclose(values, 1.0)
    M = normalized_affinity(W)[0]
    assert np.allclose(M @ vectors, vectors * values, atol=1e-8)


def test_dense_solver_survives_lapack_subset_shortfall():
    # A thresholded, sharpened rpf-kernel of iris where LAPACK's subset driver
    # returned 2 of the 4 requested pairs (eigenvalue 1 repeated >= 6 times).
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    import geoforest as gf

    X = StandardScaler().fit_transform(load_iris().data)
    S = sp.csr_array(gf.RandomProjectionForest(200, random_state=2).fit(X).proximity())
    S.data[S.data < 0.2] = 0
    S.eliminate_zeros()
    S.data = np.exp((S.data - 1.0) / 0.01)
    values, vectors = spectral_eigs(S, 4, solver="dense")
    assert values.shape == (4,) and np.allclose(values, 1.0)
    M = normalized_affinity(S)[0]
    assert np.allclose(M @ vectors, vectors * values, atol=1e-8)


@pytest.mark.parametrize("solver", ["dense", "arpack", "lobpcg"])
@pytest.mark.parametrize("k", [2, 3, 6, 10])
def test_disconnected_affinity_solved_per_component(solver, k):
    rng = np.random.RandomState(0)
    blocks = [rng.rand(s, s) for s in (30, 5, 12, 1, 1)]
    blocks = [(b + b.T) / 2 for b in blocks]
    blocks[3][:] = 0.0  # an isolated point
    W = scipy.linalg.block_diag(*blocks)
    perm = rng.permutation(W.shape[0])
    W = W[perm][:, perm]
    values, vectors = spectral_eigs(sp.csr_array(W), k, solver=solver, random_state=0)
    M = dense_reference(W)
    np.testing.assert_allclose(values, np.sort(np.linalg.eigvalsh(M))[::-1][:k], atol=1e-8)
    np.testing.assert_allclose(M @ vectors, vectors * values, atol=1e-7)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(k), atol=1e-8)


def test_more_components_than_clusters_takes_the_largest():
    sizes = (20, 3, 15, 2)
    W = scipy.linalg.block_diag(*[np.ones((s, s)) for s in sizes])
    with pytest.warns(UserWarning, match="connected components"):
        result = spectral_clustering(sp.csr_array(W), 2, random_state=0)
    start = np.cumsum((0,) + sizes)
    big = [np.arange(start[0], start[1]), np.arange(start[2], start[3])]
    assert result.labels[big[0]].tolist() == [0] * 20 and set(result.labels[big[1]]) == {1}
    np.testing.assert_array_equal(result.unembedded, np.r_[20:23, 38:40])
    np.testing.assert_allclose(result.eigenvalues, [1.0, 1.0])


@pytest.mark.parametrize("user_api", ["blas", "openmp"])
def test_one_thread_limits_and_restores(user_api):
    """The cached thread limit of the spectral step: one thread inside, as before after."""
    from threadpoolctl import threadpool_info

    def threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == user_api]

    before = threads()
    for _ in range(2):  # the second call reuses the cached library lookup
        with _eigensolvers._one_thread(user_api):
            assert set(threads()) <= {1}
        assert threads() == before


def _separated_rows(rng, k, dim, sizes):
    """Rows taking ``k`` distinct unit values (orthonormal when ``dim == k``), shuffled."""
    values = np.eye(k) if dim == k else rng.standard_normal((k, dim))
    values /= np.linalg.norm(values, axis=1)[:, None]
    groups = np.repeat(np.arange(k), sizes)
    rng.shuffle(groups)
    return values[groups], groups


def test_separated_groups_are_what_kmeans_finds():
    """K distinct, separated embedding rows: the partition scikit-learn's k-means returns."""
    from geoforest.graph._spectral import _separated_groups

    rng = np.random.RandomState(0)
    for trial in range(60):
        k = int(rng.randint(2, 9))
        dim = k if trial % 2 else int(rng.randint(2, 9))
        sizes = rng.randint(1, 200, size=k)
        Y, groups = _separated_rows(rng, k, dim, sizes)
        gaps = ((Y[:, None] - Y[None]) ** 2).sum(axis=2)
        if gaps[gaps > 0].min() < 1e-6:
            continue
        seed = int(rng.randint(2**31 - 1))
        found = _separated_groups(Y, k, seed, tie_matters=False)
        assert found is not None
        np.testing.assert_array_equal(canonical_labels(found), canonical_labels(groups))
        with threadpool_limits(limits=1):
            km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(Y)
        np.testing.assert_array_equal(canonical_labels(found), canonical_labels(km))


def test_separated_groups_refusals():
    """k-means runs when the shortcut could differ from it, or must draw random numbers."""
    from geoforest.graph._spectral import _separated_groups

    rng = np.random.RandomState(1)
    Y, _ = _separated_rows(rng, 3, 3, [5, 7, 9])
    assert _separated_groups(Y, 3, 0, tie_matters=False) is not None
    assert _separated_groups(Y, 3, np.int64(0), tie_matters=False) is not None
    for state in (None, np.random.RandomState(0), True):  # a generator k-means would advance
        assert _separated_groups(Y, 3, state, tie_matters=False) is None
    assert _separated_groups(Y, 2, 0, tie_matters=False) is None  # more values than K
    assert _separated_groups(Y, 4, 0, tie_matters=False) is None  # fewer
    close = Y.copy()
    close[Y[:, 0] == 1.0] = [1e-4, np.sqrt(1 - 1e-8), 0.0]  # squared distance 1e-8 to e_1
    assert _separated_groups(close, 3, 0, tie_matters=False) is None
    tied, _ = _separated_rows(rng, 3, 3, [4, 9, 9])  # the largest cluster tied
    assert _separated_groups(tied, 3, 0, tie_matters=False) is not None
    assert _separated_groups(tied, 3, 0, tie_matters=True) is None


@pytest.mark.filterwarnings("ignore:3 point.* lie in connected components:UserWarning")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_disconnected_affinity_labels_as_with_kmeans(monkeypatch, seed):
    """spectral_clustering of an affinity in pieces: the labels k-means itself gives."""
    from geoforest.graph import _spectral

    rng = np.random.RandomState(seed)
    sizes = [30, 45, 20, 60, 3]  # five components, K = 4: the smallest one unembedded
    W = sp.block_diag([sp.csr_array(rng.uniform(0.1, 1, (m, m))) for m in sizes], format="csr")
    W = sp.csr_array((W + W.T) / 2)
    shortcut, answered = _spectral._separated_groups, []
    monkeypatch.setattr(
        _spectral,
        "_separated_groups",
        lambda *args: answered.append(shortcut(*args)) or answered[-1],
    )
    fast = spectral_clustering(W, 4, random_state=seed)
    assert fast.unembedded.size == 3 and answered[0] is not None  # k-means was skipped
    monkeypatch.setattr(_spectral, "_separated_groups", lambda *args: None)
    slow = spectral_clustering(W, 4, random_state=seed)
    np.testing.assert_array_equal(fast.labels, slow.labels)
