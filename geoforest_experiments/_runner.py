"""What every experiment shares: settings, data, forest neighbours, tidy output.

An experiment is a module with a ``run(config) -> ExperimentResult`` function
and, when it needs optional packages, a ``REQUIRES`` mapping of their import
names to the names to install (``{"umap": "umap-learn"}``): :func:`run_staged`
checks them before any work and raises :class:`MissingExtraError` naming the
extra. It computes *tidy* rows (one observation per row, plain ``str``/``int``/
``float`` values), and this module writes them as CSV next to a JSON record
of how they were made (command, seed, versions, run time), prints the summary
table and shows progress.

Atomic output
-------------
:func:`run_staged` (what ``geoforest experiment`` runs) makes a run appear in
its output folder whole or not at all:

* The output folder is checked before anything is computed: it must be a
  writable directory or creatable as one (:class:`OutputError` otherwise), and
  a complete earlier run of the same experiment there (its JSON record
  ``STEM.json``) is only replaced with ``overwrite=True`` (``--overwrite``).
  Every file of a run is named in one style, lower case with underscores:
  ``STEM`` is the experiment's name with ``_`` for ``-`` (:func:`file_stem`:
  ``noise_sweep.json`` beside ``noise_sweep.csv``); a record under the
  hyphenated name of earlier versions counts as well.
* The experiment writes every file (CSV, figures, ...) into a hidden staging
  folder ``OUT/.NAME.partial-HOST-PID-XXXXXXXX`` on the same filesystem, the
  experiment's ``config.out`` during the run; the experiment modules need not
  know about it.
* Only when the run has finished are the files moved into ``OUT`` (renames in
  the same filesystem). When it replaces a run, the old ``STEM.json`` and every
  file that record lists are removed first, so no file of the old run survives
  beside the new ones. The JSON record is moved last: ``STEM.json`` present
  means a complete run, and it describes exactly the files beside it. Ctrl-C
  or SIGTERM during these renames is held back until they are done.
* On an interruption (Ctrl-C, or SIGTERM, which raises :class:`Terminated`,
  a ``KeyboardInterrupt``, while the run lasts) or an error during the run
  the staging folder is deleted (and so is ``OUT`` if the run created it and
  it is empty): an earlier complete run stays as it was, byte for byte.

A process killed outright (``SIGKILL``, power loss) can leave a
``.NAME.partial-*`` folder behind; it is never read, and the next run of the
same experiment in the same folder removes it once its process is gone
(:func:`~geoforest_experiments._staging.remove_dead_staging`).
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import importlib
import importlib.util
import json
import os
import platform
import shutil
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import SparseEfficiencyWarning

from geoforest import datasets, metrics
from geoforest.cli import OutputError, check_output_folder

from ._staging import make_staging, remove_dead_staging

__all__ = [
    "SIMULATIONS",
    "ExperimentConfig",
    "ExperimentResult",
    "MissingExtraError",
    "OutputError",
    "Terminated",
    "check_output",
    "forest_neighbors",
    "format_table",
    "progress",
    "require",
    "run_staged",
    "select",
    "simulation",
    "truth",
    "write_csv",
]

#: The four simulations of the URerF paper (Appendix B), in the paper's order.
SIMULATIONS: tuple[str, ...] = ("linear", "helix", "sphere", "mixture")

_MAKERS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "linear": datasets.make_linear,
    "helix": datasets.make_helix,
    "sphere": datasets.make_sphere,
    "mixture": datasets.make_gaussian_mixture,
}


@dataclass
class ExperimentConfig:
    """Settings shared by every experiment command.

    Attributes
    ----------
    out : Path
        Folder for the CSV, PNG and JSON files (created if missing). Under
        :func:`run_staged` the experiment's ``run`` sees a hidden staging
        folder inside it instead, moved into place when the run is complete.
    quick : bool
        Small sizes and few trees (a smoke run that also checks the claims).
    n_jobs : int or None
        Threads for forests and baselines (``-1``: all cores).
    seed : int
        Base random seed; every data set, forest and baseline derives from it.
    show_progress : bool
        Show a tqdm progress bar on stderr.
    """

    out: Path
    quick: bool = False
    n_jobs: int | None = -1
    seed: int = 0
    show_progress: bool = True


@dataclass
class ExperimentResult:
    """What an experiment produced.

    Attributes
    ----------
    name : str
        Experiment name (the CLI sub-command).
    rows : list of dict
        Tidy results, also written to ``files[0]``.
    summary : str
        Text table printed at the end of the run.
    files : list of Path
        Files written (CSV first).
    seconds : float
        Wall-clock run time.
    notes : dict
        Anything else the JSON record should hold (settings, anchors skipped);
        written under ``"notes"`` when not empty.
    title : str
        The line printed above the summary, with the settings this run used
        (e.g. the k of a quick run); empty: the experiment's description.
    """

    name: str
    rows: list[dict[str, Any]]
    summary: str
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)
    title: str = ""


class MissingExtraError(ImportError):
    """An optional package an experiment needs is missing (a one-line message for the user).

    Raised by an experiment before it computes anything; ``geoforest experiment``
    prints the message (which names the extra to install) without a traceback.
    """


def require(
    modules: Mapping[str, str] | Iterable[str], experiment: str, extra: str = "experiments"
) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``modules`` can be found.

    ``modules``: import names, or a mapping of import name to the name to
    install (``{"umap": "umap-learn"}``).  Only looks the modules up
    (``importlib.util.find_spec``); nothing is imported.
    """
    names = modules if isinstance(modules, Mapping) else {m: m for m in modules}
    missing = [pkg for module, pkg in names.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise MissingExtraError(
            f"the {experiment} experiment needs {', '.join(missing)}: "
            f"pip install 'geoforest[{extra}]'"
        )


# --------------------------------------------------------------------------- data
def simulation(
    name: str, n_samples: int, *, noise_dims: int = 0, rescale: bool = False, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """One of the paper's simulations with optional noise dimensions.

    Parameters
    ----------
    name : {"linear", "helix", "sphere", "mixture"}
    n_samples : int
    noise_dims : int, default=0
        Extra iid N(0, 70) columns (``geoforest.datasets.add_noise_dims``).
    rescale : bool, default=False
        Min-max rescale every column to [0, 1] after adding the noise.
    random_state : int, default=0
        Seed of the signal; the noise uses ``random_state + 1``.

    Returns
    -------
    X : ndarray of shape (n_samples, 3 + noise_dims)
    y : ndarray
        The ground truth for :func:`truth`.
    """
    if name not in _MAKERS:
        raise ValueError(f"unknown simulation {name!r}; choose from {', '.join(SIMULATIONS)}")
    X, y = _MAKERS[name](n_samples, random_state=random_state)
    X = datasets.add_noise_dims(X, noise_dims, rescale=rescale, random_state=random_state + 1)
    return X, y


def truth(name: str, y: np.ndarray) -> dict[str, Any]:
    """Keyword arguments of ``geodesic_precision_recall`` for a simulation's ``y``."""
    if name == "mixture":
        return {"labels": y}
    if name == "sphere":
        return {"latent": y, "metric": "great_circle"}
    return {"latent": y}


#: The URerF paper's forest where a later default departs from it: the paper
#: experiments pin it, so their figures do not move when a default does.
PAPER_FOREST: dict[str, Any] = {"max_tied_fraction": None, "distance": "proximity"}


def fit_forest(X: np.ndarray, config: ExperimentConfig, **params: Any):
    """The paper's ``UnsupervisedForest`` fitted with ``config.n_jobs`` and ``config.seed``.

    ``params`` go to the estimator (``n_estimators`` included), over
    :data:`PAPER_FOREST`.
    """
    from geoforest.forest import UnsupervisedForest

    params = {**PAPER_FOREST, **params}
    return UnsupervisedForest(n_jobs=config.n_jobs, random_state=config.seed, **params).fit(X)


def forest_neighbors(
    X: np.ndarray, n_neighbors: int, config: ExperimentConfig, **params: Any
) -> np.ndarray:
    """Neighbours of every training point under :func:`fit_forest`'s forest."""
    forest = fit_forest(X, config, **params)
    return forest.kneighbors(n_neighbors=n_neighbors, return_distance=False)


def precision_recall(neighbors: np.ndarray, ks: Sequence[int] | None, **truth_kw: Any):
    """``geodesic_precision_recall`` at ``ks`` (a thin alias, for the experiments)."""
    return metrics.geodesic_precision_recall(neighbors, ks=ks, **truth_kw)


def select(rows: Iterable[Mapping[str, Any]], **where: Any) -> list[Mapping[str, Any]]:
    """The rows whose values equal every ``key=value`` of ``where``."""
    return [r for r in rows if all(r[key] == value for key, value in where.items())]


# --------------------------------------------------------------------------- output
def progress(total: int, desc: str, config: ExperimentConfig):
    """A tqdm bar on stderr, hidden when ``config.show_progress`` is false."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not config.show_progress, leave=False)


def write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Write tidy rows as CSV (columns in first-row order; floats to 6 digits)."""
    if not rows:
        raise ValueError("no rows to write")
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(rows[0])
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {c: (f"{v:.6g}" if isinstance(v, float) else v) for c, v in row.items()}
            )
    return path


def write_record(result: ExperimentResult, config: ExperimentConfig, path: Path) -> Path:
    """JSON record of a run: command, settings, run time and package versions."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for pkg in (
        "geoforest",
        "numpy",
        "scipy",
        "scikit-learn",
        "numba",
        "umap-learn",
        "pynndescent",
    ):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = None
    record = {
        "experiment": result.name,
        "command": "geoforest " + " ".join(sys.argv[1:]) if sys.argv[1:] else None,
        "quick": config.quick,
        "seed": config.seed,
        "n_jobs": config.n_jobs,
        "seconds": round(result.seconds, 1),
        "files": [p.name for p in result.files],
        "python": platform.python_version(),
        "machine": platform.machine(),
        "versions": versions,
    }
    if result.notes:
        record["notes"] = result.notes
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


# --------------------------------------------------------------------------- atomic runs
def file_stem(name: str) -> str:
    """The stem of an experiment's output files: its name with ``_`` for ``-``.

    >>> file_stem("noise-sweep")
    'noise_sweep'
    """
    return name.replace("-", "_")


def _records(out: Path, name: str) -> list[Path]:
    """The JSON record of a run of ``name`` in ``out``, then its earlier hyphenated name."""
    return [out / f"{stem}.json" for stem in dict.fromkeys((file_stem(name), name))]


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def check_output(out: Path, name: str, *, overwrite: bool = False) -> None:
    """Raise :class:`OutputError` unless ``out`` can take a run of ``name``.

    ``out`` must be a writable directory, or missing below a writable
    directory (it is created then), and may hold a complete run of ``name``
    (its record ``out/STEM.json``, :func:`file_stem`) only with ``overwrite``.
    Nothing is created or changed.
    """
    out = check_output_folder(out)
    for record in _records(out, name):
        if not overwrite and _exists(record):
            raise OutputError(
                f"{out} already holds a complete {name} run ({record.name}); "
                "replace it with --overwrite or choose another --out"
            )


class Terminated(KeyboardInterrupt):
    """SIGTERM during :func:`run_staged`: a ``KeyboardInterrupt``, so it takes Ctrl-C's path.

    ``signum`` is the signal's number (the command exits with ``128 + signum``).
    """

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = int(signum)


def run_staged(name: str, config: ExperimentConfig, *, overwrite: bool = False) -> ExperimentResult:
    """Run an experiment and publish its files atomically (see the module docstring).

    Parameters
    ----------
    name : str
        A key of ``geoforest_experiments.EXPERIMENTS``.
    config : ExperimentConfig
        ``config.out`` is the final folder; the experiment itself gets a copy of
        the config whose ``out`` is the staging folder.
    overwrite : bool, default=False
        Replace a complete earlier run of ``name`` in ``config.out`` (all its
        files); without it such a run is an :class:`OutputError`, raised before
        anything is computed.

    Returns
    -------
    ExperimentResult
        With ``files`` in ``config.out``, the JSON record last.

    Raises
    ------
    OutputError
        ``config.out`` is not a writable directory, or holds a complete run
        of ``name`` and ``overwrite`` is false.
    MissingExtraError
        A package of the experiment's ``REQUIRES`` is not installed (raised
        before anything is computed or created).
    Terminated
        SIGTERM arrived during the run (it then raises this
        ``KeyboardInterrupt`` in the main thread, unless SIGTERM already had a
        handler or was ignored); the staging folder is gone.
    """
    from . import EXPERIMENTS

    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    out = Path(config.out)
    check_output(out, name, overwrite=overwrite)
    module = importlib.import_module(f".{EXPERIMENTS[name][0]}", __package__)
    require(getattr(module, "REQUIRES", {}), name)  # before any work
    with _sigterm_interrupts():
        result = _run_in_staging(name, module, config, out, overwrite)
    print(f"\n{name}: {result.title or EXPERIMENTS[name][1]}\n")
    print(result.summary)
    print(f"\n{result.seconds:.1f}s; wrote " + ", ".join(str(p) for p in result.files))
    return result


def _run_in_staging(name, module, config, out: Path, overwrite: bool) -> ExperimentResult:
    """The run of :func:`run_staged` in a staging folder, moved into ``out`` when complete."""
    created = _make_dirs(out)
    try:
        remove_dead_staging(out, name)
        staging = make_staging(out, name)
    except OSError as exc:
        _remove_empty(created)
        raise OutputError(f"cannot write to output folder {out}: {exc.strerror or exc}") from exc
    try:
        with warnings.catch_warnings(), Timer() as timer:
            # Isomap on disconnected neighbour graphs (noisy data) patches its graph
            # entry by entry; scipy warns on every edit.  Say it once, not thousands of times.
            warnings.simplefilter("ignore", SparseEfficiencyWarning)
            warnings.filterwarnings("once", message=".*connected components.*")
            result = module.run(dataclasses.replace(config, out=staging))
        result.seconds = timer.seconds
        staged = [Path(f) for f in result.files]
        listed = {f.resolve() for f in staged}
        # Files the experiment wrote but did not list are published (and recorded) too.
        staged += [f for f in sorted(staging.iterdir()) if f.resolve() not in listed]
        result.files = [_moved(f, staging, out) for f in staged]
        record, *earlier = _records(out, name)
        write_record(result, config, staging / record.name)
        with _interrupt_deferred():
            _publish(staging, out, [record, *earlier], overwrite=overwrite)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(created)
        raise
    result.files.append(record)
    return result


def _make_dirs(out: Path) -> list[Path]:
    """Create ``out`` and missing parents; the ones created, deepest first."""
    missing = []
    path = out.absolute()
    while not path.exists():
        missing.append(path)
        path = path.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(missing)
        raise OutputError(f"cannot create output folder {out}: {exc.strerror or exc}") from exc
    return missing


def _remove_empty(folders: Iterable[Path]) -> None:
    """Remove the folders (deepest first) that are empty; leave the others."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _moved(path: Path, staging: Path, out: Path) -> Path:
    """Where a file written in ``staging`` ends up in ``out``."""
    return out / path.relative_to(staging) if path.is_relative_to(staging) else path


