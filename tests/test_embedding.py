"""Tests for geoforest.embedding.adjacency_spectral_embedding.

The reference throughout is an independent full ``numpy.linalg.svd`` /
``numpy.linalg.eigh`` of the whole matrix.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

import geoforest
from geoforest import embedding
from geoforest.embedding import adjacency_spectral_embedding

N = 120


def _sbm(B, n=N, *, directed, seed=0):
    """Two equal blocks; returns (A, block labels)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    P = np.asarray(B)[y][:, y]
    A = (rng.random((n, n)) < P).astype(float)
    np.fill_diagonal(A, 0.0)
    if not directed:
        A = np.triu(A, 1)
        A = A + A.T
    return A, y


@pytest.fixture(scope="module")
def directed_sbm():
    return _sbm([[0.5, 0.1], [0.25, 0.4]], directed=True, seed=1)


@pytest.fixture(scope="module")
def undirected_sbm():
    # B is positive definite, so the leading eigenvalues of A are positive.
    return _sbm([[0.7, 0.3], [0.3, 0.6]], directed=False, seed=2)


def _rel_err(X, Y):
    return np.linalg.norm(X - Y) / np.linalg.norm(Y)


def test_exported():
    assert "embedding" in geoforest.__all__
    assert geoforest.embedding.adjacency_spectral_embedding is adjacency_spectral_embedding


# (a) Eckart-Young: Xout Xin^T is the best rank-d approximation -------------------------
@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_directed_best_rank_d_approximation(directed_sbm, d):
    A, _ = directed_sbm
    X = adjacency_spectral_embedding(A, n_components=d)
    assert X.shape == (N, 2 * d)
    Xout, Xin = X[:, :d], X[:, d:]
    U, s, Vt = np.linalg.svd(A)
    best = (U[:, :d] * s[:d]) @ Vt[:d]
    assert _rel_err(Xout @ Xin.T, best) < 1e-8
    # the column norms are the singular values (U, V orthonormal)
    np.testing.assert_allclose(np.sum(Xout**2, axis=0), s[:d], rtol=1e-10)
    np.testing.assert_allclose(np.sum(Xin**2, axis=0), s[:d], rtol=1e-10)


def test_directed_true_on_symmetric_input(undirected_sbm):
    A, _ = undirected_sbm
    X = adjacency_spectral_embedding(A, n_components=2, directed=True)
    assert X.shape == (N, 4)
    U, s, Vt = np.linalg.svd(A)
    assert _rel_err(X[:, :2] @ X[:, 2:].T, (U[:, :2] * s[:2]) @ Vt[:2]) < 1e-8


# (b) sparse / iterative path agrees with the dense path ------------------------------
@pytest.mark.parametrize("fixture", ["directed_sbm", "undirected_sbm"])
def test_sparse_input_matches_dense(request, fixture):
    A, _ = request.getfixturevalue(fixture)
    dense = adjacency_spectral_embedding(A, n_components=2)
    for fmt in (sp.csr_matrix, sp.csc_array, sp.coo_matrix):
        sparse = adjacency_spectral_embedding(fmt(A), n_components=2, random_state=0)
        assert sparse.shape == dense.shape
        np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-6)


def test_large_dense_input_uses_iterative_solver(monkeypatch, directed_sbm):
    A, _ = directed_sbm
    dense = adjacency_spectral_embedding(A, n_components=3)
    monkeypatch.setattr(embedding, "_DENSE_MAX_N", 10)
    calls = []
    real_svds = embedding.svds

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_svds(*args, **kwargs)

    monkeypatch.setattr(embedding, "svds", spy)
    iterative = adjacency_spectral_embedding(A, n_components=3, random_state=3)
    assert len(calls) == 1
    np.testing.assert_allclose(iterative, dense, rtol=0, atol=1e-6)


