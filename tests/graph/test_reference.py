"""The spectrum's excess over Gaussian references: K where no relative gap says it."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest.graph import choose_by_excess, gaussian_reference, spectral_excess


def _euclid_graph(points, seed=0, k=10):
    ind = NearestNeighbors(n_neighbors=k + 1).fit(points).kneighbors(points)[1][:, 1:]
    return gf.graph.knn_affinity(ind, points.shape[0])


def test_gaussian_data_show_no_excess_and_blobs_do():
    rng = np.random.RandomState(0)
    blob = rng.standard_normal((400, 4))
    s = spectral_excess(_euclid_graph(blob), blob, _euclid_graph, 8, seed=0)
    assert s.shape == (7,) and np.max(np.abs(s)) < 0.5
    assert choose_by_excess(s) == 1
    for std in (1.0, 2.0, 2.5):  # separated to touching
        X, _ = make_blobs(400, n_features=4, centers=5, cluster_std=std, random_state=0)
        s = spectral_excess(_euclid_graph(X), X, _euclid_graph, 8, seed=0)
        assert np.all(s[:4] > 0.5) and np.all(s[4:] < 0)  # K = 2..5 below the reference
        assert choose_by_excess(s) == 5


def test_reference_has_the_mean_and_covariance():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((5000, 3)) @ np.array([[2.0, 0, 0], [1.0, 1.0, 0], [0, 0, 0.1]]) + 5
    R = gaussian_reference(X, np.random.RandomState(0))
    assert R.shape == X.shape
    np.testing.assert_allclose(R.mean(0), X.mean(0), atol=0.1)
    np.testing.assert_allclose(np.cov(R.T), np.cov(X.T), atol=0.15)


def test_choose_by_excess_rules():
    assert choose_by_excess([2.0, 1.4, 0.9, 0.3, 0.1]) == 4
    assert choose_by_excess([2.0, 0.2, 0.9, 0.3]) == 4  # the last K above the bar
    assert choose_by_excess([0.1, -0.2, 0.15]) == 1
    assert choose_by_excess([np.nan, np.nan]) == 1
    assert choose_by_excess([3.0, np.nan, 2.5]) == 4


def test_the_estimator_finds_touching_blobs_that_no_large_gap_shows():
    """Five touching blobs: the excess over the references backs a level of 5."""
    X, y = make_blobs(300, n_features=4, centers=5, cluster_std=0.5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # strong evidence: no warning
        model = gf.ForestSpectralClustering(metric="euclidean", random_state=0).fit(X)
    assert model.n_clusters_ == 5 and adjusted_rand_score(y, model.labels_) > 0.95
    assert model.reference_excess_.shape == (10,) and np.isnan(model.reference_excess_[0])
    assert model.reference_excess_[4] >= gf.graph.MIN_EXCESS


def test_one_blob_stays_one_cluster_said_plainly():
    X = np.random.RandomState(2).standard_normal((500, 5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gf.ForestSpectralClustering(metric="euclidean", random_state=0).fit(X)
    assert model.n_clusters_ == 1
    supported = model.levels_.supported
    assert not supported.any()
    # No level has both a gap of 1.3 and an excess of 0.5.
    gaps, excess = model.n_clusters_scores_, model.reference_excess_
    assert not np.any((gaps[1:] >= 1.3) & (excess[1:] >= 0.5))
    assert any("found no cluster structure" in str(w.message) for w in caught)


def test_gaussian_reference_matches_the_data_moments_far_from_zero():
    # Data far from zero and unequal spreads: the reference's mean and covariance
    # estimate the data's (an independent numpy computation), whatever the offset.
    rng = np.random.RandomState(3)
    X = rng.normal(size=(20000, 3)) @ np.array([[2.0, 0, 0], [1.0, 0.5, 0], [0, 0, 10.0]]) + 1e6
    R = gaussian_reference(X, 0)
    assert R.shape == X.shape
    np.testing.assert_allclose(R.mean(axis=0), X.mean(axis=0), atol=0.3)
    np.testing.assert_allclose(
        np.cov(R, rowvar=False), np.cov(X, rowvar=False), rtol=0.05, atol=0.5
    )
    np.testing.assert_array_equal(gaussian_reference(X, 0), R)  # the seed decides the draw


def test_reference_survives_an_svd_that_does_not_converge(monkeypatch):
    # LAPACK's SVD (multivariate_normal's factor) failed on one mixture part of a
    # suite set; the reference then factors the covariance by eigh instead,
    # and still has the data's moments.  The failure is forced here.
    def failing_svd(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(np.linalg, "svd", failing_svd)
    rng = np.random.RandomState(1)
    X = rng.standard_normal((5000, 3)) @ np.array([[2.0, 0, 0], [1.0, 1.0, 0], [0, 0, 0.1]]) + 1e6
    R = gaussian_reference(X, np.random.RandomState(0))
    assert R.shape == X.shape and np.all(np.isfinite(R))
    np.testing.assert_allclose(R.mean(0), X.mean(0), atol=0.1)
    np.testing.assert_allclose(np.cov(R.T), np.cov(X.T), atol=0.15)
    np.testing.assert_array_equal(gaussian_reference(X, np.random.RandomState(0)), R)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["nan", "inf", "complex", "1d", "empty", "no-columns"]),
    st.integers(1, 6),
    st.sampled_from(["gaussian_reference", "uniform_reference"]),
)
def test_references_refuse_what_they_cannot_describe(kind, n, name):
    X = np.ones((n, 2))
    if kind == "nan":
        X[0, 0] = np.nan
    elif kind == "inf":
        X[-1, 1] = -np.inf
    elif kind == "complex":
        X = X + 1j
    elif kind == "1d":
        X = np.ones(n)
    elif kind == "empty":
        X = np.ones((0, 2))
    else:
        X = np.ones((n, 0))
    with pytest.raises(ValueError, match=name):
        getattr(gf.graph, name)(X, 0)


def test_mixture_reference_keeps_each_parts_moments_far_from_zero():
    # Two parts far apart and far from zero, unequal spreads: each part's reference
    # rows have that part's mean and covariance (independent numpy estimates).
    rng = np.random.RandomState(4)
    a = rng.normal(size=(8000, 2)) * [1.0, 3.0] + 1e6
    b = rng.normal(size=(6000, 2)) @ np.array([[2.0, 1.0], [0.0, 0.5]]) + [1e6 + 100, 1e6]
    X = np.r_[a, b]
    labels = np.r_[np.full(8000, 7), np.full(6000, -1)]  # any label values
    order = rng.permutation(X.shape[0])  # rows of a part need not be contiguous
    X, labels = X[order], labels[order]
    R = gf.graph.mixture_reference(X, labels, 0)
    assert R.shape == X.shape
    for part in (7, -1):
        rows = labels == part
        np.testing.assert_allclose(R[rows].mean(axis=0), X[rows].mean(axis=0), atol=0.3)
        np.testing.assert_allclose(
            np.cov(R[rows], rowvar=False), np.cov(X[rows], rowvar=False), rtol=0.08, atol=0.1
        )
    np.testing.assert_array_equal(gf.graph.mixture_reference(X, labels, 0), R)
    # One part is the whole set's Gaussian, draw for draw.
    np.testing.assert_array_equal(
        gf.graph.mixture_reference(X, np.zeros(X.shape[0]), 5), gaussian_reference(X, 5)
    )


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["nan", "complex", "empty", "labels"]), st.integers(1, 6))
def test_mixture_reference_refuses_what_it_cannot_describe(kind, n):
    X, labels = np.ones((n, 2)), np.zeros(n)
    if kind == "nan":
        X[-1, 0] = np.nan
    elif kind == "complex":
        X = X + 1j
    elif kind == "empty":
        X, labels = np.ones((0, 2)), np.zeros(0)
    else:
        labels = np.zeros(n + 1)
    with pytest.raises(ValueError, match="gaussian_reference|mixture_reference"):
        gf.graph.mixture_reference(X, labels, 0)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([-1e-6, float("nan"), float("inf"), "1e-6", True, None]))
def test_spectral_excess_refuses_a_bad_tolerance(tol):
    X, _ = make_blobs(60, centers=2, random_state=0)

    def build(P, seed):
        return NearestNeighbors(n_neighbors=8).fit(P).kneighbors_graph(mode="connectivity")

    A = build(X, 0)
    A = ((A + A.T) > 0).astype(float)
    with pytest.raises(ValueError, match="tol must be"):
        spectral_excess(A, X, build, 4, 0, tol=tol)


def test_spectral_excess_at_a_tolerance_matches_machine_precision():
    """The references solved at the data's tolerance give the same excess (the
    tolerance only bounds the solver's work), here on a graph ARPACK solves."""
    X, _ = make_blobs(3000, centers=3, n_features=5, random_state=1)

    def build(P, seed):
        G = NearestNeighbors(n_neighbors=10).fit(P).kneighbors_graph(mode="connectivity")
        return ((G + G.T) > 0).astype(float)

    A = build(X, 0)
    exact = spectral_excess(A, X, build, 5, 0)
    loose = spectral_excess(A, X, build, 5, 0, tol=1e-6)
    np.testing.assert_allclose(loose, exact, atol=1e-3)


