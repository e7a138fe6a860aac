"""Forest spectral clustering on the graph seam (issue 53): data far from zero.

Every cluster estimator of :mod:`geoforest.cluster` that reads coordinates
gives the same labels (and predictions) for ``X`` and ``X + c``, ``c`` up to
1e6 per column, in the Euclidean geometry and the forest's, for both
affinities.  (``KernelSpectralClustering`` takes an affinity, which a shift of
the points does not reach.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

import geoforest as gf

SETTINGS = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

CENTERS = np.array([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0], [0.0, 5.0, 1.0]])
X = make_blobs(60, centers=CENTERS, cluster_std=0.6, random_state=2)[0]

ESTIMATORS = {
    "knn-euclidean-labelfree": dict(metric="euclidean"),
    "knn-forest": dict(n_clusters=3, metric="forest"),
    # K chosen on a subset of 40 of the 60 points (its own graph and references)
    "knn-euclidean-labelfree-subset": dict(metric="euclidean", max_selection_samples=40),
    "knn-forest-labelfree-subset": dict(metric="forest", max_selection_samples=40),
    "kernel": dict(n_clusters=3, affinity="kernel", threshold=0.0, scale=0.1),
}

offsets = st.lists(
    st.one_of(st.just(0.0), st.floats(-1e6, 1e6, allow_nan=False)), min_size=3, max_size=3
)


@pytest.mark.parametrize("params", list(ESTIMATORS.values()), ids=list(ESTIMATORS))
@SETTINGS
@given(c=offsets)
def test_labels_do_not_move_with_the_data(params, c):
    shift = np.asarray(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = gf.ForestSpectralClustering(random_state=0, **params).fit(X)
        moved = gf.ForestSpectralClustering(random_state=0, **params).fit(X + shift)
    np.testing.assert_array_equal(moved.labels_, plain.labels_)
    Q = X[::7] + 0.05
    np.testing.assert_array_equal(moved.predict(Q + shift), plain.predict(Q))


# ``max_selection_samples`` as a careless user passes it, on 2..120 points far
# from zero: a bad value is refused by its name; a good one either fits (the
# subset holds min(m, n) points, every label is set) or, when the subset could
# not hold a neighbour graph (m <= n_neighbors < n), is refused by its name.
sizes = st.one_of(
    st.integers(-3, 140),
    st.floats(-5.0, 200.0, allow_nan=False),
    st.sampled_from([None, "auto", "all", True, False, "20"]),
)


@SETTINGS
@given(
    n=st.integers(2, 120),
    m=sizes,
    offset=st.sampled_from([0.0, 1e6]),
    seed=st.integers(0, 3),
)
def test_max_selection_samples_is_refused_or_honoured(n, m, offset, seed):
    data = np.random.default_rng(seed).normal(size=(n, 3)) + offset
    model = gf.ForestSpectralClustering(
        metric="euclidean", max_selection_samples=m, random_state=seed
    )
    valid = m is None or m == "auto" or (type(m) is int and m >= 10)
    if not valid:
        with pytest.raises(ValueError, match="max_selection_samples"):
            model.fit(data)
        return
    size = {None: n, "auto": 20000}.get(m, m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if n > size and size <= model.n_neighbors:
            with pytest.raises(ValueError, match=f"max_selection_samples={size} must exceed"):
                model.fit(data)
            return
        if n <= model.n_neighbors:  # too few points for the graph at all, said plainly
            with pytest.raises(
                ValueError, match=f"n_neighbors=15 must be smaller than n_samples={n}"
            ):
                model.fit(data)
            return
        model.fit(data)
    assert model.levels_.rows.size == min(size, n)
    assert np.all(np.diff(model.levels_.rows) > 0) and model.levels_.rows[-1] < n
    assert model.labels_.shape == (n,) and model.labels_.min() >= 0
