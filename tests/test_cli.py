"""The command line: `geoforest demo` end to end (small sizes)."""

import csv

import pytest

from geoforest import cli
from geoforest.cli import build_parser, main


def test_demo_quick_writes_table_and_figure(tmp_path, capsys):
    assert main(["demo", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "URerF" in out and "Euclidean" in out and "noise dims" in out
    rows = list(csv.DictReader((tmp_path / "demo_helix.csv").open()))
    prec = {(int(r["noise_dims"]), r["method"]): float(r["precision_at_k"]) for r in rows}
    assert set(d for d, _ in prec) == {0, 10, 100}
    # The point of the demo: under 100 noise dimensions the forest stays far above
    # Euclidean neighbours (measured ~0.7 vs ~0.17 at these sizes).
    assert prec[100, "URerF"] > prec[100, "Euclidean"] + 0.3
    assert (tmp_path / "demo_helix.png").stat().st_size > 1000
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    # A second run into the same folder refuses before computing, as `experiment` does ...
    assert main(["demo", "--quick", "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # ... and replaces the run with --overwrite.
    args = ["demo", "--quick", "--out", str(tmp_path), "--no-progress", "--overwrite"]
    assert main([*args, "--seed", "1"]) == 0
    assert (tmp_path / "demo_helix.csv").read_bytes() != before["demo_helix.csv"]


def test_demo_progress_bar_is_full_when_the_work_is_and_never_goes_back(tmp_path, monkeypatch):
    """In a log, the demo's bar counts a noise level once its row is computed, only upwards.

    Issue 53: it was full while the slowest row still ran, and after the
    compilation notice its log read 2/4, 0/4, 2/4.
    """
    import functools
    import io
    import re
    import sys

    import tqdm.auto
    import tqdm.std

    from geoforest import _progress, metrics

    log = io.StringIO()  # stdout and stderr in one stream, in order, as in `demo > log 2>&1`
    monkeypatch.setattr(sys, "stdout", log)
    monkeypatch.setattr(sys, "stderr", log)
    monkeypatch.setattr(tqdm.auto, "tqdm", functools.partial(tqdm.std.tqdm, mininterval=0))
    seconds = iter([0.0] + [9.0] * 10)  # kernels compiled during the first noise level
    monkeypatch.setattr(_progress, "compile_seconds", lambda: next(seconds))
    precision = metrics.geodesic_precision_recall

    def marked(*args, **kwargs):  # a mark in the log where a row's last step ends
        result = precision(*args, **kwargs)
        print("<row step done>", file=log)
        return result

    monkeypatch.setattr(metrics, "geodesic_precision_recall", marked)
    assert main(["demo", "--quick", "--out", str(tmp_path)]) == 0
    text = log.getvalue()
    counts = [(m.start(), int(m[1])) for m in re.finditer(r"\| *(\d+)/3 \[", text)]
    assert [n for _, n in counts] == sorted(n for _, n in counts)  # never backwards
    last_step = text.rindex("<row step done>")
    full = [at for at, n in counts if n == 3]
    assert full and last_step < full[0] < text.index("noise dims")
    assert all(n < 3 for at, n in counts if at < last_step)


def test_parser_requires_a_command():
    parser = build_parser()
    assert parser.parse_args(["demo"]).out == "geoforest-demo"


class _Missing:
    """An entry point whose package is not installed: loading it fails."""

    name = "experiment"

    def load(self):
        raise ModuleNotFoundError("No module named 'geoforest_experiments'")


@pytest.mark.parametrize("plugins", [[], [_Missing()]], ids=["no-entry-point", "not-importable"])
@pytest.mark.parametrize(
    "argv",
    [
        ["experiment"],
        ["experiment", "noise-sweep", "--quick", "--seed", "3"],
        ["experiment", "--help"],
    ],
)
def test_experiment_without_the_package_is_one_line_and_exit_2(plugins, argv, capsys, monkeypatch):
    monkeypatch.setattr(cli, "command_plugins", lambda: plugins)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and 'pip install "geoforest[experiments]"' in lines[0]


def test_the_experiment_command_comes_from_its_entry_point():
    plugins = {ep.name: ep.value for ep in cli.command_plugins()}
    assert plugins["experiment"] == "geoforest_experiments.cli:add_experiment_command"
    args = build_parser().parse_args(["experiment", "criteria", "--quick"])
    assert args.func.__module__ == "geoforest_experiments.cli"


def test_unknown_arguments_stay_argparse_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--no-such-option"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