def test_uniform_reference_is_a_flat_box_with_the_data_moments_far_from_zero():
    # Correlated data of unequal spreads, far from zero: the box has the data's
    # mean and covariance (independent numpy estimates), and along each of the
    # data's principal axes its points are flat over +-sqrt(3) sd (a uniform
    # law's fourth moment is 1.8 sd^4, a Gaussian's 3).
    rng = np.random.RandomState(5)
    X = rng.normal(size=(40000, 3)) @ np.array([[2.0, 0, 0], [1.0, 0.5, 0], [0, 0, 10.0]]) + 1e6
    R = gf.graph.uniform_reference(X, 0)
    assert R.shape == X.shape
    np.testing.assert_allclose(R.mean(axis=0), X.mean(axis=0), atol=0.3)
    cov = np.cov(X, rowvar=False)
    np.testing.assert_allclose(np.cov(R, rowvar=False), cov, rtol=0.05, atol=0.3)
    values, vectors = np.linalg.eigh(cov)
    Z = (R - X.mean(axis=0)) @ vectors / np.sqrt(values)  # standardised principal scores
    assert np.all(np.abs(Z) <= np.sqrt(3) + 0.05)
    np.testing.assert_allclose((Z**4).mean(axis=0), 1.8, atol=0.1)
    np.testing.assert_array_equal(gf.graph.uniform_reference(X, 0), R)


