"""Experiment outputs are written atomically: a run appears whole or not at all.

A tiny fake experiment is registered in ``EXPERIMENTS`` so that every test runs
the real CLI and runner in well under a second.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import types

import pytest

from geoforest.cli import main
from geoforest_experiments import EXPERIMENTS, ExperimentResult
from geoforest_experiments._runner import write_csv

_MODULE = "_fake_output_experiment"


class FakeExperiment:
    """Writes ``fake.csv`` (the seed in it) and ``fake_seed<SEED>.png``.

    ``fail`` (an exception) is raised after the CSV is written, before the figure.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.fail: BaseException | None = None

    def run(self, config):
        self.calls += 1
        rows = [{"seed": config.seed, "value": 0.5}]
        files = [write_csv(rows, config.out / "fake.csv")]
        if self.fail is not None:
            raise self.fail
        png = config.out / f"fake_seed{config.seed}.png"
        png.write_bytes(b"\x89PNG fake figure of seed %d" % config.seed)
        files.append(png)
        return ExperimentResult("fake", rows, f"seed {config.seed}", files)


@pytest.fixture
def fake(monkeypatch):
    experiment = FakeExperiment()
    module = types.ModuleType(f"geoforest_experiments.{_MODULE}")
    module.run = experiment.run
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(EXPERIMENTS, "fake", (_MODULE, "a fake experiment for the tests"))
    return experiment


def _cli(out, *extra):
    return main(["experiment", "fake", "--out", str(out), "--no-progress", *extra])


def _snapshot(folder):
    """Every entry of ``folder`` (hidden ones included) with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _assert_complete_run(folder, seed):
    """The JSON record, the CSV and the figure all belong to the run of ``seed``."""
    record = json.loads((folder / "fake.json").read_text())
    assert record["experiment"] == "fake" and record["seed"] == seed
    rows = list(csv.DictReader((folder / "fake.csv").open()))
    assert [int(r["seed"]) for r in rows] == [seed]
    assert sorted(record["files"]) == sorted(["fake.csv", f"fake_seed{seed}.png"])
    assert sorted(p.name for p in folder.iterdir()) == sorted([*record["files"], "fake.json"])


def test_complete_run_reports_final_paths(fake, tmp_path, capsys):
    out = tmp_path / "new" / "folder"
    assert _cli(out, "--seed", "3") == 0
    _assert_complete_run(out, 3)
    printed = capsys.readouterr().out
    assert str(out / "fake.json") in printed and ".partial" not in printed


def test_existing_complete_run_is_refused_before_computing(fake, tmp_path, capsys):
    assert _cli(tmp_path, "--seed", "0") == 0
    before = _snapshot(tmp_path)
    capsys.readouterr()
    assert _cli(tmp_path, "--seed", "1") == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert fake.calls == 1  # nothing computed
    assert _snapshot(tmp_path) == before


def test_overwrite_replaces_the_whole_run(fake, tmp_path):
    assert _cli(tmp_path, "--seed", "0") == 0
    (tmp_path / "unrelated.txt").write_text("not ours")
    assert _cli(tmp_path, "--seed", "1", "--overwrite") == 0
    assert not (tmp_path / "fake_seed0.png").exists()  # no old figure beside the new CSV
    (tmp_path / "unrelated.txt").unlink()  # other files are left alone
    _assert_complete_run(tmp_path, 1)


def test_interrupted_run_leaves_the_previous_run_untouched(fake, tmp_path, capsys):
    assert _cli(tmp_path, "--seed", "0") == 0
    before = _snapshot(tmp_path)
    fake.fail = KeyboardInterrupt()
    assert _cli(tmp_path, "--seed", "1", "--overwrite") == 130
    assert "Traceback" not in capsys.readouterr().err
    assert fake.calls == 2
    assert _snapshot(tmp_path) == before  # no partial folder, old files byte for byte
    _assert_complete_run(tmp_path, 0)


def test_failed_run_leaves_the_previous_run_untouched(fake, tmp_path):
    assert _cli(tmp_path, "--seed", "0") == 0
    before = _snapshot(tmp_path)
    fake.fail = RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        _cli(tmp_path, "--seed", "1", "--overwrite")
    assert _snapshot(tmp_path) == before
    _assert_complete_run(tmp_path, 0)


def test_interrupted_first_run_leaves_nothing(fake, tmp_path):
    fake.fail = KeyboardInterrupt()
    assert _cli(tmp_path, "--seed", "0") == 130
    assert list(tmp_path.iterdir()) == []  # no CSV without its JSON record
    out = tmp_path / "created" / "by" / "run"
    assert _cli(out, "--seed", "0") == 130
    assert list(tmp_path.iterdir()) == []  # folders the run created are gone too


def test_json_record_is_moved_last(fake, tmp_path, monkeypatch):
    moved = []
    real_replace = os.replace

    def recording_replace(src, dst, *args, **kwargs):
        moved.append(os.path.basename(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", recording_replace)
    assert _cli(tmp_path, "--seed", "2") == 0
    assert moved[-1] == "fake.json" and sorted(moved) == ["fake.csv", "fake.json", "fake_seed2.png"]


@pytest.fixture
def python_sigint():
    """SIGINT handled by Python's own handler (KeyboardInterrupt), as in a terminal.

    The hold-back only defers a Python-level handler; a whole test session may
    have left SIGINT ignored or in C hands (a child-process helper of some
    library), which would make the test depend on what ran before it.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_while_moving_files_in_is_held_back(fake, tmp_path, monkeypatch, python_sigint):
    assert _cli(tmp_path, "--seed", "0") == 0
    real_replace = os.replace

    def interrupted_replace(src, dst, *args, **kwargs):
        if not moved:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C between two renames, to this thread
        moved.append(os.path.basename(dst))
        return real_replace(src, dst, *args, **kwargs)

    moved = []
    monkeypatch.setattr(os, "replace", interrupted_replace)
    assert _cli(tmp_path, "--seed", "1", "--overwrite") == 130  # reported once all moved in
    assert len(moved) == 3
    _assert_complete_run(tmp_path, 1)


