"""The forests' float32 input: centring before the cast, own copies."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import geoforest as gf
from geoforest.forest._input import PrecisionWarning, centring_offset, to_float32


def _fit(est, X, y=None):
    return est.fit(X) if y is None else est.fit(X, y)


ESTIMATORS = [
    (lambda: gf.UnsupervisedForest(n_estimators=5, random_state=0), False),
    (lambda: gf.RandomProjectionForest(n_estimators=5, random_state=0), False),
    (lambda: gf.ObliqueForestClassifier(n_estimators=5, random_state=0), True),
]


@pytest.mark.parametrize("make, supervised", ESTIMATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_model_does_not_change_when_the_caller_edits_its_array(make, supervised, dtype):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)).astype(dtype)
    y = (X[:, 0] > 0).astype(int) if supervised else None
    model = _fit(make(), X, y)
    before = model.kneighbors(n_neighbors=5)
    assert not np.shares_memory(model._X_fit, X)
    X[:] = rng.normal(size=X.shape)
    after = model.kneighbors(n_neighbors=5)
    np.testing.assert_array_equal(before[1], after[1])
    np.testing.assert_array_equal(before[0], after[0])


def test_dataframe_input_is_copied_too():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(60, 3)).astype(np.float32), columns=list("abc"))
    model = gf.UnsupervisedForest(n_estimators=5, random_state=0).fit(df)
    before = model.kneighbors(n_neighbors=4, return_distance=False)
    df.iloc[:, :] = rng.normal(size=(60, 3)).astype(np.float32)
    np.testing.assert_array_equal(before, model.kneighbors(n_neighbors=4, return_distance=False))


def test_llpd_keeps_its_own_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    model = gf.LLPD().fit(X)
    before = model.kneighbors(n_neighbors=4)
    X[:] = 0.0
    after = model.kneighbors(n_neighbors=4)
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


@pytest.mark.parametrize("offset", [1e7, 1e8])
def test_large_offset_keeps_every_row_and_the_neighbours(offset):
    """Issue 23: 2,000 points + 1e7 kept 421 distinct rows (1e8: 4) as float32."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        shifted = gf.UnsupervisedForest(n_estimators=20, random_state=0).fit(X + offset)
    assert np.unique(shifted._X_fit, axis=0).shape[0] == 2000
    # the same points, stored relative to the column midpoints: the float32 rows
    # are those of X shifted by a float64 constant, to float32 rounding
    mid = (X.min(axis=0) + X.max(axis=0)) / 2
    np.testing.assert_allclose(shifted._X_fit, X - mid, atol=1e-6)
    # new points get the same shift: the training rows as queries find themselves
    ind = shifted.kneighbors(X[:50] + offset, n_neighbors=1, return_distance=False)
    np.testing.assert_array_equal(ind[:, 0], np.arange(50))


def test_ordinary_data_are_cast_bit_for_bit():
    """No shift where the cast loses nothing: same float32 values as before, same trees."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=300), 5 + rng.normal(size=300), np.full(300, 3e9)])
    assert centring_offset(X) is None  # constant columns are never shifted
    f = gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(X)
    np.testing.assert_array_equal(f._X_fit, X.astype(np.float32))


def test_offset_is_free_of_row_order():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 2)) + 1e6
    perm = rng.permutation(500)
    np.testing.assert_array_equal(centring_offset(X), centring_offset(X[perm]))
    np.testing.assert_array_equal(to_float32(X, centring_offset(X))[perm],
                                  to_float32(X[perm], centring_offset(X[perm])))  # fmt: skip


def test_rows_merged_by_the_cast_are_reported():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 2))
    Y = np.vstack([X, X + 1e-12])  # distinct in float64, equal in float32
    with pytest.warns(PrecisionWarning, match="100 of the 200 distinct training rows"):
        gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(np.vstack([X, X]))
        gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(np.vstack([X, -X, 0 * X]))


@pytest.mark.parametrize("make, supervised", ESTIMATORS)
def test_values_beyond_float32_are_refused_like_inf(make, supervised):
    """Issue 30: 1e39 became inf in the float32 cast, with only numpy's warning."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int) if supervised else None
    model = _fit(make(), X, y)
    too_big = "too large for dtype\\('float32'\\)"
    queries = {
        "apply": lambda Q: model.apply(Q),
        "transform": lambda Q: model.transform(Q),
        "kneighbors": lambda Q: model.kneighbors(Q, n_neighbors=3),
        "proximity": lambda Q: model.proximity(Q),
    }
    if supervised:
        queries["predict"] = lambda Q: model.predict(Q)
        queries["predict_proba"] = lambda Q: model.predict_proba(Q)
    for query in queries.values():
        for value in (1e39, -1e39):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no numpy cast warning either
                with pytest.raises(ValueError, match=too_big):
                    query(np.full((1, 4), value))
    bad = X.copy()
    bad[3, 1] = 1e39
    with pytest.raises(ValueError, match=too_big):
        _fit(make(), bad, y)
    with pytest.raises(ValueError, match="infinity"):  # what fit says of inf, for comparison
        _fit(make(), np.where(bad == 1e39, np.inf, bad), y)


def test_values_within_float32_after_centring_are_kept():
    """The check is on the cast values: a far-off column shifted into range is fine."""
    X = np.random.default_rng(0).normal(size=(50, 2)) * 1e35 + 1e39
    offset = centring_offset(X)
    assert offset is not None
    assert np.isfinite(to_float32(X, offset)).all()
    with pytest.raises(ValueError, match="too large"):
        to_float32(X, None)
    # a float32 query, finite as given, leaves the range once shifted by the fit's offset
    far = np.random.default_rng(1).normal(size=(50, 2)) * 1e35 - 2e38
    forest = gf.UnsupervisedForest(n_estimators=3, random_state=0).fit(far)
    with pytest.raises(ValueError, match="too large"):
        forest.apply(np.full((1, 2), 3e38, dtype=np.float32))
