"""The URerF paper experiments: every ``--quick`` run end to end, files, columns and claims."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from geoforest.cli import build_parser, main
from geoforest_experiments import EXPERIMENTS, ExperimentConfig, run_experiment
from geoforest_experiments._runner import format_table, select, simulation, write_csv


def _read(path):
    return list(csv.DictReader(path.open()))


def _run(name, tmp_path):
    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=2, seed=0, show_progress=False)
    result = run_experiment(name, config)
    record = json.loads((tmp_path / f"{name.replace('-', '_')}.json").read_text())
    assert record["experiment"] == name and record["quick"] is True and record["seconds"] >= 0
    for path in result.files:
        assert path.exists() and path.stat().st_size > 0
        assert "-" not in path.name  # one naming style: lower case, underscores
    for png in (p for p in result.files if p.suffix == ".png"):
        assert png.stat().st_size > 10_000
    return result


def test_criteria_quick(tmp_path, capsys):
    result = _run("criteria", tmp_path)
    rows = _read(tmp_path / "criteria.csv")
    assert list(rows[0]) == [
        "simulation", "method", "criterion", "k", "precision", "recall", "n_samples",
        "n_estimators",
    ]  # fmt: skip
    variants = {(r["method"], r["criterion"]) for r in rows}
    assert variants == {
        *((m, c) for m in ("URF", "URerF") for c in ("twomeans", "gmm", "fastbic")),
        ("Euclidean", "-"),
    }
    assert {r["simulation"] for r in rows} == {"linear", "helix", "sphere", "mixture"}
    assert len(rows) == 4 * 7 * 30
    # Recall curves are non-decreasing in k for label truth (more retrieved, never fewer hits).
    mix = [float(r["recall"]) for r in select(rows, simulation="mixture", criterion="fastbic")
           if r["method"] == "URerF"]  # fmt: skip
    assert np.all(np.diff(mix) >= -1e-12)
    # A real property of the figure: without noise, Euclidean neighbours are exact on the line
    # and every forest variant is far above chance (k / (N - 1) = 0.1 at k = 30).
    at30 = {(r["simulation"], r["method"], r["criterion"]): float(r["recall"])
            for r in rows if r["k"] == "30"}  # fmt: skip
    assert at30["linear", "Euclidean", "-"] == pytest.approx(1.0)
    assert min(v for (s, m, _), v in at30.items() if s != "mixture" and m != "Euclidean") > 0.3
    assert "URerF Fast-BIC" in capsys.readouterr().out
    assert result.summary.startswith("geodesic recall@30")


def test_hyperparameters_quick(tmp_path):
    _run("hyperparameters", tmp_path)
    rows = _read(tmp_path / "hyperparameters.csv")
    assert {"simulation", "noise_dims", "parameter", "value", "k", "precision"} <= set(rows[0])
    settings = {(r["parameter"], r["value"]) for r in rows}
    assert settings == {
        ("min_samples_split", "10"), ("min_samples_split", "45"), ("min_samples_split", "100"),
        ("max_features", "1"), ("max_features", "sqrt"), ("max_features", "4"),
    }  # fmt: skip
    # The paper's claim, loosely: precision on the mixture is high for every setting.
    mix = [float(r["precision"]) for r in rows if r["simulation"] == "mixture" and r["k"] == "30"]
    assert min(mix) > 0.8
    assert (tmp_path / "hyperparameters_noise0.png").exists()


def test_noise_sweep_quick(tmp_path, capsys):
    _run("noise-sweep", tmp_path)
    rows = _read(tmp_path / "noise_sweep.csv")
    # The header states the k the quick run used, as its tables do.
    assert {r["k"] for r in rows} == {"30"}
    printed = capsys.readouterr().out
    assert "noise-sweep: precision@30 vs noise dimensions" in printed and "@50" not in printed
    assert list(rows[0]) == [
        "scaling", "simulation", "noise_dims", "method", "k", "precision", "recall", "chance",
        "seconds", "n_samples",
    ]  # fmt: skip
    methods = {r["method"] for r in rows}
    assert methods == {"URerF", "Euclidean", "Isomap", "UMAP", "NNDescent", "URF-Breiman"}
    prec = {
        (r["scaling"], r["simulation"], int(r["noise_dims"]), r["method"]): float(r["precision"])
        for r in rows
    }
    assert len(prec) == 2 * 4 * 2 * 6
    # The paper's claim at the quick size: with 100 noise dimensions URerF beats Euclidean
    # neighbours in every setting, raw and rescaled (measured margins 0.2-0.6).
    for scaling in ("raw", "rescaled"):
        for sim in ("linear", "helix", "sphere", "mixture"):
            assert prec[scaling, sim, 100, "URerF"] > prec[scaling, sim, 100, "Euclidean"] + 0.1
    # Without noise, Euclidean neighbours are exact on the line.
    assert prec["raw", "linear", 0, "Euclidean"] == pytest.approx(1.0)


def test_connectome_quick(tmp_path):
    result = _run("connectome", tmp_path)
    rows = _read(tmp_path / "connectome.csv")
    assert {"method", "k", "precision", "recall", "precision_sd", "recall_sd"} <= set(rows[0])
    assert {r["method"] for r in rows} == {"URerF", "Euclidean", "Isomap", "UMAP", "URF-Breiman"}
    by = {(r["method"], int(r["k"])): (float(r["precision"]), float(r["recall"])) for r in rows}
    # Every neuron retrieves all 212 others at k = 212: recall 1 and precision = the
    # same-type fraction, whatever the method.
    for method in ("URerF", "Euclidean", "UMAP"):
        assert by[method, 212][1] == pytest.approx(1.0)
    assert by["URerF", 212][0] == pytest.approx(by["Euclidean", 212][0])
    # The paper's claim: URerF recalls more than Euclidean neighbours at the paper's k.
    for k in (50, 100, 150):
        assert by["URerF", k][1] > by["Euclidean", k][1]
    assert "I 21, K 100, O 29, P 63" in result.summary


def test_cli_experiment_parser(tmp_path):
    parser = build_parser()
    args = parser.parse_args(["experiment", "criteria", "--quick", "--out", str(tmp_path)])
    assert args.name == "criteria" and args.quick and args.out == str(tmp_path)
    assert parser.parse_args(["experiment", "noise-sweep"]).out is None
    with pytest.raises(SystemExit):
        parser.parse_args(["experiment", "no-such-experiment"])
    assert set(EXPERIMENTS) >= {"criteria", "hyperparameters", "noise-sweep", "connectome"}


def test_run_experiment_rejects_unknown_name(tmp_path):
    with pytest.raises(ValueError, match="choose from"):
        run_experiment("nope", ExperimentConfig(out=tmp_path))


def test_cli_runs_an_experiment(tmp_path, capsys):
    out = tmp_path / "crit"
    assert main(["experiment", "criteria", "--quick", "--out", str(out), "--no-progress"]) == 0
    assert (out / "criteria.csv").exists() and "wrote" in capsys.readouterr().out


def test_format_table_and_write_csv(tmp_path):
    rows = [
        {"m": "a", "d": 0, "p": 0.5},
        {"m": "a", "d": 10, "p": 0.25},
        {"m": "b", "d": 0, "p": 1.0},
    ]
    text = format_table(rows, ["m"], "d", "p")
    assert text.splitlines() == ["m      0     10", "a  0.500  0.250", "b  1.000      -"]
    path = write_csv(rows, tmp_path / "t.csv")
    assert path.read_text() == "m,d,p\na,0,0.5\na,10,0.25\nb,0,1\n"
    with pytest.raises(ValueError):
        write_csv([], tmp_path / "empty.csv")


def test_simulation_noise_and_rescale():
    X, y = simulation("helix", 50, noise_dims=4, rescale=True, random_state=3)
    assert X.shape == (50, 7) and y.shape == (50,)
    assert np.allclose(X.min(axis=0), 0) and np.allclose(X.max(axis=0), 1)
    with pytest.raises(ValueError, match="unknown simulation"):
        simulation("torus", 10)


def test_rpf_cluster_quick(tmp_path):
    result = _run("rpf-cluster", tmp_path)
    rows = _read(tmp_path / "rpf_cluster.csv")
    assert {"dataset", "method", "seed", "accuracy", "cocluster", "threshold", "scale"} <= set(
        rows[0]
    )
    assert (tmp_path / "rpf_cluster.png").is_file()  # every experiment writes a figure
    summary = {(r["dataset"], r["method"]): r for r in _read(tmp_path / "rpf_cluster_summary.csv")}
    assert {d for d, _ in summary} == {"iris", "wine"}
    acc = {key: float(r["accuracy_mean"]) for key, r in summary.items()}
    # The paper's claim at quick size: rpfCluster beats k-means on wine by a wide margin
    # (measured 0.92 vs 0.74) and is at least as good on iris (0.93 vs 0.89).
    assert acc["wine", "rpfCluster"] > acc["wine", "K-means"] + 0.1
    assert acc["iris", "rpfCluster"] >= acc["iris", "K-means"]
    # The oracle is close to the paper's tuned iris accuracy (0.9667; measured 0.95).
    assert acc["iris", "rpfCluster (oracle)"] > 0.93
    assert summary["iris", "rpfCluster (oracle)"]["paper_accuracy"] == "0.9667"
    assert "iris" in result.summary


def test_rpf_kernel_quick(tmp_path):
    _run("rpf-kernel", tmp_path)
    rows = _read(tmp_path / "rpf_kernel.csv")
    sim = {(r["kernel"], r["class_a"], r["class_b"]): float(r["mean_similarity"]) for r in rows}
    assert len(sim) == 2 * 3 * 3
    # The paper's point (Fig. 3): the rpf-kernel is far closer to block diagonal.  Within
    # versicolor vs versicolor-virginica, the two classes that overlap.
    ratio = {
        k: sim[k, "versicolor", "versicolor"] / sim[k, "versicolor", "virginica"]
        for k in ("Gaussian", "rpf-kernel")
    }
    assert ratio["rpf-kernel"] > 2 * ratio["Gaussian"]
    assert sim["rpf-kernel", "setosa", "virginica"] < 0.01


@pytest.mark.filterwarnings("ignore::geoforest.graph.LabelFreeChoiceWarning")  # close calls
def test_llpd_quick(tmp_path):
    result = _run("llpd", tmp_path)
    rows = _read(tmp_path / "llpd.csv")
    assert {"noise_fraction", "seed", "method", "k_hat", "accuracy_kept", "kept_cluster",
            "noise_removed"} <= set(rows[0])  # fmt: skip
    assert {r["method"] for r in rows} == {
        "LLPD spectral", "Euclidean spectral", "HDBSCAN", "DBSCAN"
    }  # fmt: skip
    for name in ("llpd_balls.png", "llpd_eigenvalues.png", "llpd_noise.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    # The slides' claim at quick size: K found and perfect accuracy on the kept points,
    # noise removed, at 20 % and 50 % background noise.
    ours = [r for r in rows if r["method"] == "LLPD spectral"]
    assert len(ours) == 4
    assert all(r["k_hat"] == "4" and float(r["accuracy_kept"]) == 1.0 for r in ours)
    assert min(float(r["noise_removed"]) for r in ours) > 0.9
    # Euclidean spectral clustering with the same eigengap rule does not find K = 4.
    euclid = [r for r in rows if r["method"] == "Euclidean spectral"]
    assert all(r["k_hat"] != "4" for r in euclid)
    assert "LLPD spectral" in result.summary


def test_rpf_cluster_sklearn_baseline_runs_in_a_child_with_a_timeout():
    from sklearn.cluster import SpectralClustering
    from sklearn.datasets import load_iris

    from geoforest_experiments.rpf_cluster import _sklearn_spectral

    X = load_iris().data
    labels = _sklearn_spectral(X, 3, 0, timeout=120.0)
    assert np.array_equal(labels, SpectralClustering(3, random_state=0).fit_predict(X))
    assert _sklearn_spectral(X, 3, 0, timeout=0.01) is None


@pytest.mark.parametrize("max_selection_samples", [None, 80])
def test_rpf_cluster_consensus_column_is_the_consensus_estimator(max_selection_samples):
    # The experiment's "rpfCluster (consensus)" column is derived from the oracle's sweep
    # of the default-rule model; it must be exactly what the estimator with
    # selection="consensus" gives on the same data and seed (with and without the
    # selection subset).
    from sklearn.datasets import load_iris

    from geoforest import ForestSpectralClustering, RandomProjectionForest
    from geoforest_experiments.rpf_cluster import _consensus, _sweep

    X = load_iris().data
    common = dict(
        forest=RandomProjectionForest(40),
        max_selection_samples=max_selection_samples,
        random_state=3,
        n_jobs=1,
    )
    model = ForestSpectralClustering(3, selection="unfragmented", **common, affinity="kernel").fit(
        X
    )
    reference = ForestSpectralClustering(3, selection="consensus", **common, affinity="kernel").fit(
        X
    )
    labels, info = _consensus(model, _sweep(model))
    assert (info["threshold"], info["scale"]) == (reference.threshold_, reference.scale_)
    assert np.array_equal(labels, reference.labels_)
