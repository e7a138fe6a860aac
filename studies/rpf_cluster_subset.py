"""``geoforest experiment rpf-cluster`` with its full protocol on chosen data sets only.

The full experiment runs all eight data sets (about an hour and a half on 2
cores); this runs the same protocol (10 seeds, 200 trees, 100 k-means
restarts, seed 0) on the data sets named, so that the table can be built in
parts.  ::

    python studies/rpf_cluster_subset.py iris,wine,wdbc,heart docs/results/rpf-cluster
    python studies/rpf_cluster_subset.py magic /tmp/magic 3    # 3 seeds only
    python studies/rpf_cluster_subset.py segment /tmp/seg --selection unfragmented \\
        --methods rpfCluster                                      # one rule, one method

``--selection`` sets every ForestSpectralClustering's ``selection`` (default:
the estimator's default), ``--methods`` runs only the methods named (comma
separated, names as in ``rpf_cluster.METHODS``; the oracle and the consensus
columns need ``rpfCluster``), and ``--kernel-neighbors NAME=M`` sets a data
set's ``kernel_neighbors`` (MAGIC has 50 by default); ``--first-seed S`` runs
seeds S, S + 1, ... (to add seeds to an earlier run); ``--sweep-dir DIR``
saves the oracle's candidates per data set and seed for
``studies/rpf_rule_eval.py``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from geoforest_experiments import ExperimentConfig, rpf_cluster, run_experiment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", help="comma-separated names")
    parser.add_argument("out", type=Path)
    parser.add_argument("seeds", type=int, nargs="?", default=None)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first, first + 1, ...")
    parser.add_argument("--sweep-dir", type=Path, default=None, help="save every candidate")
    parser.add_argument(
        "--selection", choices=("consensus", "eigengap", "unfragmented", "stability")
    )
    parser.add_argument("--methods", default=None)
    parser.add_argument("--kernel-neighbors", action="append", default=[], metavar="NAME=M")
    args = parser.parse_args()
    names = tuple(args.datasets.split(","))
    unknown = set(names) - set(rpf_cluster.DATASETS_FULL)
    if unknown:
        raise SystemExit(f"unknown data sets {sorted(unknown)}; known: {rpf_cluster.DATASETS_FULL}")
    full = {**rpf_cluster.settings(False), "datasets": names, "selection": args.selection}
    full["sweep_dir"] = args.sweep_dir
    if args.seeds is not None:
        full["seeds"] = args.seeds
    if args.methods is not None:
        methods = tuple(m.strip() for m in args.methods.split(","))
        bad = set(methods) - set(rpf_cluster.METHODS)
        if bad:
            raise SystemExit(f"unknown methods {sorted(bad)}; known: {rpf_cluster.METHODS}")
        needs_model = {"rpfCluster (oracle)", "rpfCluster (consensus)"} & set(methods)
        if needs_model and "rpfCluster" not in methods:
            raise SystemExit(f"{sorted(needs_model)} need the rpfCluster method")
        full["methods"] = tuple(m for m in rpf_cluster.METHODS if m in methods)
    for item in args.kernel_neighbors:
        key, _, value = item.partition("=")
        full["kernel_neighbors"][key] = None if value in ("", "none") else int(value)
    rpf_cluster.settings = lambda quick: full
    config = ExperimentConfig(
        out=Path(args.out), n_jobs=1, seed=args.first_seed, show_progress=True
    )
    run_experiment("rpf-cluster", config)


if __name__ == "__main__":
    main()
