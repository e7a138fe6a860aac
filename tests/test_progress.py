"""verbose > 0 shows a progress bar over the long loops and changes no result."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import geoforest as gf


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0], [5, 5], [0, 5]])
    y = np.repeat(np.arange(3), 40)
    return centres[y] + rng.normal(size=(120, 2)) * 0.5


CASES = {
    "LUND": (lambda v: gf.LUND(verbose=v, random_state=0), "LUND times"),
    "LLPDSpectralClustering": (
        lambda v: gf.LLPDSpectralClustering(verbose=v, random_state=0),
        "LLPD scales",
    ),
    "ForestSpectralClustering": (
        lambda v: gf.ForestSpectralClustering(
            forest=gf.RandomProjectionForest(n_estimators=20),
            verbose=v,
            random_state=0,
            affinity="kernel",
        ),
        "rpfCluster scales",
    ),
    "ForestSpectralClustering-knn": (
        lambda v: gf.ForestSpectralClustering(
            forest=gf.UnsupervisedForest(n_estimators=10), verbose=v, random_state=0
        ),
        "ForestSpectralClustering",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_verbose_shows_progress_and_changes_nothing(blobs, name, capsys):
    make, desc = CASES[name]
    quiet = make(0).fit(blobs).labels_
    assert desc not in capsys.readouterr().err
    loud = make(1).fit(blobs).labels_
    assert desc in capsys.readouterr().err
    np.testing.assert_array_equal(quiet, loud)


def test_the_knn_path_shows_its_stages_and_the_forests_bars(blobs, capsys):
    # Label-free: five stages; the forest grown inside (verbose 0) shows its
    # trees and its neighbours as well, and keeps the user's forest untouched.
    forest = gf.UnsupervisedForest(n_estimators=10)
    model = gf.ForestSpectralClustering(forest=forest, verbose=1, random_state=0).fit(blobs)
    err = capsys.readouterr().err
    for stage in ("geometry", "neighbours", "graph and bridges", "levels and references"):
        assert stage in err
    assert "eigenvectors and k-means" in err and "5/5" in err
    assert "trees" in err
    assert forest.verbose == 0 and model.forest_.verbose == 1
    gf.ForestSpectralClustering(3, forest=forest, verbose=1, random_state=0).fit(blobs)
    err = capsys.readouterr().err
    assert "4/4" in err and "levels and references" not in err


def test_a_forest_that_asked_for_its_own_verbosity_keeps_it(blobs):
    forest = gf.UnsupervisedForest(n_estimators=10, verbose=2)
    model = gf.ForestSpectralClustering(3, forest=forest, verbose=1, random_state=0).fit(blobs)
    assert model.forest_.verbose == 2


def test_stage_bar_is_silent_without_verbose_and_closes_on_errors(capsys):
    from geoforest._progress import StageProgress

    with StageProgress(2, 0, "quiet") as stage:
        stage("a")
        stage("b")
    assert capsys.readouterr().err == ""
    with pytest.raises(RuntimeError), StageProgress(3, 1, "failing") as stage:
        stage("a")
        raise RuntimeError("boom")
    err = capsys.readouterr().err
    assert "failing" in err and "1/3" not in err  # the failed stage is not counted done


def test_the_time_left_does_not_count_a_compilation(monkeypatch):
    """A first item slowed by compiling must not make the bar's rate (and time left) absurd."""
    import time

    from tqdm import tqdm

    from geoforest import _progress

    clock = {"compiled": 0.0}
    monkeypatch.setattr(_progress, "compile_seconds", lambda: clock["compiled"])

    def items():
        time.sleep(0.5)
        clock["compiled"] = 0.5  # the first item compiled kernels ...
        yield 0
        for i in range(1, 4):
            time.sleep(0.01)  # ... the others are quick
            yield i

    bar = tqdm(total=4, disable=False, mininterval=0, file=open(os.devnull, "w"))
    rates = []
    for _ in _progress._counted(items(), bar):
        if bar.n:
            rates.append(bar.format_dict["rate"] or bar.n / bar.format_dict["elapsed"])
    assert bar.n == 4
    assert rates[-1] > 10  # items per second of the work, not 4 / 0.53 s