def test_uniform_reference_keeps_a_flat_direction_flat_and_one_point_in_place():
    # A constant column stays constant; one row is its own box.
    X = np.c_[np.random.RandomState(0).uniform(size=500), np.full(500, 7.0)]
    R = gf.graph.uniform_reference(X, 1)
    np.testing.assert_allclose(R[:, 1], 7.0)
    np.testing.assert_array_equal(
        gf.graph.uniform_reference(np.array([[3.0, -2.0]]), 0), [[3.0, -2.0]]
    )


def test_a_uniform_cube_shows_excess_over_its_gaussian_but_not_over_a_uniform_null():
    # Why the second null: a flat cloud lies below its Gaussian reference's
    # spectrum (the Gaussian's tails are cut easily), not below a flat one's.
    X = np.random.RandomState(2).uniform(size=(600, 2)) * [3.0, 1.0] + 1e5
    A = _euclid_graph(X)
    gauss = spectral_excess(A, X, _euclid_graph, 6, seed=0)
    flat = spectral_excess(A, X, _euclid_graph, 6, seed=0, null="uniform")
    assert gauss.mean() > flat.mean() + 0.15 and np.all(gauss > flat - 0.05)
    assert np.max(np.abs(flat)) < MIN_EXCESS_BAR
    # Per part, the uniform null keeps each part's moments (the labels are used).
    labels = (X[:, 0] > X[:, 0].mean()).astype(int)
    parts = spectral_excess(A, X, _euclid_graph, 6, seed=0, null="uniform", labels=labels)
    assert parts.shape == flat.shape and not np.allclose(parts, flat)


MIN_EXCESS_BAR = gf.graph.MIN_EXCESS


@settings(max_examples=30, deadline=None)
@given(
    st.one_of(st.text(max_size=10), st.none(), st.integers(), st.booleans()).filter(
        lambda v: v not in ("gaussian", "uniform")
    )
)
def test_spectral_excess_refuses_an_unknown_null(null):
    X, _ = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match="null must be"):
        spectral_excess(_euclid_graph(X), X, _euclid_graph, 4, 0, null=null)


def test_spectral_excess_refuses_labels_that_are_not_one_per_row():
    X, _ = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match="61 labels for 60 rows"):
        spectral_excess(_euclid_graph(X), X, _euclid_graph, 4, 0, labels=np.zeros(61))


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([gaussian_reference, gf.graph.uniform_reference]),
    st.sampled_from([1e-300, 1e-200, 2.0**-600, 1e160, 1e200, 1e300]),
    st.integers(2, 40),
    st.floats(-5.0, 5.0),
)
def test_references_of_extreme_values_are_the_references_scaled(draw, scale, n, offset):
    # Squared values of 1e200 leave float64 (the covariance was inf and the
    # factorisation failed); the references are drawn for X / 2^k and scaled back.
    X = np.random.RandomState(n).normal(size=(n, 3)) + offset
    R = draw(X * scale, 7)
    assert np.all(np.isfinite(R)) and R.shape == X.shape
    np.testing.assert_allclose(R / scale, draw(X, 7), rtol=1e-6, atol=1e-6 * np.abs(X).max())


@settings(max_examples=30, deadline=None)
@given(
    value=st.sampled_from([0.1, -7.7e-5, 1e6 + 0.3, 1e200 / 3, 2.0**-600]),
    n=st.integers(2, 60),
    seed=st.integers(0, 2**16),
)
def test_a_constant_column_and_an_atom_are_drawn_as_they_are(value, n, seed):
    """A column equal in every row is that value in every reference row, exactly
    (its mean can round off it, and its covariance be rounding noise); a part
    of equal rows (an atom of copies) is drawn as that row, so a float32
    forest does not see a cloud it must merge again."""
    rng = np.random.RandomState(seed)
    X = np.c_[rng.normal(size=(n, 2)), np.full(n, value)]
    for draw in (gaussian_reference, gf.graph.uniform_reference):
        R = draw(X, seed)
        assert np.all(R[:, 2] == value)
        assert np.all(np.isfinite(R))
    atom = np.repeat(X[[0]], n, axis=0)
    labels = np.repeat([0, 1], n)
    R = gf.graph.mixture_reference(np.vstack([atom, X]), labels, seed)
    assert np.all(R[:n] == X[0]) and np.all(R[n:, 2] == value)
