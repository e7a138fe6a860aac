"""The papers' experiments, one module each, run by ``geoforest experiment NAME``.

Each module has a ``run(config) -> ExperimentResult`` function that writes a
tidy CSV and PNG figures into ``config.out``; :func:`run_experiment` times it,
writes a JSON record of the run, publishes the files atomically and prints the
summary table.
"""

from __future__ import annotations

from ._runner import ExperimentConfig, ExperimentResult, run_staged

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
        "precision@k (50; 30 with --quick) vs noise dimensions, URerF vs baselines (Fig. 4/6)",
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
    "neighbours": (
        "neighbours",
        "k-NN quality of forest vs Euclidean and other neighbours: real data (+noise), simulations",
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
    "supervised": (
        "supervised",
        "SPORF classifiers and regressors vs scikit-learn RF / ExtraTrees / HistGB on real data",
    ),
}


def run_experiment(
    name: str, config: ExperimentConfig, *, overwrite: bool = True
) -> ExperimentResult:
    """Run one experiment, write its files and a JSON record, print its summary.

    The files appear in ``config.out`` whole or not at all
    (:func:`~geoforest_experiments._runner.run_staged`): an interrupted or
    failed run leaves an earlier complete run as it was.

    Parameters
    ----------
    name : str
        A key of :data:`EXPERIMENTS`.
    config : ExperimentConfig
        Output folder, size, threads, seed, progress.
    overwrite : bool, default=True
        Replace a complete earlier run of ``name`` in ``config.out``, all its
        files (the command line refuses unless ``--overwrite`` is given).

    Returns
    -------
    ExperimentResult
    """
    return run_staged(name, config, overwrite=overwrite)
