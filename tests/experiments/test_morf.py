"""The manifold forests experiments end to end (small settings), files and claims."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from geoforest_experiments import (
    ExperimentConfig,
    morf_importance,
    morf_simulations,
    run_experiment,
)


def _run(name, tmp_path):
    config = ExperimentConfig(out=tmp_path, quick=True, n_jobs=1, seed=0, show_progress=False)
    result = run_experiment(name, config)
    record = json.loads((tmp_path / f"{name.replace('-', '_')}.json").read_text())
    assert record["experiment"] == name and record["quick"] is True
    for path in result.files:
        assert path.exists() and path.stat().st_size > 0
        assert "-" not in path.name  # one naming style: lower case, underscores
    return result


def test_morf_simulations_small(tmp_path, monkeypatch):
    small = {
        "sizes": {"circle": (300,), "bars": (30,), "bars-random": (60,), "signal": (60,)},
        "reps": 1,
        "n_test": 600,
        "n_trees": 20,
        "methods": morf_simulations.METHODS,  # the CNN (an extra) is tested below
    }
    monkeypatch.setattr(morf_simulations, "settings", lambda quick: small)
    result = _run("morf-simulations", tmp_path)
    rows = list(csv.DictReader((tmp_path / "morf_simulations.csv").open()))
    assert len(rows) == 4 * len(morf_simulations.METHODS)
    err = {(r["simulation"], r["method"]): float(r["error"]) for r in rows}
    # The paper's circle: MORF far below chance, where axis forests stay near it.
    assert err["circle", "MORF"] < err["circle", "RF"] - 0.15
    # Bars with 30 images: MORF ahead of RF and SPORF.
    assert err["bars", "MORF"] < min(err["bars", "RF"], err["bars", "SPORF"])
    assert err["bars-random", "MORF"] < min(err["bars-random", "RF"], err["bars-random", "SPORF"])
    assert all(float(r["fit_seconds"]) >= 0 for r in rows)
    assert (tmp_path / "morf_errors.png").stat().st_size > 10_000
    assert "circle" in result.summary


def test_morf_importance_quick(tmp_path, monkeypatch):
    monkeypatch.setattr(
        morf_importance, "settings", lambda quick: {"n_trees": 40, "reps": 1, "n_per_class": 100}
    )
    _run("morf-importance", tmp_path)
    rows = {r["method"]: r for r in csv.DictReader((tmp_path / "morf_importance.csv").open())}
    tv = {m: float(rows[m]["total_variation"]) for m in morf_importance.METHODS}
    # The paper's "smoother" claim, as a number.
    assert tv["MORF"] < 0.75 * min(tv["SPORF"], tv["RF"])
    maps = np.load(tmp_path / "morf_importance_maps.npz")
    assert maps["morf"].shape == (1, 784)
    np.testing.assert_allclose(maps["morf"].sum(), 1.0)


def test_total_variation():
    m = np.zeros((28, 28))
    m[10, 10] = 1.0
    assert morf_importance.total_variation(m) == 4.0  # four unit jumps around one pixel
    assert morf_importance.total_variation(np.ones(784)) == 0.0


def test_cnn_baseline_learns_bars_reproducibly():
    pytest.importorskip("torch", reason="the CNN baseline is the optional 'cnn' extra")
    from geoforest.datasets import make_bars
    from geoforest_experiments.cnn import CNNClassifier

    X, y = make_bars(120, image_size=12, mean_bars=4, random_state=0)
    X_test, y_test = make_bars(400, image_size=12, mean_bars=4, random_state=1)
    a = CNNClassifier((12, 12), max_epochs=30, random_state=3).fit(X, y)
    b = CNNClassifier((12, 12), max_epochs=30, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X_test), b.predict_proba(X_test))
    assert np.mean(a.predict(X_test) != y_test) < 0.1  # chance is 0.5
    np.testing.assert_allclose(a.predict_proba(X_test[:5]).sum(axis=1), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="image_shape"):
        CNNClassifier((5, 5)).fit(X, y)
