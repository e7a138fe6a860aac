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
