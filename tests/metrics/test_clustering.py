"""Tests for clustering_accuracy and cocluster_accuracy against brute-force references."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import rand_score

import geoforest.metrics._clustering as clustering_module
from geoforest.metrics import clustering_accuracy, cocluster_accuracy


# ---------------------------------------------------------------------------
# reference implementations
# ---------------------------------------------------------------------------
def brute_force_accuracy(y_true, y_pred):
    """Best one-to-one matching by trying every injective map between label sets."""
    classes = sorted(set(y_true.tolist()))
    clusters = sorted(set(y_pred.tolist()))
    pairs = list(zip(y_true.tolist(), y_pred.tolist(), strict=True))
    best = 0
    if len(classes) <= len(clusters):
        for image in itertools.permutations(clusters, len(classes)):
            mapping = dict(zip(classes, image, strict=True))
            best = max(best, sum(mapping[t] == p for t, p in pairs))
    else:
        for image in itertools.permutations(classes, len(clusters)):
            mapping = dict(zip(clusters, image, strict=True))
            best = max(best, sum(mapping[p] == t for t, p in pairs))
    return best / len(pairs)


def brute_force_cocluster(y_true, y_pred):
    """Explicit loop over all unordered pairs i < j."""
    n = len(y_true)
    if n < 2:
        return 1.0
    agree = 0
    for i in range(n):
        for j in range(i + 1, n):
            agree += (y_true[i] == y_true[j]) == (y_pred[i] == y_pred[j])
    return agree / (n * (n - 1) // 2)


def random_pair(rng, n, k_true, k_pred, noise=0.5):
    """A true partition and a noisy prediction using arbitrary (shifted) cluster ids."""
    y_true = rng.integers(0, k_true, n)
    y_pred = np.where(rng.random(n) < noise, rng.integers(0, k_pred, n), y_true % k_pred)
    return y_true, y_pred + 10


# ---------------------------------------------------------------------------
# clustering_accuracy
# ---------------------------------------------------------------------------
def test_clustering_accuracy_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        k_true = int(rng.integers(1, 5))
        k_pred = int(rng.integers(1, 5))
        y_true, y_pred = random_pair(rng, n, k_true, k_pred, noise=rng.random())
        expected = brute_force_accuracy(y_true, y_pred)
        assert clustering_accuracy(y_true, y_pred) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("k_true", "k_pred"), [(2, 4), (4, 2), (1, 4), (4, 1), (3, 3)])
def test_clustering_accuracy_rectangular(k_true, k_pred):
    rng = np.random.default_rng(k_true * 10 + k_pred)
    for _ in range(20):
        y_true = rng.integers(0, k_true, 25)
        y_pred = rng.integers(0, k_pred, 25)
        expected = brute_force_accuracy(y_true, y_pred)
        assert clustering_accuracy(y_true, y_pred) == pytest.approx(expected, abs=1e-15)


def test_clustering_accuracy_unmatched_clusters_are_errors():
    # Three clusters, two classes: the smallest cluster cannot be matched.
    assert clustering_accuracy([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 2]) == pytest.approx(4 / 6)
    # One cluster, two classes: only one class can be matched.
    assert clustering_accuracy([0, 0, 0, 1], [7, 7, 7, 7]) == 0.75
    # Every point its own cluster: one point per class is matched.
    assert clustering_accuracy([0, 0, 1, 1, 1], [0, 1, 2, 3, 4]) == 2 / 5


def test_clustering_accuracy_minus_one_is_ordinary_label():
    y_true = np.array([0, 0, 0, 1, 1, 1])
    y_pred = np.array([-1, -1, -1, 3, 3, -1])
    # -1 is matched to class 0 like any other cluster.
    assert clustering_accuracy(y_true, y_pred) == 5 / 6
    keep = y_pred != -1
    assert clustering_accuracy(y_true[keep], y_pred[keep]) == 1.0


def test_sparse_matching_agrees_with_hungarian(monkeypatch):
    rng = np.random.default_rng(1)
    cases = []
    for _ in range(150):
        n = int(rng.integers(1, 80))
        y_true, y_pred = random_pair(
            rng, n, int(rng.integers(1, 12)), int(rng.integers(1, 12)), rng.random()
        )
        cases.append((y_true, y_pred, clustering_accuracy(y_true, y_pred)))
    monkeypatch.setattr(clustering_module, "_DENSE_TABLE_ENTRIES", 0)
    for y_true, y_pred, dense in cases:
        assert clustering_accuracy(y_true, y_pred) == dense


def test_clustering_accuracy_many_clusters_uses_sparse_matching():
    # 30000 x 30000 clusters would need a 7 GB dense table.
    rng = np.random.default_rng(2)
    n = 30_000
    y_true = np.arange(n)
    assert clustering_accuracy(y_true, rng.permutation(n)) == 1.0
    assert clustering_accuracy(y_true, y_true // 2) == 0.5
    assert clustering_accuracy(y_true // 3, y_true) == pytest.approx(1 / 3)


# ---------------------------------------------------------------------------
# cocluster_accuracy
# ---------------------------------------------------------------------------
def test_cocluster_accuracy_matches_pair_loop():
    rng = np.random.default_rng(3)
    for _ in range(100):
        n = int(rng.integers(1, 61))
        y_true, y_pred = random_pair(
            rng, n, int(rng.integers(1, 7)), int(rng.integers(1, 7)), rng.random()
        )
        expected = brute_force_cocluster(y_true, y_pred)
        assert cocluster_accuracy(y_true, y_pred) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("k_true", "k_pred"), [(2, 2), (5, 17), (50, 3), (1, 30), (3000, 3000)])
def test_cocluster_accuracy_matches_rand_score(k_true, k_pred):
    rng = np.random.default_rng(k_true + k_pred)
    y_true, y_pred = random_pair(rng, 10_000, k_true, k_pred)
    assert cocluster_accuracy(y_true, y_pred) == pytest.approx(
        rand_score(y_true, y_pred), abs=1e-12
    )


def test_cocluster_accuracy_single_point_and_extremes():
    assert cocluster_accuracy([3], [9]) == 1.0
    assert cocluster_accuracy(["a"], ["b"]) == 1.0
    # All together vs all apart: every pair disagrees.
    assert cocluster_accuracy([0, 0, 0, 0], [0, 1, 2, 3]) == 0.0
    assert cocluster_accuracy([0, 0, 1, 1], [0, 0, 1, 2]) == pytest.approx(5 / 6)


# ---------------------------------------------------------------------------
# shared properties
# ---------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=100, deadline=None)
@given(
    labels=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), min_size=1, max_size=40),
    seed=st.integers(0, 2**32 - 1),
)
def test_invariant_to_relabeling_predictions(labels, seed):
    y_true = np.array([t for t, _ in labels])
    y_pred = np.array([p for _, p in labels])
    perm = np.random.default_rng(seed).permutation(6)
    relabeled = perm[y_pred] * 3 - 1  # any injective renaming, including -1
    assert clustering_accuracy(y_true, relabeled) == clustering_accuracy(y_true, y_pred)
    assert cocluster_accuracy(y_true, relabeled) == cocluster_accuracy(y_true, y_pred)
    assert cocluster_accuracy(y_true, y_pred) == pytest.approx(
        brute_force_cocluster(y_true, y_pred), abs=1e-12
    )


def test_identical_partitions_score_one():
    rng = np.random.default_rng(4)
    for k in (1, 2, 7, 300):
        y = rng.integers(0, k, 1000)
        assert clustering_accuracy(y, y) == 1.0
        assert cocluster_accuracy(y, y) == 1.0
        renamed = rng.permutation(k)[y] + 1000
        assert clustering_accuracy(y, renamed) == 1.0
        assert cocluster_accuracy(y, renamed) == 1.0


def test_string_and_mixed_labels():
    y_true = np.array(["cat", "cat", "dog", "dog", "eel"])
    y_pred = ["x", "x", "y", "z", "z"]
    assert clustering_accuracy(y_true, y_pred) == 4 / 5  # cat->x, dog->y, eel->z
    assert cocluster_accuracy(y_true, y_pred) == pytest.approx(
        brute_force_cocluster(y_true, y_pred), abs=1e-12
    )
    codes = np.array([0, 0, 1, 1, 2])
    assert clustering_accuracy(y_true, y_pred) == clustering_accuracy(codes, y_pred)
    # Unsortable object labels (None mixed with ints and strings) are hashed.
    mixed = np.array([None, None, 1, 1, "a"], dtype=object)
    assert clustering_accuracy(mixed, y_pred) == 4 / 5
    assert cocluster_accuracy(mixed, y_pred) == cocluster_accuracy(codes, y_pred)


def test_large_input():
    rng = np.random.default_rng(5)
    y_true, y_pred = random_pair(rng, 1_000_000, 20, 20, noise=0.3)
    acc = clustering_accuracy(y_true, y_pred)
    # The identity-like matching (class c -> cluster c + 10) is optimal here.
    expected = np.mean(y_pred == y_true + 10)
    assert acc == pytest.approx(expected, abs=1e-12)
    assert cocluster_accuracy(y_true, y_pred) == pytest.approx(
        rand_score(y_true, y_pred), abs=1e-12
    )


def test_overflow_free_pair_counts():
    # 10^7 points in one class: C(n, 2) ~ 5e13, and n * n would overflow int32.
    n = 10_000_000
    y_true = np.zeros(n, dtype=np.int8)
    y_pred = np.zeros(n, dtype=np.int8)
    y_pred[: n // 2] = 1
    half = n // 2
    together_both = 2 * (half * (half - 1) // 2)
    expected = together_both / (n * (n - 1) // 2)
    assert cocluster_accuracy(y_true, y_pred) == expected
    assert clustering_accuracy(y_true, y_pred) == 0.5


@pytest.mark.parametrize(
    "labels",
    [
        np.array([-128, 127, 0, 127, -128], dtype=np.int8),
        np.array([0, 255, 255, 1, 0], dtype=np.uint8),
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1, 0, 0], dtype=np.uint64),
        np.array([-(2**63), 2**63 - 1, -(2**63), 5, 5], dtype=np.int64),
        np.array([2**63 - 1, 2**63 - 2, 2**63 - 1, 2**63 - 4, 2**63 - 4], dtype=np.int64),
        np.array([True, False, True, False, False]),
    ],
)
def test_extreme_integer_labels(labels):
    codes = np.unique(labels, return_inverse=True)[1].reshape(-1)
    y_pred = np.array([0, 1, 0, 1, 2])
    assert clustering_accuracy(labels, y_pred) == clustering_accuracy(codes, y_pred)
    assert cocluster_accuracy(labels, y_pred) == cocluster_accuracy(codes, y_pred)
    assert clustering_accuracy(labels, labels) == 1.0
    assert cocluster_accuracy(y_pred, labels) == pytest.approx(rand_score(codes, y_pred))


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("metric", [clustering_accuracy, cocluster_accuracy])
@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        ([[0, 1], [1, 0]], [0, 1, 1, 0], "y_true must be a 1-D"),
        ([0, 1, 1, 0], [[0, 1], [1, 0]], "y_pred must be a 1-D"),
        (0, [0], "y_true must be a 1-D"),
        ([0, 1, 2], [0, 1], "same length"),
        ([], [], "y_true is empty"),
        ([0, 1], [], "y_pred is empty"),
        ([0.0, np.nan], [0, 1], "y_true contains NaN"),
        ([0, 1], [1.0, np.nan], "y_pred contains NaN"),
        (np.array([0, float("nan")], dtype=object), [0, 1], "y_true contains NaN"),
    ],
)
def test_errors(metric, y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        metric(y_true, y_pred)


def test_unhashable_labels_rejected():
    labels = np.empty(2, dtype=object)
    labels[0] = [1]
    labels[1] = 1
    with pytest.raises(ValueError, match="comparable or hashable"):
        clustering_accuracy(labels, [0, 1])
