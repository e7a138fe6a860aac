"""Noise sweep: precision@50 vs noise dimensions, URerF vs baselines (URerF paper, Fig. 4/6).

N = 1000 points of each simulation, with 0, 2, 10, 100, 1,000 and 10,000
iid N(0, 70) noise dimensions appended, raw and with every column min-max
rescaled to [0, 1].  URerF (library defaults, 100 trees) is compared with the
baselines of :mod:`geoforest_experiments.baselines`: Euclidean kNN, Isomap
geodesic distances, UMAP (distances in its 2-D embedding), NNDescent (an
approximate-NN index standing in for FLANN) and the Breiman / Shi-Horvath
unsupervised random forest.  Chance is ``k / (N - 1)`` for the continuous
settings; for the mixture, where every point of the same component is
relevant, a random neighbour is a hit with probability
``sum_c n_c (n_c - 1) / (N (N - 1))`` (about 0.34), and that is its chance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoforest import metrics

from ._runner import (
    SIMULATIONS,
    ExperimentConfig,
    ExperimentResult,
    Timer,
    forest_neighbors,
    format_table,
    precision_recall,
    progress,
    select,
    simulation,
    truth,
    write_csv,
)
from .baselines import BASELINES, baseline_neighbors

METHODS: tuple[str, ...] = ("URerF", *BASELINES)

#: Optional packages the baselines need (import name -> name to install), checked
#: before any work (``_runner.run_staged``).
REQUIRES = {"umap": "umap-learn", "pynndescent": "pynndescent"}


def settings(quick: bool) -> dict[str, Any]:
    """Sizes of the full and the quick run."""
    if quick:
        return {
            "n_samples": 300,
            "n_estimators": 30,
            "k": 30,
            "noise_dims": (0, 100),
            "scalings": ("raw", "rescaled"),
        }
    return {
        "n_samples": 1000,
        "n_estimators": 100,
        "k": 50,
        "noise_dims": (0, 2, 10, 100, 1000, 10000),
        "scalings": ("raw", "rescaled"),
    }


def run(config: ExperimentConfig, methods: tuple[str, ...] = METHODS) -> ExperimentResult:
    """Precision@k of every method at every noise level, raw and rescaled."""
    s = settings(config.quick)
    k = s["k"]
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    rows: list[dict[str, Any]] = []
    total = len(s["scalings"]) * len(SIMULATIONS) * len(s["noise_dims"]) * len(methods)
    bar = progress(total, "noise-sweep", config)
    for scaling in s["scalings"]:
        for sim in SIMULATIONS:
            for noise in s["noise_dims"]:
                X, y = simulation(
                    sim,
                    s["n_samples"],
                    noise_dims=noise,
                    rescale=scaling == "rescaled",
                    random_state=config.seed,
                )
                kw = truth(sim, y)
                chance = _chance(sim, y, k)
                for method in methods:
                    bar.set_postfix_str(f"{scaling} {sim} d={noise} {method}")
                    with Timer() as timer:
                        if method == "URerF":
                            ind = forest_neighbors(X, k, config, n_estimators=s["n_estimators"])
                        else:
                            ind = baseline_neighbors(
                                method,
                                X,
                                k,
                                random_state=config.seed,
                                n_jobs=config.n_jobs,
                                **_options(method, s),
                            )
                    res = precision_recall(ind, [k], **kw)
                    rows.append(
                        {
                            "scaling": scaling,
                            "simulation": sim,
                            "noise_dims": noise,
                            "method": method,
                            "k": k,
                            "precision": float(res.precision[0]),
                            "recall": float(res.recall[0]),
                            "chance": chance,
                            "seconds": timer.seconds,
                            "n_samples": s["n_samples"],
                        }
                    )
                    bar.update()
    bar.close()

    files = [write_csv(rows, config.out / "noise_sweep.csv")]
    files += _figures(rows, s, config)
    parts = []
    for scaling in s["scalings"]:
        for sim in SIMULATIONS:
            sel = select(rows, scaling=scaling, simulation=sim)
            parts.append(
                f"{sim}, {scaling}: precision@{k} by noise dimensions\n"
                + format_table(sel, ["method"], "noise_dims", "precision")
            )
    chance = {r["simulation"]: r["chance"] for r in rows}
    summary = (
        "chance: "
        + ", ".join(f"{sim} {c:.3f}" for sim, c in chance.items())
        + "\n\n"
        + "\n\n".join(parts)
    )
    title = (
        f"precision@{k} vs noise dimensions, URerF vs baselines, raw and rescaled "
        f"(N={s['n_samples']}, {s['n_estimators']} trees)"
    )
    return ExperimentResult("noise-sweep", rows, summary, files, title=title)


def _options(method: str, s: dict[str, Any]) -> dict[str, Any]:
    """Baseline options: the Breiman forest gets as many trees as URerF."""
    return {"n_estimators": s["n_estimators"]} if method == "URF-Breiman" else {}


def _chance(sim: str, y: np.ndarray, k: int) -> float:
    """Expected precision@k of random neighbours."""
    n = len(y)
    if sim != "mixture":
        return metrics.chance_precision(n, k)
    sizes = np.unique(y, return_counts=True)[1].astype(float)
    return float((sizes * (sizes - 1)).sum() / (n * (n - 1)))


_STYLE = {
    "URerF": {"color": "tab:red", "marker": "o", "linewidth": 2.2},
    "Euclidean": {"color": "black", "marker": "s"},
    "Isomap": {"color": "tab:blue", "marker": "^"},
    "UMAP": {"color": "tab:purple", "marker": "v"},
    "NNDescent": {"color": "tab:orange", "marker": "D"},
    "URF-Breiman": {"color": "tab:green", "marker": "P"},
}


def _figures(rows: list[dict[str, Any]], s: dict[str, Any], config: ExperimentConfig) -> list:
    try:
        from geoforest.plotting import plot_panels
    except ImportError:  # pragma: no cover - plotting is an extra
        return []
    panels: dict[str, list[dict[str, Any]]] = {}
    hlines: dict[str, float] = {}
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for scaling in s["scalings"]:
        for sim in SIMULATIONS:
            title = f"{sim} ({scaling})"
            lines = []
            for method in methods:
                sel = select(rows, scaling=scaling, simulation=sim, method=method)
                lines.append(
                    {
                        "x": [r["noise_dims"] for r in sel],
                        "y": [r["precision"] for r in sel],
                        "label": method,
                        **_STYLE.get(method, {}),
                    }
                )
            panels[title] = lines
            hlines[title] = next(r["chance"] for r in rows if r["simulation"] == sim)
    return [
        plot_panels(
            panels,
            config.out / "noise_sweep.png",
            xlabel="noise dimensions",
            ylabel=f"geodesic precision@{s['k']}",
            xscale="symlog",
            hlines=hlines,
            suptitle=(
                f"Noise sweep, N={s['n_samples']} (top: raw, bottom: columns min-max rescaled)"
            ),
        )
    ]