def _recorded_files(record: Path) -> list[str]:
    """The file names a JSON record lists (plain names in its folder only)."""
    try:
        names = json.loads(record.read_text()).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(names, list):
        return []
    return [
        n for n in names if isinstance(n, str) and n not in ("", ".", "..") and Path(n).name == n
    ]


def _publish(staging: Path, out: Path, records: list[Path], *, overwrite: bool) -> None:
    """Move a finished run from ``staging`` into ``out``, its JSON record ``records[0]`` last.

    An earlier run recorded under any of ``records`` is removed first (with
    ``overwrite``; without it, it is an :class:`OutputError`).
    """
    record = records[0]
    for old_record in filter(_exists, records):
        if not overwrite:
            raise OutputError(
                f"{out} got a complete {record.stem} run while this one ran; nothing written "
                "(--overwrite replaces it)"
            )
        old_files = _recorded_files(old_record)
        old_record.unlink()  # first: from here on the folder does not claim a complete run
        for old in old_files:
            path = out / old
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)
    for src in sorted(staging.iterdir()):
        if src.name == record.name:
            continue
        dst = out / src.name
        if src.is_dir() and dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        os.replace(src, dst)
    os.replace(staging / record.name, record)
    staging.rmdir()


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """In the block, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt), as Ctrl-C does.

    Without it SIGTERM ends the process at once and leaves the staging folder
    behind. Only SIGTERM's default action (``SIG_DFL``) in the main thread is
    replaced, and restored after the block; a handler someone else installed,
    or an ignored SIGTERM, is left as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back until the block is done, then hand them on.

    Only a Python-level handler (by default the one raising KeyboardInterrupt,
    and :func:`_sigterm_interrupts`' for SIGTERM) is deferred; an ignored or
    default (``SIG_IGN``, ``SIG_DFL``) signal, or a block outside the main
    thread, is left as it is. After the block the first signal received is
    given to its old handler.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous = {sig: handler for sig, handler in previous.items() if callable(handler)}
    received: list[tuple[int, Any]] = []
    for sig in previous:
        signal.signal(sig, lambda signum, frame: received.append((signum, frame)))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        signum, frame = received[0]
        previous[signum](signum, frame)


def format_table(
    rows: Iterable[Mapping[str, Any]],
    index: Sequence[str],
    column: str,
    value: str,
    *,
    fmt: str = "{:.3f}",
) -> str:
    """Pivot tidy rows into a fixed-width text table.

    Parameters
    ----------
    rows : iterable of mapping
    index : sequence of str
        Row keys (one table row per distinct combination, in first-seen order).
    column : str
        Key whose distinct values become the table's columns (first-seen order).
    value : str
        Key of the cell value.
    fmt : str
        Format of numeric cells.
    """
    cells: dict[tuple, dict[Any, Any]] = {}
    columns: list[Any] = []
    for row in rows:
        key = tuple(row[i] for i in index)
        col = row[column]
        if col not in columns:
            columns.append(col)
        cells.setdefault(key, {})[col] = row[value]
    head = [*index, *map(str, columns)]
    body = [
        [*map(str, key), *(_fmt(vals.get(c), fmt) for c in columns)] for key, vals in cells.items()
    ]
    widths = [max(len(r[j]) for r in [head, *body]) for j in range(len(head))]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)


def _fmt(value: Any, fmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float | np.floating):
        return fmt.format(value)
    return str(value)


@dataclass
class Timer:
    """Context manager measuring wall-clock seconds."""

    seconds: float = 0.0
    _start: float = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


def grid(*axes: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """Cartesian product of the axes, first axis slowest."""
    import itertools

    return itertools.product(*axes)