def test_out_that_is_a_file_is_a_one_line_error(fake, tmp_path, capsys):
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    for out in (not_a_folder, not_a_folder / "below"):
        assert _cli(out) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "not a directory" in err
    assert fake.calls == 0 and not_a_folder.read_text() == "x"


def test_unwritable_out_is_a_one_line_error(fake, tmp_path, capsys, monkeypatch):
    real_access = os.access
    locked = str(tmp_path)

    def access(path, mode, *args, **kwargs):
        if os.fspath(path) == locked and mode & os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    for out in (tmp_path, tmp_path / "missing"):
        assert _cli(out) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "not writable" in err
    assert fake.calls == 0 and list(tmp_path.iterdir()) == []


def test_bad_out_exits_2_without_traceback_in_a_real_process(tmp_path):
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "geoforest.cli", "experiment", "rpf-kernel", "--quick"]
        + ["--out", str(not_a_folder), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "not a directory" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


_SIGTERM_CHILD = """
import os, signal, sys, time, types
from geoforest.cli import main
from geoforest_experiments import EXPERIMENTS, ExperimentResult
from geoforest_experiments._runner import write_csv

def run(config):
    rows = [{"seed": config.seed}]
    files = [write_csv(rows, config.out / "fake.csv")]
    if config.seed == 1:
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` or a job scheduler would
        time.sleep(30)
    return ExperimentResult("fake", rows, "done", files)

module = types.ModuleType("geoforest_experiments._fake_sigterm")
module.run = run
sys.modules[module.__name__] = module
EXPERIMENTS["fake"] = ("_fake_sigterm", "a fake experiment that gets SIGTERM")
sys.exit(main(["experiment", "fake", "--no-progress", *sys.argv[1:]]))
"""


def test_sigterm_is_handled_like_ctrl_c_in_a_real_process(tmp_path):
    """SIGTERM used to end the process at once, leaving ``.fake.partial-*`` behind."""

    def child(*args):
        return subprocess.run(
            [sys.executable, "-c", _SIGTERM_CHILD, "--out", str(tmp_path / "out"), *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = child("--seed", "0")
    assert first.returncode == 0, first.stderr
    before = _snapshot(tmp_path / "out")
    proc = child("--seed", "1", "--overwrite")
    assert proc.returncode == 128 + signal.SIGTERM, proc.stderr
    assert "terminated" in proc.stderr and "Traceback" not in proc.stderr
    assert _snapshot(tmp_path / "out") == before  # no .fake.partial-*, the old run as it was


@pytest.fixture
def default_sigterm():
    """SIGTERM at its default action, as in a fresh process."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_handler_is_only_there_while_the_run_lasts(fake, tmp_path, default_sigterm):
    seen = []
    fake_run = fake.run

    def run(config):
        seen.append(signal.getsignal(signal.SIGTERM))
        return fake_run(config)

    fake.run = run
    sys.modules[f"geoforest_experiments.{_MODULE}"].run = run
    assert _cli(tmp_path) == 0
    assert callable(seen[0]) and seen[0] not in (signal.SIG_DFL, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigterm_while_moving_files_in_is_held_back(fake, tmp_path, monkeypatch, default_sigterm):
    assert _cli(tmp_path, "--seed", "0") == 0
    real_replace = os.replace
    moved = []

    def terminated_replace(src, dst, *args, **kwargs):
        if not moved:
            signal.raise_signal(signal.SIGTERM)  # between two renames, to this thread
        moved.append(os.path.basename(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", terminated_replace)
    assert _cli(tmp_path, "--seed", "1", "--overwrite") == 128 + signal.SIGTERM
    assert len(moved) == 3
    _assert_complete_run(tmp_path, 1)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_every_file_of_a_hyphenated_experiment_is_named_with_underscores(
    fake, monkeypatch, tmp_path
):
    monkeypatch.setitem(EXPERIMENTS, "fake-run", (_MODULE, "a fake experiment, hyphenated"))
    argv = ["experiment", "fake-run", "--out", str(tmp_path), "--no-progress", "--seed", "0"]
    assert main(argv) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fake.csv",
        "fake_run.json",
        "fake_seed0.png",
    ]
    # A record under the hyphenated name of earlier versions is a complete run too.
    (tmp_path / "fake_run.json").rename(tmp_path / "fake-run.json")
    assert main(argv) == 2
    assert main([*argv[:-1], "1", "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fake.csv",
        "fake_run.json",
        "fake_seed1.png",
    ]


def test_staging_folders_of_dead_runs_are_removed_by_the_next_run(fake, tmp_path):
    """A SIGKILLed run leaves ``.fake.partial-*``; the next run of ``fake`` removes it."""
    from geoforest_experiments._staging import UNNAMED_MAX_AGE, make_staging

    code = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    dead = make_staging(tmp_path, "fake")
    dead = dead.rename(dead.with_name(dead.name.replace(f"-{os.getpid()}-", f"-{dead_pid}-")))
    (dead / "fake.csv").write_text("half a run")
    live = make_staging(tmp_path, "fake")  # this process: a run still going on
    other_host = tmp_path / ".fake.partial-elsewhere-1-abcdefgh"
    other_host.mkdir()
    old_unnamed, new_unnamed = (
        tmp_path / ".fake.partial-old12345",
        tmp_path / ".fake.partial-new12345",
    )
    old_unnamed.mkdir(), new_unnamed.mkdir()
    stale = os.stat(old_unnamed).st_mtime - UNNAMED_MAX_AGE - 60
    os.utime(old_unnamed, (stale, stale))
    other_experiment = tmp_path / f".other.partial-x-{dead_pid}-abcdefgh"
    other_experiment.mkdir()
    with pytest.warns(UserWarning, match="removed 2 staging folder"):
        assert _cli(tmp_path, "--seed", "0") == 0
    assert not dead.exists() and not old_unnamed.exists()
    assert live.exists() and other_host.exists() and new_unnamed.exists()
    assert other_experiment.exists()
    for folder in (live, other_host, new_unnamed, other_experiment):
        folder.rmdir()
    _assert_complete_run(tmp_path, 0)


_SIGKILL_CHILD = _SIGTERM_CHILD.replace("signal.SIGTERM", "signal.SIGKILL")


def test_a_sigkilled_run_leaves_nothing_after_the_next_run(fake, tmp_path):
    """The real case: ``kill -9`` mid-run, then the same experiment in the same folder."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", _SIGKILL_CHILD, "--out", str(out), "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL
    assert [p.name.startswith(".fake.partial-") for p in out.iterdir()] == [True]
    with pytest.warns(UserWarning, match="removed 1 staging folder"):
        assert _cli(out, "--seed", "0") == 0
    _assert_complete_run(out, 0)
