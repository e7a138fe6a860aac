"""Splitting criteria: URF vs URerF x two-means / GMM / Fast-BIC (URerF paper, Fig. 2).

The four simulations without noise dimensions (N = 1000, 3 signal
dimensions).  For every combination of projection (``axis``: URF, ``sparse``:
URerF) and split criterion, the forest's neighbours are scored by geodesic
recall at every k, as in the paper's Figure 2.  Euclidean neighbours are
added as a reference line: without noise they are a strong baseline (on the
line they are exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._runner import (
    SIMULATIONS,
    ExperimentConfig,
    ExperimentResult,
    forest_neighbors,
    format_table,
    precision_recall,
    progress,
    select,
    simulation,
    truth,
    write_csv,
)
from .baselines import euclidean_neighbors

PROJECTIONS = {"URF": "axis", "URerF": "sparse"}
CRITERIA = ("twomeans", "gmm", "fastbic")
_LABELS = {"twomeans": "two-means", "gmm": "GMM", "fastbic": "Fast-BIC"}
_COLORS = {"twomeans": "tab:green", "gmm": "tab:blue", "fastbic": "tab:red"}


def settings(quick: bool) -> dict[str, Any]:
    """Sizes of the full and the quick run."""
    if quick:
        return {"n_samples": 300, "n_estimators": 20, "k_max": 30}
    return {"n_samples": 1000, "n_estimators": 100, "k_max": 100}


def run(config: ExperimentConfig) -> ExperimentResult:
    """Recall curves of every forest variant on the four noiseless simulations."""
    s = settings(config.quick)
    ks = np.arange(1, s["k_max"] + 1)
    rows: list[dict[str, Any]] = []
    bar = progress(len(SIMULATIONS) * (len(PROJECTIONS) * len(CRITERIA) + 1), "criteria", config)
    for sim in SIMULATIONS:
        X, y = simulation(sim, s["n_samples"], random_state=config.seed)
        kw = truth(sim, y)
        variants = [
            (method, crit, proj) for method, proj in PROJECTIONS.items() for crit in CRITERIA
        ]
        for method, crit, proj in [*variants, ("Euclidean", "-", None)]:
            if proj is None:
                ind = euclidean_neighbors(X, s["k_max"])
            else:
                ind = forest_neighbors(
                    X,
                    s["k_max"],
                    config,
                    n_estimators=s["n_estimators"],
                    projection=proj,
                    criterion=crit,
                )
            res = precision_recall(ind, ks, **kw)
            for k, p, r in zip(res.ks, res.precision, res.recall, strict=True):
                rows.append(
                    {
                        "simulation": sim,
                        "method": method,
                        "criterion": crit,
                        "k": int(k),
                        "precision": float(p),
                        "recall": float(r),
                        "n_samples": s["n_samples"],
                        "n_estimators": s["n_estimators"] if proj else 0,
                    }
                )
            bar.update()
    bar.close()

    files = [write_csv(rows, config.out / "criteria.csv")]
    files += _figures(rows, config)
    k_report = min(50, s["k_max"])
    at_k = [
        {**r, "variant": f"{r['method']} {_LABELS.get(r['criterion'], '')}".strip()}
        for r in rows
        if r["k"] == k_report
    ]
    summary = f"geodesic recall@{k_report} (no noise dimensions)\n" + format_table(
        at_k, ["variant"], "simulation", "recall"
    )
    return ExperimentResult("criteria", rows, summary, files)


def _figures(rows: list[dict[str, Any]], config: ExperimentConfig) -> list:
    try:
        from geoforest.plotting import plot_panels
    except ImportError:  # pragma: no cover - plotting is an extra
        return []
    panels: dict[str, list[dict[str, Any]]] = {}
    for sim in SIMULATIONS:
        lines = []
        for method, proj in PROJECTIONS.items():
            for crit in CRITERIA:
                sel = select(rows, simulation=sim, method=method, criterion=crit)
                lines.append(
                    {
                        "x": [r["k"] for r in sel],
                        "y": [r["recall"] for r in sel],
                        "label": f"{method} {_LABELS[crit]}",
                        "color": _COLORS[crit],
                        "linestyle": "-" if proj == "axis" else "--",
                    }
                )
        sel = select(rows, simulation=sim, method="Euclidean")
        lines.append(
            {
                "x": [r["k"] for r in sel],
                "y": [r["recall"] for r in sel],
                "label": "Euclidean",
                "color": "grey",
                "linestyle": ":",
            }
        )
        panels[sim] = lines
    try:
        return [
            plot_panels(
                panels,
                config.out / "criteria.png",
                xlabel="k",
                ylabel="geodesic recall",
                suptitle="Split criteria, no noise (solid: URF axis-aligned, dashed: URerF sparse)",
            )
        ]
    except ImportError:  # pragma: no cover
        return []
