"""Manifold forests on the paper's three simulations (Perry et al., Figs. 1-2).

Test error on ``n_test`` (10,000) fresh samples against the training-set size
for MORF (:class:`geoforest.ManifoldForestClassifier`), SPORF
(:class:`geoforest.ObliqueForestClassifier`) and scikit-learn's random forest,
logistic regression, linear SVM, RBF SVM, kNN and MLP (scikit-learn
defaults, as in the paper; forests with 100 trees), with fit and predict
times; and the paper's CNN (:class:`~geoforest_experiments.cnn.CNNClassifier`)
when PyTorch is installed (the ``cnn`` extra).  Every method gets the same
training and test sets; sizes are repeated over ``reps`` seeds.

Settings, from the paper's Section 4.1:

``circle`` (A)
    :func:`~geoforest.datasets.make_circle_segments`; MORF patches of width
    1-15 that wrap around the circle; MORF and SPORF try 40 projections.
``bars`` (B)
    :func:`~geoforest.datasets.make_bars`, 28 x 28, bars across the whole
    image; patches 1-4 x 1-4; 28 projections.  Every forest reaches the Bayes
    error (2.3e-5) by about 200 training images.
``bars-random`` (B, harder; ours)
    The same with ``bar_length="random"``: each bar a run of random length
    and position along its row or column.
``signal`` (C)
    :func:`~geoforest.datasets.make_impulse_signal`; patch widths 1-5; the
    default number of projections (``sqrt(100) = 10``).

Outputs: ``morf_simulations.csv`` (one row per simulation, size, seed and
method), ``morf_simulations_summary.csv`` (means over seeds),
``morf_errors.png`` (Fig. 1) and ``morf_times.png`` (Fig. 2).
"""

from __future__ import annotations

import time
import warnings
from functools import partial
from typing import Any

import numpy as np

from geoforest import datasets

from ._runner import ExperimentConfig, ExperimentResult, grid, progress, select, write_csv

METHODS = ("MORF", "SPORF", "RF", "Log. Reg", "Lin. SVM", "SVM", "kNN", "MLP")


def available_methods() -> tuple[str, ...]:
    """:data:`METHODS`, plus ``"CNN"`` when PyTorch is installed."""
    from .cnn import torch_available

    return METHODS + ("CNN",) if torch_available() else METHODS


SIMULATIONS = ("circle", "bars", "bars-random", "signal")

_MAKERS = {
    "circle": datasets.make_circle_segments,
    "bars": datasets.make_bars,
    "bars-random": partial(datasets.make_bars, bar_length="random"),
    "signal": datasets.make_impulse_signal,
}
#: Forest settings per simulation (paper Section 4.1).
_FOREST = {
    "circle": {"image_shape": (100,), "max_patch_shape": 15, "wrap": True, "max_features": 40},
    "bars": {"image_shape": (28, 28), "max_patch_shape": (4, 4), "max_features": 28},
    "bars-random": {"image_shape": (28, 28), "max_patch_shape": (4, 4), "max_features": 28},
    "signal": {"image_shape": (100,), "max_patch_shape": 5, "max_features": "sqrt"},
}
#: The paper's claims, for the summary and docs/results/morf.md.
PAPER_CLAIMS = {
    "accuracy": "MF well outperforms all other classifiers in all three settings, especially at "
    "low sample sizes (CNN aside); most others are at chance on the circle",
    "signal": "on the signal all classifiers are close",
    "time": "MF train and test times are on par with SPORF and RF",
}


def settings(quick: bool) -> dict[str, Any]:
    """Sizes, seeds, test size and trees of the full and the quick run."""
    if quick:
        return {
            "sizes": {
                "circle": (100, 400),
                "bars": (50, 200),
                "bars-random": (50, 200),
                "signal": (100, 400),
            },
            "reps": 1,
            "n_test": 2000,
            "n_trees": 50,
        }
    return {
        "sizes": {
            "circle": (50, 100, 200, 400, 1000),
            "bars": (20, 50, 100, 200, 400),
            "bars-random": (20, 50, 100, 200, 400),
            "signal": (50, 100, 200, 400, 1000),
        },
        "reps": 5,
        "n_test": 10_000,
        "n_trees": 100,
    }


