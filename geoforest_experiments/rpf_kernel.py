"""Iris kernels side by side: Gaussian vs rpf-kernel (rpfCluster paper, Fig. 3).

Points are ordered by class, so a good similarity kernel looks block diagonal.
The Gaussian kernel ``exp(-||x - x'||^2 / (2 sigma^2))`` uses the median
pairwise distance as ``sigma`` (the usual automatic choice); the rpf-kernel is
the proximity of a 200-tree :class:`~geoforest.RandomProjectionForest`
(``n_s = 30``).  The table reports, for each kernel, the mean similarity
within and between classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import pdist, squareform

from geoforest import datasets

from ._runner import ExperimentConfig, ExperimentResult, format_table, write_csv


def settings(quick: bool) -> dict[str, Any]:
    """Forest size of the full and the quick run."""
    return {"n_trees": 50 if quick else 200}


def kernels(seed: int, n_trees: int, n_jobs) -> tuple[dict[str, np.ndarray], np.ndarray, list]:
    """Both kernels on iris ordered by class, the labels and the class names."""
    from geoforest.forest import RandomProjectionForest

    data = datasets.load_clustering_benchmark("iris")
    order = np.argsort(data.target, kind="stable")
    X, y = data.data[order], data.target[order]
    D = squareform(pdist(X))
    sigma = float(np.median(D[np.triu_indices_from(D, 1)]))
    gauss = np.exp(-(D**2) / (2 * sigma**2))
    forest = RandomProjectionForest(n_trees, random_state=seed, n_jobs=n_jobs).fit(X)
    rpf = forest.proximity(dense=True)
    return {"Gaussian": gauss, "rpf-kernel": np.asarray(rpf)}, y, list(data.target_names)


def run(config: ExperimentConfig) -> ExperimentResult:
    """Heatmaps and within/between-class similarity of both kernels."""
    s = settings(config.quick)
    K, y, names = kernels(config.seed, s["n_trees"], config.n_jobs)
    rows = []
    for kernel, M in K.items():
        for a in range(len(names)):
            for b in range(len(names)):
                block = M[np.ix_(y == a, y == b)]
                if a == b:
                    block = block[~np.eye(block.shape[0], dtype=bool)]
                rows.append(
                    {
                        "kernel": kernel,
                        "class_a": str(names[a]),
                        "class_b": str(names[b]),
                        "mean_similarity": float(block.mean()),
                        "fraction_zero": float(np.mean(block == 0)),
                    }
                )
    files = [write_csv(rows, config.out / "rpf_kernel.csv")]
    files += _figure(K, y, names, config)
    pairs = [{**r, "pair": f"{r['class_a']}-{r['class_b']}"} for r in rows]
    summary = "mean similarity by class pair (diagonal blocks exclude i = j)\n" + format_table(
        pairs, ["pair"], "kernel", "mean_similarity"
    )
    return ExperimentResult("rpf-kernel", rows, summary, files)


def _figure(K: dict[str, np.ndarray], y: np.ndarray, names: list, config) -> list:
    try:
        from geoforest.plotting import pyplot
    except ImportError:  # pragma: no cover - plotting is an extra
        return []
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    edges = np.flatnonzero(np.diff(y)) + 0.5
    for ax, (name, M) in zip(axes, K.items(), strict=True):
        im = ax.imshow(M, cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
        for e in edges:
            ax.axhline(e, color="white", linewidth=0.6)
            ax.axvline(e, color="white", linewidth=0.6)
        ax.set_title(f"iris, {name}")
        ax.set_xlabel("point (ordered by class: " + ", ".join(map(str, names)) + ")")
    fig.colorbar(im, ax=axes, shrink=0.8, label="similarity")
    path = config.out / "rpf_kernel.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]
