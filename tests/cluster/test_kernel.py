"""Tests for :class:`geoforest.cluster.KernelSpectralClustering` (spectral clustering
of a precomputed affinity), against scikit-learn's ``SpectralClustering``.

The spectral functions it calls are tested with the graph layer
(``tests/graph/test_spectral.py``), whose affinities these tests share.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from geoforest.cluster import KernelSpectralClustering

from ..graph.test_spectral import blob_data, circle_data, matvec_operator


@pytest.fixture(autouse=True, scope="module")
def _single_threaded():
    """Small problems: threaded BLAS/OpenMP only adds overhead (badly so on a busy machine)."""
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(scope="module")
def blobs():
    return blob_data()


@pytest.fixture(scope="module")
def circles():
    return circle_data()


def _square(n=5):
    return np.kron(np.eye(1), np.ones((n, n)))


@pytest.mark.parametrize("n_clusters", [3, None])
def test_kernel_spectral_clustering_blobs(blobs, n_clusters):
    _, y, A = blobs
    model = KernelSpectralClustering(n_clusters=n_clusters, random_state=0).fit(A)
    assert model.n_clusters_ == 3
    assert adjusted_rand_score(y, model.labels_) == 1.0
    assert model.labels_[0] == 0
    assert model.embedding_.shape == (300, 3)
    np.testing.assert_allclose(model.eigenvalues_[:3], 1.0, atol=1e-8)
    assert model.eigenvalues_[0] == pytest.approx(1.0)
    assert sp.issparse(model.affinity_matrix_)
    assert model.n_features_in_ == 300
    np.testing.assert_array_equal(model.fit_predict(A), model.labels_)


def test_kernel_spectral_clustering_circles(circles):
    X, y, A = circles
    raw = KMeans(n_clusters=2, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, raw) < 0.2  # k-means on coordinates fails
    labels = KernelSpectralClustering(n_clusters=2, random_state=0).fit_predict(A)
    assert adjusted_rand_score(y, labels) > 0.95


@pytest.mark.parametrize("data, k", [("blobs", 3), ("circles", 2)])
@pytest.mark.filterwarnings("ignore:Graph is not fully connected:UserWarning")
def test_agrees_with_sklearn(data, k, request):
    _, _, A = request.getfixturevalue(data)
    theirs = SpectralClustering(
        n_clusters=k, affinity="precomputed", assign_labels="kmeans", random_state=0
    ).fit_predict(A)
    ours = KernelSpectralClustering(n_clusters=k, random_state=0).fit_predict(A)
    assert adjusted_rand_score(theirs, ours) > 0.95


@pytest.mark.parametrize("solver", ["auto", "arpack", "lobpcg"])
def test_deterministic(blobs, solver):
    _, _, A = blobs
    a = KernelSpectralClustering(eigen_solver=solver, random_state=7).fit(A)
    b = KernelSpectralClustering(eigen_solver=solver, random_state=7).fit(A)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    # Labels are canonical: first appearances in order 0, 1, 2.
    _, first = np.unique(a.labels_, return_index=True)
    assert np.all(np.diff(first) > 0)


def test_estimator_accepts_linear_operator_and_dense(circles):
    _, y, A = circles
    op = matvec_operator(A)
    model = KernelSpectralClustering(n_clusters=2, random_state=0).fit(op)
    assert model.affinity_matrix_ is op
    dense = KernelSpectralClustering(n_clusters=2, random_state=0).fit(A.toarray())
    np.testing.assert_array_equal(model.labels_, dense.labels_)
    assert adjusted_rand_score(y, model.labels_) == 1.0


def test_estimator_n_clusters_equal_n():
    A = np.kron(np.eye(2), np.ones((2, 2))) + 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = KernelSpectralClustering(n_clusters=4, random_state=0).fit(A)
    assert model.n_clusters_ == 4


@pytest.mark.parametrize(
    "A, match",
    [
        (np.where(np.eye(5) > 0, np.nan, 1.0), "NaN"),
        (np.where(np.eye(5) > 0, np.inf, 1.0), "infinity"),
        (sp.csr_matrix(np.where(np.eye(5) > 0, np.nan, 1.0)), "NaN"),
        (np.where(np.eye(5) > 0, -1.0, 1.0), "non-negative"),
        (sp.csr_matrix(np.where(np.eye(5) > 0, -1.0, 1.0)), "non-negative"),
        (np.ones((4, 5)), "square"),
        (sp.csr_matrix(np.ones((4, 5))), "square"),
        (np.triu(np.ones((5, 5))), "symmetric"),
        (sp.csr_matrix(np.triu(np.ones((5, 5)))), "symmetric"),
        (np.ones((1, 1)), "sample"),
        (matvec_operator(-_square()), "negative"),
        (matvec_operator(np.where(np.eye(5) > 0, np.nan, 1.0)), "non-finite"),
        (LinearOperator((4, 5), matvec=lambda x: x[:4], dtype=float), "square"),
        (matvec_operator(np.ones((1, 1))), "at least 2"),
    ],
)
def test_estimator_input_errors(A, match):
    with pytest.raises(ValueError, match=match):
        KernelSpectralClustering(n_clusters=2).fit(A)


@pytest.mark.parametrize("n_clusters", [None, 2])
@pytest.mark.parametrize(
    "A",
    [
        np.zeros((10, 10)),
        sp.csr_array((10, 10)),
        np.eye(10),
        sp.eye_array(10, format="csr"),
        sp.csr_array(([0.0, 0.0], ([0, 1], [1, 0])), shape=(10, 10)),  # stored zeros only
        matvec_operator(np.zeros((10, 10))),
    ],
    ids=["zeros", "sparse-empty", "identity", "sparse-identity", "stored-zeros", "operator"],
)
def test_affinity_without_edges_refused(A, n_clusters):
    """Issue 23: an all-zero affinity gave n_clusters_=2 with every label 0 (np.eye: IndexError)."""
    with pytest.raises(ValueError, match="no edge between two different points"):
        KernelSpectralClustering(n_clusters=n_clusters, random_state=0).fit(A)


def test_more_components_than_max_clusters_refused_by_relgap():
    """Issue 23: 12 separate groups and max_clusters=10 raised IndexError inside the rule."""
    A = np.kron(np.eye(12), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"11 or more connected components, more than the 10"):
        KernelSpectralClustering(random_state=0).fit(A)
    model = KernelSpectralClustering(max_clusters=12, random_state=0).fit(A)
    assert model.n_clusters_ == 12
    assert KernelSpectralClustering(12, random_state=0).fit(A).n_clusters_ == 12


def test_estimator_parameter_errors():
    A = _square()
    with pytest.raises(ValueError, match="larger than the number of samples"):
        KernelSpectralClustering(n_clusters=6).fit(A)
    for params in (
        {"n_clusters": 0},
        {"n_clusters": 2.5},
        {"max_clusters": 0},
        {"n_init": 0},
        {"eigen_solver": "amg"},
    ):
        with pytest.raises(ValueError, match="parameter"):
            KernelSpectralClustering(**params).fit(A)