def make_method(method: str, simulation: str, n_trees: int, seed: int, n_jobs):
    """An unfitted estimator of one method with the paper's settings."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC, LinearSVC

    from geoforest.forest import ManifoldForestClassifier, ObliqueForestClassifier

    cfg = _FOREST[simulation]
    if method == "CNN":
        from .cnn import CNNClassifier

        return CNNClassifier(cfg["image_shape"], random_state=seed)
    if method == "MORF":
        return ManifoldForestClassifier(
            n_estimators=n_trees, random_state=seed, n_jobs=n_jobs, **cfg
        )
    if method == "SPORF":
        return ObliqueForestClassifier(
            n_estimators=n_trees, max_features=cfg["max_features"], random_state=seed,
            n_jobs=n_jobs,
        )  # fmt: skip
    if method == "RF":
        return RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=n_jobs)
    if method == "Log. Reg":
        return LogisticRegression()
    if method == "Lin. SVM":
        return LinearSVC(random_state=seed)
    if method == "SVM":
        return SVC()
    if method == "kNN":
        return KNeighborsClassifier()
    return MLPClassifier(random_state=seed)


def run(config: ExperimentConfig) -> ExperimentResult:
    """Every method on every simulation, size and seed; two figures."""
    from sklearn.exceptions import ConvergenceWarning

    s = dict(settings(config.quick))
    s.setdefault("methods", available_methods())
    methods = s["methods"]
    rows: list[dict[str, Any]] = []
    total = sum(len(v) for v in s["sizes"].values()) * s["reps"] * len(methods)
    bar = progress(total, "morf-simulations", config)
    for sim in SIMULATIONS:
        make = _MAKERS[sim]
        X_test, y_test = make(s["n_test"], random_state=config.seed + 10_000)
        for n, rep in grid(s["sizes"][sim], range(s["reps"])):
            seed = config.seed + rep
            X, y = make(n, random_state=seed)
            for method in methods:
                bar.set_postfix_str(f"{sim} n={n} #{rep} {method}")
                est = make_method(method, sim, s["n_trees"], seed, config.n_jobs)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    t0 = time.perf_counter()
                    est.fit(X, y)
                    t1 = time.perf_counter()
                    pred = est.predict(X_test)
                    t2 = time.perf_counter()
                rows.append(
                    {
                        "simulation": sim,
                        "n_train": n,
                        "seed": seed,
                        "method": method,
                        "error": float(np.mean(pred != y_test)),
                        "fit_seconds": t1 - t0,
                        "predict_seconds": t2 - t1,
                        "n_test": s["n_test"],
                    }
                )
                bar.update()
    bar.close()
    files = [write_csv(rows, config.out / "morf_simulations.csv")]
    summary = summarize(rows, s)
    files.append(write_csv(summary, config.out / "morf_simulations_summary.csv"))
    try:
        files += _figures(summary, s, config)
    except ImportError:  # pragma: no cover - plotting is an extra
        pass
    return ExperimentResult("morf-simulations", rows, _table(summary, s), files)


def summarize(rows: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    """Mean error and times over seeds per simulation, size and method."""
    out = []
    for sim in SIMULATIONS:
        for n, method in grid(s["sizes"][sim], s["methods"]):
            sel = select(rows, simulation=sim, n_train=n, method=method)
            err = np.array([r["error"] for r in sel])
            out.append(
                {
                    "simulation": sim,
                    "n_train": n,
                    "method": method,
                    "error_mean": float(err.mean()),
                    "error_sd": float(err.std(ddof=1)) if err.size > 1 else 0.0,
                    "fit_seconds_mean": float(np.mean([r["fit_seconds"] for r in sel])),
                    "predict_seconds_mean": float(np.mean([r["predict_seconds"] for r in sel])),
                    "n_seeds": len(sel),
                }
            )
    return out


def _table(summary: list[dict[str, Any]], s: dict[str, Any]) -> str:
    lines = [f"test error on {s['n_test']} samples (mean over {s['reps']} seeds)"]
    for sim in SIMULATIONS:
        lines.append(f"\n{sim}: " + " ".join(f"{m:>9}" for m in s["methods"]))
        for n in s["sizes"][sim]:
            errs = {
                r["method"]: r["error_mean"] for r in select(summary, simulation=sim, n_train=n)
            }
            lines.append(f"n={n:<5} " + " ".join(f"{errs[m]:>9.4f}" for m in s["methods"]))
    lines.append("\nfit / predict seconds at the largest size")
    for sim in SIMULATIONS:
        n = s["sizes"][sim][-1]
        sel = {r["method"]: r for r in select(summary, simulation=sim, n_train=n)}
        lines.append(
            f"{sim} n={n}: "
            + ", ".join(
                f"{m} {sel[m]['fit_seconds_mean']:.2f}/{sel[m]['predict_seconds_mean']:.2f}"
                for m in s["methods"]
            )
        )
    lines.append("paper: " + "; ".join(PAPER_CLAIMS.values()))
    return "\n".join(lines)


def _figures(summary, s, config: ExperimentConfig) -> list:
    """Fig. 1 (errors) and Fig. 2 (fit and predict times), log-scaled sizes."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    from geoforest.plotting import pyplot

    plt = pyplot()
    titles = {
        "circle": "(A) circle segments",
        "bars": "(B) bars",
        "bars-random": "(B') bars of random length",
        "signal": "(C) impulse",
    }

    def lines(ax, sim, key):
        for method in s["methods"]:
            sel = select(summary, simulation=sim, method=method)
            ax.plot(
                [r["n_train"] for r in sel], [r[key] for r in sel], marker="o",
                label=method, linewidth=2.8 if method == "MORF" else 1.2,
                zorder=3 if method == "MORF" else 2,
            )  # fmt: skip
        ax.set_xscale("log")
        ax.set_xticks(s["sizes"][sim])
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(alpha=0.3)

    n_sims = len(SIMULATIONS)
    fig, axes = plt.subplots(1, n_sims, figsize=(4 * n_sims, 3.9), layout="constrained")
    for ax, sim in zip(axes, SIMULATIONS, strict=True):
        lines(ax, sim, "error_mean")
        ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
        ax.set_ylim(0, 0.55)
        ax.set_title(titles[sim])
        ax.set_xlabel("training samples")
    axes[0].set_ylabel(f"test error ({s['n_test']:,} samples)")
    axes[0].legend(fontsize=8, frameon=False, ncol=2)
    fig.suptitle(f"Manifold forests paper, Fig. 1 (mean of {s['reps']} seeds)")
    errors_png = config.out / "morf_errors.png"
    fig.savefig(errors_png, dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(2, n_sims, figsize=(4 * n_sims, 6.6), layout="constrained")
    for col, sim in enumerate(SIMULATIONS):
        for row, (key, what) in enumerate(
            (("fit_seconds_mean", "fit"), ("predict_seconds_mean", "predict"))
        ):
            ax = axes[row, col]
            lines(ax, sim, key)
            ax.set_yscale("log")
            ax.set_title(f"{what}: {titles[sim]}")
            ax.set_xlabel("training samples")
        axes[0, col].set_ylabel("fit seconds")
        axes[1, col].set_ylabel(f"predict seconds ({s['n_test']:,})")
    axes[0, 0].legend(fontsize=8, frameon=False, ncol=2)
    fig.suptitle(f"Manifold forests paper, Fig. 2: fit and predict times (n_jobs={config.n_jobs})")
    times_png = config.out / "morf_times.png"
    fig.savefig(times_png, dpi=110)
    plt.close(fig)
    return [errors_png, times_png]
