"""Tests for geoforest.metrics against slow, explicit reference implementations."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.neighbors import NearestNeighbors

from geoforest.datasets import make_helix, make_sphere
from geoforest.metrics import chance_precision, geodesic_neighbors, geodesic_precision_recall


# ---------------------------------------------------------------------------
# reference implementations (explicit sets, full stable argsorts)
# ---------------------------------------------------------------------------
def reference_true_neighbors(dist, k):
    """k nearest other points per row; ties broken by lower index (stable sort)."""
    n = dist.shape[0]
    out = []
    for i in range(n):
        others = np.array([j for j in range(n) if j != i])
        order = np.argsort(dist[i, others], kind="stable")
        out.append(others[order[:k]])
    return np.array(out)


def reference_continuous(neighbors, dist, ks):
    n = neighbors.shape[0]
    truth = reference_true_neighbors(dist, max(ks))
    precision = []
    for k in ks:
        scores = [len(set(neighbors[i, :k]) & set(truth[i, :k])) / k for i in range(n)]
        precision.append(np.mean(scores))
    return np.array(precision)


def reference_labels(neighbors, labels, ks):
    n = neighbors.shape[0]
    precision, recall = [], []
    for k in ks:
        p_scores, r_scores = [], []
        for i in range(n):
            relevant = {j for j in range(n) if j != i and labels[j] == labels[i]}
            hits = len(set(neighbors[i, :k].tolist()) & relevant)
            p_scores.append(hits / k)
            if relevant:
                r_scores.append(hits / len(relevant))
        precision.append(np.mean(p_scores))
        recall.append(np.mean(r_scores))
    return np.array(precision), np.array(recall)


def random_neighbors(n, k, rng):
    """Random distinct neighbour lists that never contain the query point."""
    rows = []
    for i in range(n):
        others = np.delete(np.arange(n), i)
        rows.append(rng.choice(others, size=k, replace=False))
    return np.array(rows)


def noisy_neighbors(Z, k, noise, rng):
    """Neighbours of a noisy copy of Z: partially right, a realistic learner."""
    Z = Z.reshape(len(Z), -1)
    observed = Z + noise * rng.standard_normal(Z.shape)
    return NearestNeighbors(n_neighbors=k).fit(observed).kneighbors(return_distance=False)


# ---------------------------------------------------------------------------
# continuous ground truth vs reference
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_euclidean_1d_matches_reference(seed):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0, 10, size=80)
    nb = noisy_neighbors(s, 12, 0.5, rng)
    ks = [1, 3, 7, 12]
    res = geodesic_precision_recall(nb, latent=s, ks=ks)
    expected = reference_continuous(nb, np.abs(s[:, None] - s[None, :]), ks)
    np.testing.assert_allclose(res.precision, expected)
    np.testing.assert_allclose(res.recall, expected)
    np.testing.assert_array_equal(res.ks, ks)
    assert 0.05 < res.precision[-1] < 0.99  # a non-trivial case


def test_euclidean_3d_matches_reference():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(90, 3))
    nb = noisy_neighbors(Z, 15, 0.3, rng)
    res = geodesic_precision_recall(nb, latent=Z)
    expected = reference_continuous(nb, cdist(Z, Z), range(1, 16))
    np.testing.assert_allclose(res.precision, expected)
    np.testing.assert_array_equal(res.ks, np.arange(1, 16))


def test_great_circle_matches_reference():
    rng = np.random.default_rng(3)
    P = rng.normal(size=(70, 3)) * rng.uniform(0.5, 5.0, size=(70, 1))  # not unit length
    U = P / np.linalg.norm(P, axis=1, keepdims=True)
    angle = np.arccos(np.clip(U @ U.T, -1.0, 1.0))
    nb = noisy_neighbors(U, 10, 0.2, rng)
    ks = [1, 5, 10]
    res = geodesic_precision_recall(nb, latent=P, metric="great_circle", ks=ks)
    np.testing.assert_allclose(res.precision, reference_continuous(nb, angle, ks))


def test_great_circle_differs_from_euclidean_on_unnormalised_rows():
    rng = np.random.default_rng(4)
    P = rng.normal(size=(60, 3)) * rng.uniform(0.2, 5.0, size=(60, 1))
    nb = noisy_neighbors(P, 8, 0.0, rng)
    euclid = geodesic_precision_recall(nb, latent=P, ks=8).precision[0]
    sphere = geodesic_precision_recall(nb, latent=P, metric="great_circle", ks=8).precision[0]
    assert euclid == pytest.approx(1.0)
    assert sphere < 0.9


def test_precomputed_matches_reference_with_ties_and_inf():
    rng = np.random.default_rng(5)
    n = 50
    D = rng.integers(0, 4, size=(n, n)).astype(float)  # many exact ties
    D[rng.random((n, n)) < 0.1] = np.inf
    np.fill_diagonal(D, 0.0)
    nb = random_neighbors(n, 20, rng)
    ks = [1, 2, 5, 20]
    res = geodesic_precision_recall(nb, latent=D, metric="precomputed", ks=ks)
    np.testing.assert_allclose(res.precision, reference_continuous(nb, D, ks))
    np.testing.assert_array_equal(
        geodesic_neighbors(D, 20, metric="precomputed"), reference_true_neighbors(D, 20)
    )


@pytest.mark.parametrize("n, k", [(40, 5), (300, 12), (300, 60)])
def test_geodesic_neighbors_ties_on_integer_lattice(n, k):
    # Coordinates in {0..3}^2: heavy duplication and exact ties at the boundary,
    # exercising the KD-tree re-query and the brute-force fallback.
    rng = np.random.default_rng(n + k)
    Z = rng.integers(0, 4, size=(n, 2)).astype(float)
    np.testing.assert_array_equal(
        geodesic_neighbors(Z, k), reference_true_neighbors(cdist(Z, Z), k)
    )


def test_geodesic_neighbors_equally_spaced_1d_ties():
    s = np.arange(200, dtype=float)[np.random.default_rng(6).permutation(200)]
    np.testing.assert_array_equal(
        geodesic_neighbors(s, 9), reference_true_neighbors(np.abs(s[:, None] - s), 9)
    )


def test_geodesic_neighbors_helix_large_spot_check():
    _, y = make_helix(20_000, random_state=0)
    truth = geodesic_neighbors(y, 30)
    rows = np.random.default_rng(7).choice(len(y), size=25, replace=False)
    for i in rows:
        d = np.abs(y - y[i])
        d[i] = np.inf
        order = np.argsort(d, kind="stable")[:30]
        np.testing.assert_array_equal(truth[i], order)


def test_perfect_retrieval_gives_one():
    _, y = make_sphere(400, random_state=0)
    nb = geodesic_neighbors(y, 25, metric="great_circle")
    res = geodesic_precision_recall(nb, latent=y, metric="great_circle")
    np.testing.assert_allclose(res.precision, 1.0)
    np.testing.assert_allclose(res.recall, 1.0)


def test_random_neighbors_near_chance():
    rng = np.random.default_rng(8)
    n, k = 400, 40
    s = rng.uniform(size=n)
    nb = random_neighbors(n, k, rng)
    res = geodesic_precision_recall(nb, latent=s, ks=[10, 40])
    np.testing.assert_allclose(res.precision, chance_precision(n, [10, 40]), atol=0.02)


def test_ks_subset_and_int():
    rng = np.random.default_rng(9)
    s = rng.uniform(size=60)
    nb = noisy_neighbors(s, 10, 0.05, rng)
    full = geodesic_precision_recall(nb, latent=s)
    sub = geodesic_precision_recall(nb, latent=s, ks=[7, 2])
    one = geodesic_precision_recall(nb, latent=s, ks=4)
    np.testing.assert_allclose(sub.precision, full.precision[[6, 1]])
    np.testing.assert_allclose(one.precision, full.precision[[3]])
    assert one.ks.shape == (1,)


# ---------------------------------------------------------------------------
# discrete ground truth vs reference
# ---------------------------------------------------------------------------
def test_labels_match_reference_with_singleton_class():
    rng = np.random.default_rng(10)
    n = 70
    labels = rng.integers(0, 4, size=n)
    labels[5] = 99  # a class with a single point: excluded from recall
    Z = rng.normal(size=(n, 2)) + 3.0 * labels[:, None] % 7
    nb = noisy_neighbors(Z, 12, 1.0, rng)
    ks = [1, 4, 12]
    res = geodesic_precision_recall(nb, labels=labels, ks=ks)
    precision, recall = reference_labels(nb, labels, ks)
    np.testing.assert_allclose(res.precision, precision)
    np.testing.assert_allclose(res.recall, recall)


def test_labels_string_and_perfect():
    labels = np.array(["a"] * 5 + ["b"] * 5)
    nb = np.array([[j for j in range(10) if labels[j] == labels[i] and j != i] for i in range(10)])
    res = geodesic_precision_recall(nb, labels=labels)
    np.testing.assert_allclose(res.precision, 1.0)
    np.testing.assert_allclose(res.recall, np.arange(1, 5) / 4)


def test_labels_all_singletons_recall_nan():
    nb = np.array([[1], [2], [0]])
    res = geodesic_precision_recall(nb, labels=[0, 1, 2])
    np.testing.assert_allclose(res.precision, 0.0)
    assert np.isnan(res.recall).all()


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
GOOD = np.array([[1, 2], [2, 0], [0, 1]])
S = np.array([0.0, 1.0, 2.0])


@pytest.mark.parametrize(
    "neighbors, match",
    [
        (np.array([[0, 1], [2, 0], [0, 1]]), "own index"),
        (np.array([[1, 3], [2, 0], [0, 1]]), "outside"),
        (np.array([[1, -1], [2, 0], [0, 1]]), "outside"),
        (np.array([[1, 1], [2, 0], [0, 1]]), "repeated"),
        (GOOD.astype(float), "integer"),
        (np.array([1, 2, 0]), "2-D"),
        (np.zeros((3, 0), dtype=int), "k_max >= 1"),
    ],
)
def test_bad_neighbors(neighbors, match):
    with pytest.raises(ValueError, match=match):
        geodesic_precision_recall(neighbors, latent=S)


def test_too_many_columns():
    nb = np.array([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="other points"):
        geodesic_precision_recall(nb, latent=[0.0, 1.0])


def test_latent_and_labels_exclusive():
    with pytest.raises(ValueError, match="Exactly one"):
        geodesic_precision_recall(GOOD)
    with pytest.raises(ValueError, match="Exactly one"):
        geodesic_precision_recall(GOOD, latent=S, labels=[0, 0, 1])


@pytest.mark.parametrize("ks", [0, 3, [1, 3], [], 1.5, [[1]]])
def test_bad_ks(ks):
    with pytest.raises(ValueError, match="ks"):
        geodesic_precision_recall(GOOD, latent=S, ks=ks)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"latent": [0.0, np.nan, 1.0]}, "NaN"),
        ({"latent": [0.0, np.inf, 1.0]}, "infinite"),
        ({"latent": [0.0, 1.0]}, "2 points"),
        ({"latent": S, "metric": "cosine"}, "metric"),
        ({"latent": np.zeros((3, 2)), "metric": "precomputed"}, "square"),
        ({"latent": -np.ones((3, 3)), "metric": "precomputed"}, "non-negative"),
        ({"latent": [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], "metric": "great_circle"}, "non-zero"),
        ({"latent": S, "metric": "great_circle"}, "2-D"),
        ({"labels": [0, 1]}, "shape"),
        ({"labels": [0.0, np.nan, 1.0]}, "NaN"),
    ],
)
def test_bad_ground_truth(kwargs, match):
    with pytest.raises(ValueError, match=match):
        geodesic_precision_recall(GOOD, **kwargs)


def test_geodesic_neighbors_bad_k():
    with pytest.raises(ValueError, match="n_neighbors"):
        geodesic_neighbors(S, 3)
    with pytest.raises(ValueError, match="n_neighbors"):
        geodesic_neighbors(S, 0)


def test_chance_precision():
    assert chance_precision(1001, 50) == pytest.approx(0.05)
    np.testing.assert_allclose(chance_precision(11, [1, 10]), [0.1, 1.0])
    for n, k in [(1, 1), (10, 0), (10, 10), (10, 2.0)]:
        with pytest.raises(ValueError):
            chance_precision(n, k)
