"""``geoforest experiment rpf-cluster`` with its full protocol on chosen data sets only.

The full experiment runs all eight data sets (about an hour and a half on 2
cores); this runs the same protocol (10 seeds, 200 trees, 100 k-means
restarts, seed 0) on the data sets named, so that the table can be built in
parts.  ::

    python benchmarks/rpf_cluster_subset.py iris,wine,wdbc,heart docs/results/rpf-cluster
    python benchmarks/rpf_cluster_subset.py magic /tmp/magic 3    # 3 seeds only
"""

from __future__ import annotations

import sys
from pathlib import Path

from geoforest.experiments import ExperimentConfig, rpf_cluster, run_experiment


def main() -> None:
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    names = tuple(sys.argv[1].split(","))
    unknown = set(names) - set(rpf_cluster.DATASETS_FULL)
    if unknown:
        raise SystemExit(f"unknown data sets {sorted(unknown)}; known: {rpf_cluster.DATASETS_FULL}")
    full = rpf_cluster.settings(False)
    if len(sys.argv) == 4:
        full["seeds"] = int(sys.argv[3])
    rpf_cluster.settings = lambda quick: {**full, "datasets": names}
    config = ExperimentConfig(out=Path(sys.argv[2]), n_jobs=2, seed=0, show_progress=True)
    run_experiment("rpf-cluster", config)


if __name__ == "__main__":
    main()
