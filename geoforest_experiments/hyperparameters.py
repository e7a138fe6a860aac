"""Hyperparameter robustness: precision vs k for min_samples_split and max_features (Fig. 3).

The paper varies *minparent* (our ``min_samples_split``) at mtry = sqrt(p),
then *mtry* (our ``max_features``) at minparent = 100, and finds geodesic
precision robust to both.  We do the same on the four simulations, once
without noise (as in the paper) and once with 100 noise dimensions, where
the choice matters more (beyond the paper).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._runner import (
    SIMULATIONS,
    ExperimentConfig,
    ExperimentResult,
    fit_forest,
    format_table,
    precision_recall,
    progress,
    select,
    simulation,
    truth,
    write_csv,
)


def settings(quick: bool) -> dict[str, Any]:
    """Sizes and parameter grids of the full and the quick run."""
    if quick:
        return {
            "n_samples": 300,
            "n_estimators": 20,
            "k_max": 30,
            "noise_dims": (0,),
            "min_samples_split": (10, 45, 100),
            "max_features": (1, "sqrt", 4),
            "mtry_min_samples_split": 100,
        }
    return {
        "n_samples": 1000,
        "n_estimators": 100,
        "k_max": 100,
        "noise_dims": (0, 100),
        "min_samples_split": (5, 20, 45, 100, 200, 400),
        "max_features": (1, 2, "sqrt", 4, 8, 16),
        "mtry_min_samples_split": 100,
    }


def run(config: ExperimentConfig) -> ExperimentResult:
    """Precision curves for each value of each hyperparameter."""
    s = settings(config.quick)
    ks = np.arange(1, s["k_max"] + 1)
    sweeps = [("min_samples_split", v, {"min_samples_split": v}) for v in s["min_samples_split"]]
    sweeps += [
        ("max_features", v, {"max_features": v, "min_samples_split": s["mtry_min_samples_split"]})
        for v in s["max_features"]
    ]
    rows: list[dict[str, Any]] = []
    bar = progress(len(SIMULATIONS) * len(s["noise_dims"]) * len(sweeps), "hyperparameters", config)
    for noise in s["noise_dims"]:
        for sim in SIMULATIONS:
            X, y = simulation(sim, s["n_samples"], noise_dims=noise, random_state=config.seed)
            kw = truth(sim, y)
            for param, value, params in sweeps:
                forest = fit_forest(X, config, n_estimators=s["n_estimators"], **params)
                ind = forest.kneighbors(n_neighbors=s["k_max"], return_distance=False)
                res = precision_recall(ind, ks, **kw)
                for k, p, r in zip(res.ks, res.precision, res.recall, strict=True):
                    rows.append(
                        {
                            "simulation": sim,
                            "noise_dims": noise,
                            "parameter": param,
                            "value": str(value),
                            "k": int(k),
                            "precision": float(p),
                            "recall": float(r),
                            "min_samples_split": params.get("min_samples_split", 45),
                            "max_features": str(params.get("max_features", "sqrt")),
                            "n_projections": forest.n_projections_,
                            "n_samples": s["n_samples"],
                            "n_estimators": s["n_estimators"],
                        }
                    )
                bar.update()
    bar.close()

    files = [write_csv(rows, config.out / "hyperparameters.csv")]
    files += _figures(rows, s, config)
    k_report = min(50, s["k_max"])
    at_k = [{**r, "setting": f"{r['parameter']}={r['value']}"} for r in rows if r["k"] == k_report]
    parts = []
    for noise in s["noise_dims"]:
        sel = [r for r in at_k if r["noise_dims"] == noise]
        parts.append(
            f"geodesic precision@{k_report}, {noise} noise dimensions\n"
            + format_table(sel, ["setting"], "simulation", "precision")
        )
    return ExperimentResult("hyperparameters", rows, "\n\n".join(parts), files)


def _figures(rows: list[dict[str, Any]], s: dict[str, Any], config: ExperimentConfig) -> list:
    try:
        from geoforest.plotting import plot_panels
    except ImportError:  # pragma: no cover - plotting is an extra
        return []
    import matplotlib as mpl

    files = []
    for noise in s["noise_dims"]:
        panels: dict[str, list[dict[str, Any]]] = {}
        for param in ("min_samples_split", "max_features"):
            values = s[param]
            cmap = mpl.colormaps["viridis"]
            for sim in SIMULATIONS:
                lines = []
                for j, value in enumerate(values):
                    sel = select(
                        rows, simulation=sim, noise_dims=noise, parameter=param, value=str(value)
                    )
                    lines.append(
                        {
                            "x": [r["k"] for r in sel],
                            "y": [r["precision"] for r in sel],
                            "label": f"{param}={value}"
                            + (f" ({sel[0]['n_projections']})" if value == "sqrt" else ""),
                            "color": cmap(j / max(len(values) - 1, 1)),
                        }
                    )
                panels[f"{sim} ({param})"] = lines
        files.append(
            plot_panels(
                panels,
                config.out / f"hyperparameters_noise{noise}.png",
                xlabel="k",
                ylabel="geodesic precision",
                legend_in=[
                    f"{SIMULATIONS[0]} ({param})" for param in ("min_samples_split", "max_features")
                ],
                suptitle=(
                    f"URerF hyperparameters, {noise} noise dimensions\n(top: min_samples_split "
                    f"at max_features=sqrt; bottom: max_features at min_samples_split="
                    f"{s['mtry_min_samples_split']})"
                ),
            )
        )
    return files
