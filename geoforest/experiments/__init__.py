"""The papers' experiments, one module each, run by ``geoforest experiment NAME``.

Each module has a ``run(config) -> ExperimentResult`` function that writes a
tidy CSV and PNG figures into ``config.out``; :func:`run_experiment` times it,
writes a JSON record of the run and prints the summary table.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

from scipy.sparse import SparseEfficiencyWarning

from ._runner import ExperimentConfig, ExperimentResult, Timer, write_record

__all__ = ["EXPERIMENTS", "ExperimentConfig", "ExperimentResult", "run_experiment"]

#: name -> (module, one-line description)
EXPERIMENTS: dict[str, tuple[str, str]] = {
    "criteria": (
        "criteria",
        "URF vs URerF x two-means / GMM / Fast-BIC: geodesic recall curves (URerF paper Fig. 2)",
    ),
    "hyperparameters": (
        "hyperparameters",
        "precision vs k for min_samples_split and max_features (URerF paper Fig. 3)",
    ),
    "noise-sweep": (
        "noise_sweep",
        "precision@50 vs noise dimensions, URerF vs baselines, raw and rescaled (Fig. 4/6)",
    ),
    "connectome": (
        "connectome",
        "Drosophila mushroom body: precision vs recall by cell type (URerF paper Fig. 5)",
    ),
    "rpf-kernel": (
        "rpf_kernel",
        "iris: Gaussian kernel vs rpf-kernel heatmaps (rpfCluster paper Fig. 3)",
    ),
    "rpf-cluster": (
        "rpf_cluster",
        "rpfCluster vs k-means and spectral clustering on real data (rpfCluster paper)",
    ),
    "clustering-suite": (
        "clustering_suite",
        "label-free K on real data: geoforest clusterers vs k-means, HDBSCAN, UMAP+HDBSCAN, GMM",
    ),
    "llpd": (
        "llpd",
        "LLPD spectral clustering vs Euclidean spectral, HDBSCAN, DBSCAN on LDLN data by noise",
    ),
    "lund": (
        "lund",
        "LUND vs k-means, spectral, HDBSCAN; K estimate; spatial regularisation; active learning",
    ),
    "morf-simulations": (
        "morf_simulations",
        "MORF vs SPORF, RF and sklearn classifiers: error and times vs training size (MF Figs 1-2)",
    ),
    "morf-importance": (
        "morf_importance",
        "MNIST 3 vs 5 importance maps of MORF, SPORF and RF, with smoothness numbers (MF Fig. 3)",
    ),
}


def run_experiment(name: str, config: ExperimentConfig) -> ExperimentResult:
    """Run one experiment, write its files and a JSON record, print its summary.

    Parameters
    ----------
    name : str
        A key of :data:`EXPERIMENTS`.
    config : ExperimentConfig
        Output folder, size, threads, seed, progress.

    Returns
    -------
    ExperimentResult
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    module = importlib.import_module(f".{EXPERIMENTS[name][0]}", __name__)
    config.out = Path(config.out)
    config.out.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), Timer() as timer:
        # Isomap on disconnected neighbour graphs (noisy data) patches its graph
        # entry by entry; scipy warns on every edit.  Say it once, not thousands of times.
        warnings.simplefilter("ignore", SparseEfficiencyWarning)
        warnings.filterwarnings("once", message=".*connected components.*")
        result = module.run(config)
    result.seconds = timer.seconds
    record = write_record(result, config, config.out / f"{name}.json")
    result.files.append(record)
    print(f"\n{name}: {EXPERIMENTS[name][1]}\n")
    print(result.summary)
    print(f"\n{timer.seconds:.1f}s; wrote " + ", ".join(str(p) for p in result.files))
    return result
