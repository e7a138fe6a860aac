"""Contracts of the learned ranking that must hold for any data a user brings.

Property-based (hypothesis): distances ascend in every row whatever the
number of points, of neighbours, of trees, ties in the data and the trees'
masks; and two geometric cases the ranking once got wrong (issue 42).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import geoforest as gf


@st.composite
def _problems(draw):
    n = draw(st.integers(3, 60))
    p = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    # Few distinct values make ties in the data, in projections and in proximities.
    levels = draw(st.sampled_from([None, 2, 3]))
    X = rng.normal(size=(n, p)) if levels is None else rng.integers(0, levels, (n, p)) * 1.0
    k = draw(st.integers(1, n - 1))
    trees = draw(st.integers(1, 6))
    split = draw(st.sampled_from([2, 6, 45]))
    method = draw(st.sampled_from(["all", "oob", "inbag"]))
    new_points = draw(st.booleans())
    return X, k, trees, split, method, new_points, seed


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@pytest.mark.filterwarnings("ignore:every feature of X is constant:UserWarning")  # drawn
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_problems())
def test_distances_ascend_in_every_row(problem):
    X, k, trees, split, method, new_points, seed = problem
    forest = gf.UnsupervisedForest(
        n_estimators=trees, min_samples_split=split, random_state=seed
    ).fit(X)
    with _quiet():
        if new_points:
            if method != "all":
                return
            dist, ind = forest.kneighbors(X[::-1] + 0.5, n_neighbors=k)
        else:
            dist, ind = forest.kneighbors(n_neighbors=k, method=method)
    assert dist.shape == ind.shape == (X.shape[0], k)
    assert np.all(np.isfinite(dist))
    assert np.all(np.diff(dist, axis=1) >= 0), "distances out of order"
    # Distinct indices in each row, never the point itself for X=None.
    assert all(np.unique(row).size == k for row in ind)
    if not new_points:
        assert not np.any(ind == np.arange(X.shape[0])[:, None])
    # Each distance is the metric's distance of its pair.
    metric = forest._ranking()
    if metric is not None:
        Xf = forest._X_fit
        Xq = Xf if not new_points else forest._validate_X(X[::-1] + 0.5, reset=False)
        d = np.sqrt((((Xq[:, None, :].astype(np.float64) - Xf[ind]) ** 2) * metric.weights).sum(2))
        np.testing.assert_allclose(dist, d, rtol=1e-9, atol=1e-12)


class _quiet:
    """Silence the warnings few trees give (rows never out of bag): not under test."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def test_clean_sheet_is_ranked_in_its_own_units():
    # A flat 10:1 strip: the trees cut both directions about equally often, so
    # pools are stretched like the strip; ranking in pool units gave 0.30 of
    # Euclid's precision (issue 42), the data's own units about 1.0.
    X, latent = gf.datasets.make_sheet("strip", 600, aspect=10, random_state=0)
    truth = gf.datasets.sheet_geodesic_truth("strip", latent, aspect=10)
    forest = gf.UnsupervisedForest(n_estimators=30, random_state=0).fit(X)
    ind = forest.kneighbors(n_neighbors=30, return_distance=False)
    got = gf.metrics.geodesic_precision_recall(ind, ks=[30], **truth).precision[0]
    from sklearn.neighbors import NearestNeighbors

    euclid = NearestNeighbors(n_neighbors=31).fit(X).kneighbors(return_distance=False)[:, 1:]
    ref = gf.metrics.geodesic_precision_recall(euclid, ks=[30], **truth).precision[0]
    assert got >= 0.97 * ref, (got, ref)
    # Every direction of the sheet counts fully (the saturation).
    np.testing.assert_array_equal(forest._ranking().weights, 1.0)


def test_the_papers_helix_keeps_pool_units():
    # A curve: rescaling features keeps the order along it and separates its
    # coils, so pool units stay (the local dimension is about 1).
    X, arc = gf.datasets.make_helix(600, random_state=0)
    forest = gf.UnsupervisedForest(n_estimators=30, random_state=0).fit(X)
    w = forest._ranking().weights
    assert np.ptp(w) > 0  # not the data's own units
    ind = forest.kneighbors(n_neighbors=30, return_distance=False)
    got = gf.metrics.geodesic_precision_recall(ind, ks=[30], latent=arc).precision[0]
    assert got > 0.95, got


def _kind_and_precision(X, truth, k=20, trees=40):
    from sklearn.neighbors import NearestNeighbors

    forest = gf.UnsupervisedForest(n_estimators=trees, random_state=0).fit(X)
    ind = forest.kneighbors(n_neighbors=k, return_distance=False)
    got = gf.metrics.geodesic_precision_recall(ind, ks=[k], **truth).precision[0]
    euclid = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(return_distance=False)[:, 1:]
    ref = gf.metrics.geodesic_precision_recall(euclid, ks=[k], **truth).precision[0]
    return forest._ranking(), got, ref


def test_mixed_units_are_measured_in_pool_units():
    # One column of a sheet in units 10^4 times larger: the data's own units
    # would let it decide, so each strong feature is taken in its pool's units.
    X, latent = gf.datasets.make_sheet("strip", 500, aspect=3, random_state=1)
    X = X * np.array([1.0, 1.0, 1e4])
    truth = gf.datasets.sheet_geodesic_truth("strip", latent, aspect=3)
    metric, got, ref = _kind_and_precision(X, truth)
    assert metric.kind == "mixed units"
    assert got > 0.5, got  # the raw-unit ranking scores about chance here
    X2 = X / np.array([1.0, 1.0, 1e4])
    assert _kind_and_precision(X2, truth)[0].kind == "sheet"


def test_no_structure_falls_back_to_euclid_on_the_candidates():
    # Rotated noise as heavy as the signal: no feature stands out of a raised
    # floor; the ranking is Euclid's on the forest's candidates, not a metric
    # built on the one feature that happens to lead.
    X, arc = gf.datasets.make_helix(800, random_state=0)
    X = gf.datasets.add_rotated_noise(X, 20, level=1.0, random_state=3)
    metric, got, ref = _kind_and_precision(X, {"latent": arc})
    assert metric.kind == "no structure", metric.relevance
    np.testing.assert_array_equal(metric.weights, 1.0)
    # The same forest's neighbours ranked by Euclid over its candidates, by hand.
    forest = gf.UnsupervisedForest(n_estimators=40, random_state=0, distance="proximity").fit(X)
    # NO_STRUCTURE_CANDIDATES (24) candidates per neighbour, the query counting itself.
    cand = forest.kneighbors(n_neighbors=24 * 21 - 1, return_distance=False)
    d = ((X[cand] - X[:, None, :]) ** 2).sum(axis=2)
    by_hand = np.take_along_axis(cand, np.argsort(d, axis=1, kind="stable")[:, :20], axis=1)
    expected = gf.metrics.geodesic_precision_recall(by_hand, ks=[20], latent=arc).precision[0]
    assert abs(got - expected) < 0.01, (got, expected)
    assert got >= 0.95 * ref, (got, ref)


@pytest.mark.parametrize("call", ["kneighbors", "kneighbors_graph", "proximity"])
def test_a_bad_method_lists_every_valid_one(call):
    X = np.random.default_rng(0).normal(size=(40, 3))
    for forest in (
        gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(X),
        gf.ObliqueForestClassifier(n_estimators=3, random_state=0).fit(X, X[:, 0] > 0),
    ):
        with pytest.raises(ValueError) as err:
            getattr(forest, call)(method="bogus")
        for valid in ("'all'", "'inbag'", "'oob'", "'rfgap'"):
            assert valid in str(err.value)
