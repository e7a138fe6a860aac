"""Fit and predict time of MORF and SPORF against scikit-learn's random forest.

What is measured
----------------
Wall-clock ``fit`` and ``predict`` time of

* ``gf.ManifoldForestClassifier`` (MORF, patches 1-4 x 1-4 on the 28 x 28 grid),
* ``gf.ObliqueForestClassifier`` (SPORF, 1.5 nonzeros per projection),
* ``gf.ObliqueForestClassifier(projection="axis")`` (Breiman's forest on
  geoforest's engine), and
* ``sklearn.ensemble.RandomForestClassifier``,

at equal settings: the same ``n_estimators``, 28 candidates per node
(``max_features="sqrt"`` of 784 for all four), ``bootstrap=True`` with
``n_samples`` rows, unlimited depth, ``min_samples_split=2``,
``min_samples_leaf=1`` and the same ``n_jobs``.  Data: the bars simulation
(``gf.datasets.make_bars``) and MNIST 3 vs 5 (``gf.datasets.load_mnist35``,
training on the first ``n`` images of a shuffled copy, predicting the rest).

Numba is warmed up with an untimed small fit.  Each configuration is timed
``--repeats`` times, methods interleaved; the table shows median seconds and
the ratio to scikit-learn (``<= 1`` means geoforest is faster).

How to run
----------
From the repository root::

    python benchmarks/bench_morf.py                # bars n = 200, 2,000; MNIST n = 200, 800
    python benchmarks/bench_morf.py --quick        # smoke run
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numba
import numpy as np
import sklearn
from sklearn.ensemble import RandomForestClassifier

import geoforest as gf

METHODS = ("MORF", "SPORF", "RF (geoforest)", "RF (sklearn)")


def make(method: str, n_trees: int, n_jobs: int | None, seed: int):
    if method == "MORF":
        return gf.ManifoldForestClassifier(
            image_shape=(28, 28), max_patch_shape=(4, 4), n_estimators=n_trees,
            n_jobs=n_jobs, random_state=seed,
        )  # fmt: skip
    if method == "SPORF":
        return gf.ObliqueForestClassifier(n_estimators=n_trees, n_jobs=n_jobs, random_state=seed)
    if method == "RF (geoforest)":
        return gf.ObliqueForestClassifier(
            projection="axis", n_estimators=n_trees, n_jobs=n_jobs, random_state=seed
        )
    return RandomForestClassifier(n_estimators=n_trees, n_jobs=n_jobs, random_state=seed)


def datasets_for(sizes_bars, sizes_mnist, n_test_bars):
    for n in sizes_bars:
        X, y = gf.datasets.make_bars(n, random_state=0)
        Xt, yt = gf.datasets.make_bars(n_test_bars, random_state=1)
        yield "bars", n, X, y, Xt, yt
    X_all, y_all = gf.datasets.load_mnist35(return_X_y=True)
    perm = np.random.RandomState(0).permutation(len(y_all))
    X_all, y_all = X_all[perm], y_all[perm]
    for n in sizes_mnist:
        yield "mnist35", n, X_all[:n], y_all[:n], X_all[n:], y_all[n:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bars", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--mnist", type=int, nargs="+", default=[200, 800])
    parser.add_argument("--n-test", type=int, default=10_000, help="bars test samples")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.bars, args.mnist, args.n_test, args.trees, args.repeats = [200], [200], 1000, 20, 1
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
        f"scikit-learn {sklearn.__version__}, geoforest {gf.__version__}, "
        f"cpus {os.cpu_count()}, n_jobs {args.n_jobs}, trees {args.trees}, "
        f"repeats {args.repeats}"
    )
    # Warm up numba (classification task, patch and sparse projections).
    Xw, yw = gf.datasets.make_bars(40, random_state=0)
    for m in METHODS[:3]:
        make(m, 2, 1, 0).fit(Xw, yw).predict(Xw)
    header = (
        f"{'data':<8} {'n':>5} {'method':<15} {'fit s':>8} {'predict s':>10} "
        f"{'fit/sk':>7} {'pred/sk':>8} {'error':>7} {'leaves/tree':>12}"
    )
    print(header)
    for name, n, X, y, Xt, yt in datasets_for(args.bars, args.mnist, args.n_test):
        fit_t: dict[str, list[float]] = {m: [] for m in METHODS}
        pred_t: dict[str, list[float]] = {m: [] for m in METHODS}
        err: dict[str, float] = {}
        leaves: dict[str, float] = {}
        for rep in range(args.repeats):
            order = METHODS if rep % 2 == 0 else METHODS[::-1]
            for m in order:
                est = make(m, args.trees, args.n_jobs, rep)
                t0 = time.perf_counter()
                est.fit(X, y)
                t1 = time.perf_counter()
                pred = est.predict(Xt)
                t2 = time.perf_counter()
                fit_t[m].append(t1 - t0)
                pred_t[m].append(t2 - t1)
                err[m] = float(np.mean(pred != yt))
                if m == "RF (sklearn)":
                    leaves[m] = float(np.mean([e.get_n_leaves() for e in est.estimators_]))
                else:
                    leaves[m] = float(np.mean([t.n_leaves for t in est.trees_]))
        sk_fit = statistics.median(fit_t["RF (sklearn)"])
        sk_pred = statistics.median(pred_t["RF (sklearn)"])
        for m in METHODS:
            f = statistics.median(fit_t[m])
            p = statistics.median(pred_t[m])
            print(
                f"{name:<8} {n:>5} {m:<15} {f:>8.3f} {p:>10.3f} {f / sk_fit:>7.2f} "
                f"{p / sk_pred:>8.2f} {err[m]:>7.4f} {leaves[m]:>12.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