def _counts(log: str) -> list[int]:
    """The ``n`` of every ``n/total`` a tqdm bar wrote to ``log``, in order."""
    return [int(n) for n in re.findall(r"\| *(\d+)/\d+ \[", log)]


def test_the_bar_counts_an_item_once_its_work_is_done_and_never_goes_back(monkeypatch):
    """The bar is full only when the last item's work is over; its log never counts down.

    The demo's bar (issue 53) was full while its slowest item still ran, and
    after the compiling item its log read 2/4, 0/4, 2/4.
    """
    import io

    from tqdm import tqdm

    from geoforest import _progress

    clock = {"compiled": 0.0}
    monkeypatch.setattr(_progress, "compile_seconds", lambda: clock["compiled"])
    log = io.StringIO()  # not a terminal: every redraw stays in it
    bar = tqdm(total=4, disable=False, mininterval=0, file=log)
    for i in _progress._counted(range(4), bar):
        assert bar.n == i  # while the caller works on item i, only the i before it count
        if i == 0:
            clock["compiled"] = 20.0  # the first item's work compiled kernels
    assert bar.n == 4
    counts = _counts(log.getvalue())
    assert counts == sorted(counts) and counts[-1] == 4
    assert counts.count(0) == 1  # drawn at 0 once, at the start


def test_the_first_compilation_says_so_once(monkeypatch, capsys):
    """One line on stderr at the first compilation of a geoforest kernel, and its time counted."""
    from geoforest import _first_use
    from geoforest._jit import njit

    monkeypatch.setitem(_first_use._state, "said", False)

    def probe(x):
        return x + 1

    probe.__module__ = "geoforest._probe"  # a geoforest kernel, compiled here for the first time
    before = _first_use.compile_seconds()
    assert njit(probe)(1) == 2
    assert _first_use.compile_seconds() > before
    err = capsys.readouterr().err
    assert err.count("geoforest: compiling its numba kernels") == 1

    def probe2(x):
        return x + 2

    probe2.__module__ = "geoforest._probe"
    assert njit(probe2)(1) == 3  # compiles too, but the line was said
    monkeypatch.setenv("GEOFOREST_COMPILE_NOTICE", "0")
    monkeypatch.setitem(_first_use._state, "said", False)

    def probe3(x):
        return x + 3

    probe3.__module__ = "geoforest._probe"
    assert njit(probe3)(1) == 4
    assert "compiling" not in capsys.readouterr().err  # silenced


def test_the_demo_says_what_compiling_cost_only_when_it_compiled(tmp_path, capsys, monkeypatch):
    from geoforest import _first_use
    from geoforest.cli import main

    args = ["demo", "--quick", "--out", str(tmp_path), "--no-progress", "--overwrite"]
    assert main(args) == 0  # compiles whatever this process has not compiled yet
    capsys.readouterr()
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "(time = fit + kneighbors)" in out and "compiling" not in out  # nothing compiled
    clock = iter([0.0, 12.5])
    monkeypatch.setattr(_first_use, "compile_seconds", lambda: next(clock))
    assert main(args) == 0
    assert "the first row includes 12.5s of numba" in capsys.readouterr().out


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([-1, 1.5, "loud", None, [1]]))
def test_fit_geometry_refuses_a_bad_verbose(bad):
    # A careless verbose reaches the forest grown inside, whose checks refuse it.
    X = np.random.default_rng(0).normal(size=(30, 2)) + 1e6
    with pytest.raises((ValueError, TypeError)):
        gf.graph.fit_geometry(
            X, "forest", forest=gf.UnsupervisedForest(n_estimators=3), verbose=bad
        )