def test_sparse_path_on_large_graph():
    """n > 2000 with a sparse matrix: the output consists of exact singular triplets."""
    rng = np.random.default_rng(5)
    n, d = 2100, 2
    y = rng.integers(0, 2, size=n)
    P = np.array([[0.02, 0.002], [0.004, 0.015]])[y][:, y]
    A = sp.csr_matrix((rng.random((n, n)) < P).astype(float))
    X1 = adjacency_spectral_embedding(A, n_components=d, random_state=0)
    X2 = adjacency_spectral_embedding(A, n_components=d, random_state=1)
    assert X1.shape == (n, 2 * d)
    # the sign rule makes the result independent of the solver's start vector
    np.testing.assert_allclose(X1, X2, rtol=0, atol=1e-6)
    s = np.sum(X1[:, :d] ** 2, axis=0)
    assert np.all(np.diff(s) <= 0)
    U, V = X1[:, :d] / np.sqrt(s), X1[:, d:] / np.sqrt(s)
    np.testing.assert_allclose(U.T @ U, np.eye(d), atol=1e-8)
    np.testing.assert_allclose(V.T @ V, np.eye(d), atol=1e-8)
    np.testing.assert_allclose(A @ V, U * s, atol=1e-8 * s[0])
    np.testing.assert_allclose(A.T @ U, V * s, atol=1e-8 * s[0])
    # the top singular value dominates: ||A|| >= ||A x|| for a random unit x
    x = rng.standard_normal(n)
    x /= np.linalg.norm(x)
    assert s[0] >= np.linalg.norm(A @ x)
    pred = KMeans(2, n_init=10, random_state=0).fit_predict(X1)
    assert adjusted_rand_score(y, pred) > 0.9


# (c) undirected: X X^T is the best rank-d PSD approximation ---------------------------
@pytest.mark.parametrize("d", [1, 2])
def test_undirected_best_rank_d_psd_approximation(undirected_sbm, d):
    A, _ = undirected_sbm
    for directed in (None, False):
        X = adjacency_spectral_embedding(A, n_components=d, directed=directed)
        assert X.shape == (N, d)
        w, Q = np.linalg.eigh(A)
        order = np.argsort(np.abs(w))[::-1][:d]
        assert np.all(w[order] > 0)  # the leading eigenvalues are positive here
        best_psd = (Q[:, order] * w[order]) @ Q[:, order].T
        assert _rel_err(X @ X.T, best_psd) < 1e-8


def test_undirected_is_out_block_of_directed(undirected_sbm):
    A, _ = undirected_sbm
    X = adjacency_spectral_embedding(A, n_components=2)
    Xd = adjacency_spectral_embedding(A, n_components=2, directed=True)
    np.testing.assert_allclose(X, Xd[:, :2], atol=1e-12)
    # positive eigenvalues: the in-embedding equals the out-embedding
    np.testing.assert_allclose(Xd[:, 2:], Xd[:, :2], atol=1e-8)


# (d) block recovery ------------------------------------------------------------------
@pytest.mark.parametrize("fixture", ["directed_sbm", "undirected_sbm"])
def test_kmeans_recovers_blocks(request, fixture):
    A, y = request.getfixturevalue(fixture)
    X = adjacency_spectral_embedding(A, n_components=2)
    pred = KMeans(2, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, pred) > 0.9


# (e) validation ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("A", "match"),
    [
        (np.ones(5), "2-D"),
        (np.ones((2, 2, 2)), "2-D"),
        (np.ones((3, 4)), "square"),
        (sp.csr_matrix(np.ones((3, 4))), "square"),
        (np.zeros((0, 0)), "empty"),
        (np.array([[0.0, np.nan], [1.0, 0.0]]), "NaN or infinite"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), "NaN or infinite"),
        (sp.csr_matrix(np.array([[0.0, np.inf], [1.0, 0.0]])), "NaN or infinite"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric"),
        (np.array([[0, 1j], [1, 0]]), "real"),
    ],
)
def test_invalid_adjacency(A, match):
    with pytest.raises(ValueError, match=match):
        adjacency_spectral_embedding(A, n_components=1)


@pytest.mark.parametrize("k", [0, -1, 5, 6, 1.0, 2.5, "2", None, True])
def test_invalid_n_components(k):
    A = np.ones((5, 5))
    with pytest.raises(ValueError, match="n_components"):
        adjacency_spectral_embedding(A, n_components=k)


def test_single_node_graph():
    with pytest.raises(ValueError, match="at least 2 nodes"):
        adjacency_spectral_embedding(np.ones((1, 1)), n_components=1)


