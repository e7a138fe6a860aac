"""rpfCluster with K given against scikit-learn's spectral clustering, side by side, per seed.

What is measured
----------------
On ``make_blobs(n, n_features=10, centers=5, random_state=0)`` the fit time of

* ``ForestSpectralClustering(n_clusters=5, random_state=s, affinity="kernel")`` (its defaults: a
  200-tree ``RandomProjectionForest``, beta_1 and beta_2 chosen without labels,
  the candidates compared on a 1,000-point subset above 1,000 points), and
* scikit-learn's ``SpectralClustering(n_clusters=5,
  affinity="nearest_neighbors", random_state=s)``,

for each seed ``s``, the two fits taking turns (which one goes first
alternates with the seed, so machine noise hits both).  Both estimators are
fitted once on 2,000 points before anything is timed, so numba's kernels are
compiled and cached code is loaded.  The table shows each seed's times, the
ratio geoforest / scikit-learn (at or below 1.0 geoforest is faster) and
both accuracies against the blobs' labels (best cluster-to-blob matching);
the last line of each size gives the median ratio.  The ratio, not the
absolute times, is the figure to compare across runs: on a shared 2-core
machine both estimators slow down under load, not by the same factor.

How to run
----------
::

    python benchmarks/bench_spectral_small.py                    # 2,000 (5 seeds), 19,000 (2)
    python benchmarks/bench_spectral_small.py --sizes 2000 --seeds 10
    python benchmarks/bench_spectral_small.py --sizes 2000 5000 --large-seeds 3

``--n-jobs`` is passed to both estimators (default: their default, ``None``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings


def _fit_time(make, X) -> tuple[float, object]:
    model = make()
    t = time.perf_counter()
    model.fit(X)
    return time.perf_counter() - t, model.labels_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 19000])
    parser.add_argument("--seeds", type=int, default=5, help="seeds at n <= 5,000")
    parser.add_argument("--large-seeds", type=int, default=2, help="seeds above 5,000 points")
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()

    import numpy as np
    import sklearn
    from sklearn.cluster import SpectralClustering
    from sklearn.datasets import make_blobs

    import geoforest as gf
    from geoforest.metrics import clustering_accuracy

    warnings.simplefilter("ignore")  # sklearn: "Graph is not fully connected"

    def ours(seed):
        return lambda: gf.ForestSpectralClustering(
            5, random_state=seed, n_jobs=args.n_jobs, affinity="kernel"
        )

    def theirs(seed):
        return lambda: SpectralClustering(
            5, affinity="nearest_neighbors", random_state=seed, n_jobs=args.n_jobs
        )

    print(f"geoforest {gf.__version__}, scikit-learn {sklearn.__version__}, numpy {np.__version__}")
    print(f"n_jobs={args.n_jobs}, load average {os.getloadavg()[0]:.2f} at the start")
    X, _ = make_blobs(2000, n_features=10, centers=5, random_state=0)
    for make in (ours(0), theirs(0)):  # warm-up: compiled kernels, imports
        _fit_time(make, X)
    print(f"{'n':>6} {'seed':>4} | {'geoforest s':>11} {'sklearn s':>9} {'ratio':>6} | "
          f"{'gf acc':>6} {'sk acc':>6}")  # fmt: skip
    for n in args.sizes:
        X, y = make_blobs(n, n_features=10, centers=5, random_state=0)
        ratios = []
        for seed in range(args.seeds if n <= 5000 else args.large_seeds):
            pair = [("gf", ours(seed)), ("sk", theirs(seed))]
            if seed % 2:
                pair.reverse()
            res = {name: _fit_time(make, X) for name, make in pair}
            (t_gf, lab_gf), (t_sk, lab_sk) = res["gf"], res["sk"]
            ratios.append(t_gf / t_sk)
            print(
                f"{n:>6} {seed:>4} | {t_gf:11.3f} {t_sk:9.3f} {t_gf / t_sk:6.2f} | "
                f"{clustering_accuracy(y, lab_gf):6.3f} {clustering_accuracy(y, lab_sk):6.3f}",
                flush=True,
            )
        print(f"{n:>6} median ratio {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f})", flush=True)  # fmt: skip
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
