"""Tests for geoforest.datasets.load_drosophila and its shipped data files."""

from collections import Counter
from importlib import resources

import numpy as np
import pytest

import geoforest
from geoforest.datasets import load_drosophila

DATA_DIR = resources.files("geoforest.datasets") / "data" / "drosophila"


@pytest.fixture(scope="module")
def data():
    return load_drosophila()


def _raw_files():
    """Independent read of the shipped files (plain numpy / text parsing)."""
    with resources.as_file(DATA_DIR / "right_adjacency.csv") as path:
        A = np.loadtxt(path)
    with resources.as_file(DATA_DIR / "right_cell_labels.csv") as path:
        with open(path, encoding="ascii") as fh:
            labels = [line.strip() for line in fh if line.strip()]
    return A, labels


def test_exported():
    assert "load_drosophila" in geoforest.datasets.__all__
    assert geoforest.datasets.load_drosophila is load_drosophila


def test_shapes_and_dtypes(data):
    assert data.adjacency.shape == (213, 213)
    assert data.adjacency.dtype == np.float64
    assert data.labels.shape == (213,)
    assert data.target.shape == (213,)
    assert np.issubdtype(data.target.dtype, np.integer)


def test_classes(data):
    assert list(data.target_names) == ["I", "K", "O", "P"]
    assert len(np.unique(data.target)) == 4
    assert set(data.cell_types) == {"I", "K", "O", "P"}
    assert "Kenyon" in data.cell_types["K"]
    np.testing.assert_array_equal(data.target_names[data.target], data.labels)


def test_matches_raw_files(data):
    A, labels = _raw_files()
    np.testing.assert_array_equal(data.adjacency, A)
    assert list(data.labels) == labels
    raw_counts = Counter(labels)
    counts = np.bincount(data.target, minlength=4)
    assert {str(k): int(c) for k, c in zip(data.target_names, counts, strict=True)} == dict(
        raw_counts
    )
    assert raw_counts == {"K": 100, "P": 63, "O": 29, "I": 21}


def test_adjacency_properties(data):
    A = data.adjacency
    assert np.all(A >= 0)
    assert not np.array_equal(A, A.T)
    assert np.all(A == np.round(A))
    assert np.count_nonzero(A) == 7536
    assert A.sum() == 26371


def test_return_X_y(data):
    A, y = load_drosophila(return_X_y=True)
    np.testing.assert_array_equal(A, data.adjacency)
    np.testing.assert_array_equal(y, data.target)


def test_descr(data):
    assert "MIT" in data.DESCR
    assert "LICENSE-graspologic.txt" in data.DESCR
    assert "Eichler" in data.DESCR
    assert "213" in data.DESCR
    assert str(np.count_nonzero(data.adjacency)) in data.DESCR


def test_licence_file_shipped():
    licence = DATA_DIR / "LICENSE-graspologic.txt"
    assert licence.is_file()
    text = licence.read_text(encoding="utf-8")
    assert "MIT License" in text
    assert "Permission is hereby granted, free of charge" in text
    assert "Copyright (c) Microsoft Corporation." in text
    assert "right_adjacency.csv" in text and "right_cell_labels.csv" in text
    assert "Eichler" in text
    assert (DATA_DIR / "README.md").is_file()
