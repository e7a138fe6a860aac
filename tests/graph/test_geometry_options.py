"""Bad values of the geometry options, tried on every estimator that takes them."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf
from geoforest.graph import METRICS

X = np.random.RandomState(0).standard_normal((40, 3))

#: Every estimator with the geometry options, small enough to fit in a test.
ESTIMATORS = {
    "ForestSpectralClustering": lambda **kw: gf.ForestSpectralClustering(2, **kw),
    "LUND": lambda **kw: gf.LUND(2, n_components=3, **kw),
    "DiffusionMap": lambda **kw: gf.DiffusionMap(n_components=3, **kw),
    "LLPD": lambda **kw: gf.LLPD(**kw),
    "LLPDSpectralClustering": lambda **kw: gf.LLPDSpectralClustering(2, k_nse=5, **kw),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(ESTIMATORS)),
    metric=st.one_of(
        st.text(max_size=12).filter(lambda m: m not in METRICS),
        st.integers(),
        st.none(),
        st.sampled_from(["Euclidean", "FOREST", "cosine", " forest"]),
    ),
)
def test_an_unknown_metric_is_refused_by_name(name, metric):
    with pytest.raises((ValueError, TypeError), match="metric"):
        ESTIMATORS[name](metric=metric).fit(X)


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(ESTIMATORS)),
    n_neighbors=st.one_of(
        st.integers(max_value=0), st.floats(allow_nan=True), st.just("15"), st.integers(40, 10**6)
    ),
)
def test_bad_neighbour_counts_are_refused(name, n_neighbors):
    # 0, negatives, floats, strings: invalid; 40 or more: at least n_samples (40 points)
    est = ESTIMATORS[name](
        metric="forest", forest=gf.UnsupervisedForest(5), n_neighbors=n_neighbors
    )
    with pytest.raises((ValueError, TypeError), match="n_neighbors"):
        est.fit(X)


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=20, deadline=None)
@given(
    name=st.sampled_from(sorted(ESTIMATORS)),
    forest=st.sampled_from([object(), "forest", 3, np.zeros(3)]),
    metric=st.sampled_from(["forest", "euclidean"]),
)
def test_a_forest_that_is_not_one_or_not_asked_for_is_refused(name, forest, metric):
    with pytest.raises((ValueError, TypeError), match="forest"):
        ESTIMATORS[name](metric=metric, forest=forest).fit(X)


def test_a_fitted_forest_on_other_points_is_refused_by_every_estimator():
    forest = gf.UnsupervisedForest(5, random_state=0).fit(X[:30])
    for make in ESTIMATORS.values():
        with pytest.raises(ValueError, match="grown on other points"):
            make(metric="forest", forest=forest).fit(X)


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=30, deadline=None)
@given(excess=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=12))
def test_choose_by_excess_is_defined_for_any_scores(excess):
    k = gf.graph.choose_by_excess(excess)
    s = np.asarray(excess, dtype=float)
    above = np.flatnonzero(np.isfinite(s) & (s >= 0.5))
    assert k == (above.max() + 2 if above.size else 1)


@pytest.mark.filterwarnings("ignore::UserWarning")  # drawn inputs may warn
@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 30), k=st.integers(1, 5), seed=st.integers(0, 1000))
def test_knn_affinity_is_symmetric_and_in_the_unit_interval(n, k, seed):
    rng = np.random.RandomState(seed)
    ind = rng.randint(0, n, size=(n, k))  # careless lists: repeats, self entries
    A = gf.graph.knn_affinity(ind, n)
    assert abs(A - A.T).max() == 0 if A.nnz else True
    assert np.all(A.diagonal() == 0)
    assert np.all((A.data > 0) & (A.data <= 1))
    # Against the definition with Python sets: an edge wherever one lists the
    # other, weighing the Jaccard overlap of the lists with the points themselves.
    sets = [set(ind[i]) | {i} for i in range(n)]
    expected = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j and (j in sets[i] or i in sets[j]):
                expected[i, j] = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
    np.testing.assert_allclose(A.toarray(), expected, rtol=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    params=st.one_of(
        st.none(),
        st.just({}),
        st.just({"decay_redraws": True}),
        st.just({"n_estimators": 0}),
        st.just({"no_such_setting": 1}),
        st.just([("decay_redraws", True)]),
        st.integers(),
        st.text(max_size=3),
    ),
    metric=st.sampled_from(["euclidean", "forest"]),
    given_forest=st.booleans(),
    offset=st.sampled_from([0.0, 1e6]),
)
def test_default_forest_params_set_only_the_forest_the_geometry_grows(
    params, metric, given_forest, offset
):
    """default_forest_params: the settings of the forest grown for forest=None; a
    user's forest and the Euclidean geometry ignore them; bad ones are refused
    by the forest (a TypeError or ValueError), never silently dropped."""
    X = np.random.default_rng(0).normal(size=(40, 3)) + offset
    forest = gf.UnsupervisedForest(n_estimators=3) if given_forest and metric == "forest" else None
    kw = dict(forest=forest, n_neighbors=5, random_state=0, default_forest_params=params)
    used = metric == "forest" and forest is None and params is not None
    good = params is None or params in ({}, {"decay_redraws": True})
    if used and not good:
        with pytest.raises((TypeError, ValueError)):
            gf.graph.fit_geometry(X, metric, **kw)
        return
    geometry = gf.graph.fit_geometry(X, metric, **kw)
    assert geometry.neighbors()[1].shape == (40, 5)
    if metric == "forest":
        grown = geometry.forest_
        assert grown.decay_redraws == (used and params == {"decay_redraws": True})
        assert grown.n_estimators == (3 if forest is not None else 100)
