"""What every experiment shares: settings, data, forest neighbours, tidy output.

An experiment is a module with a ``run(config) -> ExperimentResult`` function.
It computes *tidy* rows (one observation per row, plain ``str``/``int``/
``float`` values), and this module writes them as CSV next to a JSON record
of how they were made (command, seed, versions, run time), prints the summary
table and shows progress.
"""

from __future__ import annotations

import csv
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets, metrics

__all__ = [
    "SIMULATIONS",
    "ExperimentConfig",
    "ExperimentResult",
    "forest_neighbors",
    "format_table",
    "progress",
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
        Folder for the CSV, PNG and JSON files (created if missing).
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
    """

    name: str
    rows: list[dict[str, Any]]
    summary: str
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0


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


def forest_neighbors(
    X: np.ndarray, n_neighbors: int, config: ExperimentConfig, **params: Any
) -> np.ndarray:
    """Neighbours of every training point under a fitted ``UnsupervisedForest``.

    ``params`` go to the estimator (``n_estimators`` included); the forest
    uses ``config.n_jobs`` and ``config.seed``.
    """
    from ..forest import UnsupervisedForest

    forest = UnsupervisedForest(n_jobs=config.n_jobs, random_state=config.seed, **params)
    return forest.fit(X).kneighbors(n_neighbors=n_neighbors, return_distance=False)


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
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


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
