"""Drosophila connectome: geodesic precision vs recall by cell type (URerF paper, Fig. 5).

The right mushroom body of the larval Drosophila (213 neurons, 4 cell types;
``geoforest.datasets.load_drosophila``) is embedded by adjacency spectral
embedding into 3 "out" + 3 "in" dimensions (``geoforest.embedding``).  Each
method retrieves the k nearest neighbours of every neuron in that 6-D
embedding; a neighbour is relevant when it has the same cell type.  The
paper reports precision against recall for k = 50, 100, ..., 250; with 213
neurons a neuron has only 212 others, so our largest k is 212 (the curve is
drawn over every k, with markers at 50, 100, 150, 200 and 212).

Randomised methods (URerF, UMAP, the Breiman forest) are run with
``n_repeats`` seeds and averaged; Euclidean and Isomap are deterministic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoforest import datasets
from geoforest.embedding import adjacency_spectral_embedding

from ._runner import (
    PAPER_FOREST,
    ExperimentConfig,
    ExperimentResult,
    format_table,
    precision_recall,
    progress,
    write_csv,
)
from .baselines import BASELINES, baseline_neighbors
from .noise_sweep import _STYLE, _options

# NNDescent is left out: on 213 points it is exact (it equals Euclidean) and,
# asked for all 212 neighbours, it warns that it cannot find them.
METHODS: tuple[str, ...] = ("URerF", *(b for b in BASELINES if b != "NNDescent"))
#: Optional packages the baselines need (import name -> name to install), checked
#: before any work (``_runner.run_staged``).
REQUIRES = {"umap": "umap-learn"}
DETERMINISTIC = ("Euclidean", "Isomap")
PAPER_KS = (50, 100, 150, 200, 250)


def settings(quick: bool) -> dict[str, Any]:
    """Sizes of the full and the quick run."""
    if quick:
        return {"n_estimators": 50, "n_repeats": 1, "n_components": 3}
    return {"n_estimators": 100, "n_repeats": 10, "n_components": 3}


def embed(n_components: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 6-D embedding, the cell-type codes and the cell-type names."""
    data = datasets.load_drosophila()
    Z = adjacency_spectral_embedding(data.adjacency, n_components=n_components)
    return Z, data.target, np.asarray(data.target_names)


def neighbors(method: str, Z: np.ndarray, k: int, seed: int, config: ExperimentConfig, s: dict):
    """Neighbour lists of one method on the embedding."""
    if method == "URerF":
        from geoforest.forest import UnsupervisedForest

        forest = UnsupervisedForest(
            n_estimators=s["n_estimators"], n_jobs=config.n_jobs, random_state=seed, **PAPER_FOREST
        )
        return forest.fit(Z).kneighbors(n_neighbors=k, return_distance=False)
    return baseline_neighbors(
        method, Z, k, random_state=seed, n_jobs=config.n_jobs, **_options(method, s)
    )


def run(config: ExperimentConfig) -> ExperimentResult:
    """Precision and recall at every k for every method, averaged over repeats."""
    s = settings(config.quick)
    Z, y, names = embed(s["n_components"])
    n = len(y)
    k_max = n - 1
    ks = np.arange(1, k_max + 1)
    rows: list[dict[str, Any]] = []
    runs = [(m, r) for m in METHODS for r in range(1 if m in DETERMINISTIC else s["n_repeats"])]
    bar = progress(len(runs), "connectome", config)
    curves: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for method, rep in runs:
        bar.set_postfix_str(f"{method} #{rep}")
        ind = neighbors(method, Z, k_max, config.seed + rep, config, s)
        res = precision_recall(ind, ks, labels=y)
        curves.setdefault(method, []).append((res.precision, res.recall))
        bar.update()
    bar.close()
    for method, reps in curves.items():
        prec = np.array([p for p, _ in reps])
        rec = np.array([r for _, r in reps])
        for j, k in enumerate(ks):
            rows.append(
                {
                    "method": method,
                    "k": int(k),
                    "precision": float(prec[:, j].mean()),
                    "recall": float(rec[:, j].mean()),
                    "precision_sd": float(prec[:, j].std()),
                    "recall_sd": float(rec[:, j].std()),
                    "n_repeats": len(reps),
                }
            )

    files = [write_csv(rows, config.out / "connectome.csv")]
    files += _figures(rows, Z, y, names, config)
    report_ks = [k for k in PAPER_KS if k <= k_max] + [k_max]
    sel = [r for r in rows if r["k"] in report_ks]
    counts = ", ".join(f"{nm} {c}" for nm, c in zip(names, np.bincount(y), strict=True))
    summary = (
        f"{n} neurons ({counts}); adjacency spectral embedding, "
        f"{s['n_components']} out + {s['n_components']} in dimensions\n\n"
        "geodesic precision by k (relevant = same cell type)\n"
        + format_table(sel, ["method"], "k", "precision")
        + "\n\ngeodesic recall by k\n"
        + format_table(sel, ["method"], "k", "recall")
    )
    return ExperimentResult("connectome", rows, summary, files)


def _zoom(ax, P: np.ndarray, share: float = 0.01) -> int:
    """Limit ``ax`` to the central ``1 - 2 * share`` of each coordinate (with a margin).

    A few neurons far out (hubs) would otherwise squash the rest into a corner.
    Returns how many points fall outside.
    """
    lo, hi = np.quantile(P, [share, 1.0 - share], axis=0)
    pad = 0.08 * np.maximum(hi - lo, 1e-12)
    lo, hi = lo - pad, hi + pad
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    return int(np.sum(np.any((P < lo) | (P > hi), axis=1)))


def _figures(rows, Z, y, names, config: ExperimentConfig) -> list:
    try:
        from geoforest.plotting import pyplot
    except ImportError:  # pragma: no cover - plotting is an extra
        return []
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.2), layout="constrained")
    half = Z.shape[1] // 2
    for ax, side, first in zip(axes[:2], ["out", "in"], [0, half], strict=True):
        a, b = first, first + 1
        for c, name in enumerate(names):
            ax.scatter(Z[y == c, a], Z[y == c, b], s=14, label=str(name), alpha=0.8)
        outside = _zoom(ax, Z[:, [a, b]])
        note = f" ({outside} outside the view)" if outside else ""
        ax.set_title(f"ASE, {side} dimensions 1-2{note}")
        ax.set_xlabel(f"{side} dim 1")
        ax.set_ylabel(f"{side} dim 2")
    axes[0].legend(title="cell type", frameon=False)
    ax = axes[2]
    k_max = max(r["k"] for r in rows)
    marks = [k for k in PAPER_KS if k <= k_max] + [k_max]
    for method in dict.fromkeys(r["method"] for r in rows):
        sel = [r for r in rows if r["method"] == method]
        style = _STYLE.get(method, {})
        ax.plot(
            [r["recall"] for r in sel],
            [r["precision"] for r in sel],
            color=style.get("color"),
            linewidth=style.get("linewidth", 1.5),
            label=method,
        )
        pts = [r for r in sel if r["k"] in marks]
        ax.plot(
            [r["recall"] for r in pts],
            [r["precision"] for r in pts],
            linestyle="none",
            marker=style.get("marker", "o"),
            color=style.get("color"),
        )
    ax.set_xlabel(f"geodesic recall (markers: k = {', '.join(map(str, marks))})")
    ax.set_ylabel("geodesic precision")
    ax.set_title("precision vs recall, relevant = same cell type")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False)
    path = config.out / "connectome.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]
