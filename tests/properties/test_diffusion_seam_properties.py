"""DiffusionMap and LUND on the graph seam (issue 53).

* ``transform(X_train)`` equals ``fit_transform(X_train)`` and
  ``predict(X_train)`` equals ``labels_``, in the Euclidean geometry and the
  forest's, for data near zero and far from it;
* data far from zero: the embedding and LUND's labels are those of ``X`` for
  ``X + c`` (``c`` up to 1e6 per column) in the Euclidean geometry (a
  forest's trees, grown on float32 coordinates, are the forest's to answer for);
* for n from 2 to 120 at defaults (``n_neighbors`` capped below n),
  ``transform(X_train) == fit_transform(X_train)``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import geoforest as gf

from ._strategies import SEAM_SETTINGS, far_shifts, seam_blobs, shifts


def _forest():
    return gf.UnsupervisedForest(n_estimators=10, random_state=0)


def _dm(metric: str, **kw) -> gf.DiffusionMap:
    forest = _forest() if metric == "forest" else None
    return gf.DiffusionMap(10, metric=metric, forest=forest, n_components=4, random_state=0, **kw)


def _aligned(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A`` with each column's sign flipped to agree with ``B``'s."""
    return A * np.where(np.sum(A * B, axis=0) < 0, -1.0, 1.0)[None, :]


@pytest.mark.parametrize("metric", ["euclidean", "forest"])
@SEAM_SETTINGS
@given(seed=st.integers(0, 10_000), data=st.data())
def test_diffusion_map_transform_of_training_points_and_shift(metric, seed, data):
    """Before the fix the forest's Nyström matched queries against its centred
    copy of X: off by up to 0.65 for data far from zero."""
    c = np.asarray(data.draw(shifts if metric == "euclidean" else far_shifts))
    X = seam_blobs(seed, 90, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a disconnected graph is said
        ref = _dm(metric).fit(X)
        dm = _dm(metric).fit(X + c)
    Y = dm.embedding()
    np.testing.assert_allclose(dm.transform(X + c), Y, atol=1e-12)
    np.testing.assert_allclose(ref.transform(X), ref.embedding(), atol=1e-12)
    if metric == "euclidean":  # a forest's own trees see float32 coordinates
        np.testing.assert_allclose(_aligned(Y, ref.embedding()), ref.embedding(), atol=1e-5)


@pytest.mark.parametrize("metric", ["euclidean", "forest"])
@SEAM_SETTINGS
@given(seed=st.integers(0, 10_000), data=st.data())
def test_lund_labels_and_predict_do_not_move_with_the_data(metric, seed, data):
    """Before the fix LUND changed 107 of 120 labels when the data were shifted."""
    c = np.asarray(data.draw(shifts if metric == "euclidean" else far_shifts))
    X = seam_blobs(seed, 120, 3)
    forest = _forest() if metric == "forest" else None
    model = gf.LUND(n_clusters=3, t=16.0, metric=metric, forest=forest, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = clone(model).fit(X)
        moved = clone(model).fit(X + c)
    if metric == "euclidean":  # a forest's own trees see float32 coordinates
        np.testing.assert_array_equal(moved.labels_, ref.labels_)
    np.testing.assert_array_equal(moved.predict(X + c), moved.labels_)
    np.testing.assert_array_equal(ref.predict(X), ref.labels_)


@pytest.mark.parametrize("metric", ["euclidean", "forest"])
@settings(SEAM_SETTINGS, max_examples=15)
@given(n=st.integers(2, 120), seed=st.integers(0, 10_000))
def test_small_n_transform_of_training_points(metric, n, seed):
    X = seam_blobs(seed, n, 3)
    k = min(15, n - 1)
    dm = gf.DiffusionMap(k, metric=metric, n_components=min(10, n), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        Y = dm.fit_transform(X)
        Z = dm.transform(X)
    np.testing.assert_allclose(Z, Y, atol=1e-10)
