"""Does MORF earn its place on real images?  MORF against SPORF and a random forest.

Issue 31, item 5: on the manifold forests paper's simulations MORF is far
ahead; on real images it was within split noise of SPORF.  This study measures
it on the two real image sets of the selection side, MNIST 3 vs 5
(:func:`geoforest.datasets.load_mnist35`) and mnist10 (the clustering suite's
2,000 digits, 28 x 28), with MORF's patch range, candidate count and splitter
varied, to see whether any setting separates it from SPORF.

Protocol: stratified 50/50 splits (seeds 0-4), 100 trees, one thread; test
accuracy mean and standard error over the splits; the difference to SPORF per
split, called a win/loss only beyond two standard errors.

Run: ``OMP_NUM_THREADS=1 nice python studies/morf_real_images.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

import geoforest as gf
from geoforest_experiments.clustering_suite import load_suite_data

#: name -> estimator factory(seed); MORF settings around the default.
METHODS = {
    "SPORF": lambda s: gf.ObliqueForestClassifier(n_jobs=1, random_state=s),
    "RF": lambda s: RandomForestClassifier(n_jobs=1, random_state=s),
    "MORF 1-4": lambda s: gf.ManifoldForestClassifier((28, 28), n_jobs=1, random_state=s),
    "MORF 1-8": lambda s: gf.ManifoldForestClassifier(
        (28, 28), max_patch_shape=8, n_jobs=1, random_state=s
    ),
    "MORF 1-4 x100": lambda s: gf.ManifoldForestClassifier(
        (28, 28), max_features=100, n_jobs=1, random_state=s
    ),
    "MORF 1-4 random": lambda s: gf.ManifoldForestClassifier(
        (28, 28), splitter="random", n_jobs=1, random_state=s
    ),
}


def load(name: str):
    if name == "mnist35":
        return gf.datasets.load_mnist35(n_per_class=500, return_X_y=True, random_state=0)
    X, y, _ = load_suite_data("mnist10", max_n=2000)
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 splits, 20 trees")
    args = parser.parse_args()
    n_splits = 2 if args.quick else 5
    print(f"{'set':<9}{'method':<17}{'accuracy':>10}{'se':>8}{'vs SPORF':>10}{'fit s':>8}")
    for name in ("mnist35", "mnist10"):
        X, y = load(name)
        acc: dict[str, list[float]] = {m: [] for m in METHODS}
        secs: dict[str, list[float]] = {m: [] for m in METHODS}
        for seed in range(n_splits):
            tr, te = train_test_split(
                np.arange(len(y)), test_size=0.5, random_state=seed, stratify=y
            )
            for method, make in METHODS.items():
                est = make(seed)
                if args.quick:
                    est.set_params(n_estimators=20)
                t0 = time.perf_counter()
                est.fit(X[tr], y[tr])
                secs[method].append(time.perf_counter() - t0)
                acc[method].append(float(np.mean(est.predict(X[te]) == y[te])))
        base = np.array(acc["SPORF"])
        for method in METHODS:
            a = np.array(acc[method])
            diff = a - base
            se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
            call = "tie" if abs(diff.mean()) <= 2 * se else ("win" if diff.mean() > 0 else "loss")
            se_a = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0
            print(
                f"{name:<9}{method:<17}{a.mean():>10.4f}{se_a:>8.4f}"
                f"{call if method != 'SPORF' else '':>10}{np.mean(secs[method]):>8.2f}"
            )


if __name__ == "__main__":
    main()