def test_n_components_bounds_accepted():
    A = np.random.default_rng(0).random((5, 5))
    assert adjacency_spectral_embedding(A, n_components=np.int64(4)).shape == (5, 8)
    assert adjacency_spectral_embedding(A, n_components=1).shape == (5, 2)


def test_directed_false_with_nonsymmetric(directed_sbm):
    A, _ = directed_sbm
    with pytest.raises(ValueError, match="not symmetric"):
        adjacency_spectral_embedding(A, n_components=2, directed=False)
    with pytest.raises(ValueError, match="not symmetric"):
        adjacency_spectral_embedding(sp.csr_matrix(A), n_components=2, directed=False)


def test_invalid_directed(undirected_sbm):
    A, _ = undirected_sbm
    with pytest.raises(ValueError, match="directed"):
        adjacency_spectral_embedding(A, n_components=2, directed="yes")


# (f) determinism and the sign rule ---------------------------------------------------
@pytest.mark.parametrize("fixture", ["directed_sbm", "undirected_sbm"])
def test_deterministic_signs(request, fixture):
    A, _ = request.getfixturevalue(fixture)
    d = 4
    X1 = adjacency_spectral_embedding(A, n_components=d)
    X2 = adjacency_spectral_embedding(A.copy(), n_components=d)
    np.testing.assert_array_equal(X1, X2)
    Xout = X1[:, :d]
    rows = np.argmax(np.abs(Xout), axis=0)
    assert np.all(Xout[rows, np.arange(d)] > 0)
    # the same rule holds on the sparse path
    Xs = adjacency_spectral_embedding(sp.csr_matrix(A), n_components=d, random_state=7)
    Xs_out = Xs[:, :d]
    rows = np.argmax(np.abs(Xs_out), axis=0)
    assert np.all(Xs_out[rows, np.arange(d)] > 0)


def test_sign_flip_of_input_columns_is_absorbed():
    """Sign-flipping the reference SVD cannot change the output (U s V^T is invariant)."""
    rng = np.random.default_rng(11)
    A = rng.random((30, 30))
    X = adjacency_spectral_embedding(A, n_components=3)
    U, s, Vt = np.linalg.svd(A)
    for j in range(3):
        col = U[:, j]
        if col[np.argmax(np.abs(col))] < 0:
            U[:, j] *= -1
            Vt[j] *= -1
    expected = np.hstack([U[:, :3] * np.sqrt(s[:3]), Vt[:3].T * np.sqrt(s[:3])])
    np.testing.assert_allclose(X, expected, atol=1e-10)


def test_drosophila_embedding_matches_reference():
    A = geoforest.datasets.load_drosophila().adjacency
    X = adjacency_spectral_embedding(A, n_components=6)
    s = np.linalg.svd(A, compute_uv=False)[:6]
    np.testing.assert_allclose(np.sum(X[:, :6] ** 2, axis=0), s, rtol=1e-10)
    Xs = adjacency_spectral_embedding(sp.csr_matrix(A), n_components=6, random_state=0)
    np.testing.assert_allclose(Xs, X, atol=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
def test_nodes_with_identical_edges_get_identical_positions(sparse):
    """The connectome's leaves (same single target, no in-edges) must not differ in the last bits.

    They did (the solver's ``U``), so a float32 cast merged distinct rows and the
    forests warned about the experiment's own data.
    """
    rng = np.random.default_rng(3)
    A = (rng.random((60, 60)) < 0.2).astype(float)
    A[50:55] = A[7]  # five nodes with node 7's out-edges ...
    A[:, 50:55] = 0.0  # ... and no in-edges
    A[:, 40:43] = A[:, [9]]  # three with node 9's in-edges
    Z = adjacency_spectral_embedding(sp.csr_array(A) if sparse else A, 3, random_state=0)
    assert np.array_equal(Z[50:55, :3], np.repeat(Z[[7], :3], 5, axis=0))
    assert np.array_equal(Z[40:43, 3:], np.repeat(Z[[9], 3:], 3, axis=0))
    U, s, Vt = np.linalg.svd(A)
    best = (U[:, :3] * s[:3]) @ Vt[:3]
    np.testing.assert_allclose(Z[:, :3] @ Z[:, 3:].T, best, atol=1e-10)
