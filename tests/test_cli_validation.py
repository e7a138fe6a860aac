"""User mistakes on the command line are argparse errors (exit 2, no traceback)."""

from __future__ import annotations

import csv

import pytest

from geoforest.cli import build_parser, main


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["experiment", "criteria", "--n-jobs", "0"], "--n-jobs"),
        (["experiment", "criteria", "--n-jobs", "two"], "--n-jobs"),
        (["experiment", "criteria", "--seed", "-1"], "--seed"),
        (["experiment", "criteria", "--seed", str(2**31)], "--seed"),
        (["demo", "--n-jobs", "0"], "--n-jobs"),
        (["demo", "--n-estimators", "-5"], "--n-estimators"),
        (["demo", "--n-estimators", "0"], "--n-estimators"),
        (["demo", "--n-estimators", "1.5"], "--n-estimators"),
        (["demo", "--seed", "-3"], "--seed"),
    ],
)
def test_bad_numbers_are_argparse_errors(argv, option, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # should parsing let one through, its default --out lands here
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert "error: argument " + option in last


def test_good_numbers_still_parse():
    parser = build_parser()
    args = parser.parse_args(["experiment", "criteria", "--n-jobs", "-1", "--seed", "0"])
    assert (args.n_jobs, args.seed) == (-1, 0)
    args = parser.parse_args(["demo", "--n-jobs", "2", "--n-estimators", "7", "--seed", "5"])
    assert (args.n_jobs, args.n_estimators, args.seed) == (2, 7, 5)


def test_demo_quick_honours_n_estimators(tmp_path):
    out = tmp_path / "demo"
    argv = ["demo", "--quick", "--n-estimators", "3", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    rows = list(csv.DictReader((out / "demo_helix.csv").open()))
    assert {r["n_estimators"] for r in rows} == {"3"}


def test_demo_bad_out_fails_before_computing(tmp_path, capsys, monkeypatch):
    import geoforest.forest

    def no_forest(*args, **kwargs):
        raise AssertionError("the demo computed before checking --out")

    monkeypatch.setattr(geoforest.forest, "UnsupervisedForest", no_forest)
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    assert main(["demo", "--quick", "--out", str(not_a_folder), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not a directory" in err
