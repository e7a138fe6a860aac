"""Fit time of geoforest's two-means forests against scikit-learn's random forest.

What is measured
----------------
Wall-clock time of ``fit`` for

* ``gf.UnsupervisedForest(projection="axis", criterion="twomeans")`` on ``X``
  (``--projection axis``, the default), or
  ``gf.UnsupervisedForest(projection="sparse", criterion="twomeans",
  feature_combinations=1.5, max_redraws=0)`` (``--projection sparse``: sparse
  oblique candidates, URerF's projections), and
* ``sklearn.ensemble.RandomForestRegressor`` on ``X`` with a random target
  ``y ~ N(0, 1)`` (squared-error splits, the supervised analogue of two-means),

with equal settings: the same ``n_estimators``, ``max_features`` (an int),
``min_samples_split``, ``min_samples_leaf=1``, unlimited depth, ``bootstrap=True``
with the same number of rows per tree (``max_samples``, resolved to an int and
passed to both) and the same ``n_jobs`` (both libraries grow trees in threads).
``X ~ N(0, 1)`` is float32 with ``p`` features (10 by default).

Equal work with ``--projection sparse``: both libraries evaluate the same
number of candidates per node (``max_features``: sparse projections for
geoforest, single features for scikit-learn), sort each candidate's values and
scan every cut with running sums, and grow trees of the same size (same
``min_samples_split``, ``min_samples_leaf``, rows per tree; the leaves column
checks it).  geoforest additionally forms each projection (on average
``feature_combinations`` = 1.5 features per candidate), which is the price of
obliqueness; ``max_redraws=0`` keeps it to one batch of candidates per node.

Numba is warmed up first with a tiny fit that is not timed.  For each ``N`` the
two fits alternate ``--repeats`` times (the order flips every repeat) so that
machine noise hits both; the table reports the median times and the ratio
``geoforest / sklearn`` (``<= 1.0`` means geoforest is faster).  As a sanity
check it also prints the mean (min-max) number of leaves per tree of both
forests, which should be comparable: with ``min_samples_split=2`` both grow
trees down to (nearly) one distinct row per leaf.

How to run
----------
From the repository root::

    python3 benchmarks/bench_fit.py                     # N = 10,000 and 100,000
    python3 benchmarks/bench_fit.py --sizes 10000 --repeats 3
    python3 benchmarks/bench_fit.py --quick             # smoke run: N=2,000, 10 trees
    python3 benchmarks/bench_fit.py --projection sparse # sparse oblique vs sklearn RF

See ``python3 benchmarks/bench_fit.py --help`` for all flags.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

import numba
import numpy as np
import sklearn
from sklearn.ensemble import RandomForestRegressor

import geoforest as gf

N_FEATURES_DEFAULT = 10
SEED = 0


@dataclass
class Settings:
    """Forest settings shared by both libraries."""

    n_estimators: int
    max_features: int
    min_samples_split: int
    max_samples: str | None
    n_jobs: int
    projection: str = "axis"
    feature_combinations: float = 1.5


@dataclass
class SizeResult:
    """Timings and tree sizes collected for one ``N``."""

    n_samples: int
    rows_per_tree: int
    gf_times: list[float] = field(default_factory=list)
    sk_times: list[float] = field(default_factory=list)
    gf_leaves: list[int] = field(default_factory=list)
    sk_leaves: list[int] = field(default_factory=list)


def resolve_rows_per_tree(max_samples: str | None, n_samples: int) -> int:
    """Rows drawn per tree: ``None`` -> ``N``; ``"0.5"`` -> a fraction; ``"5000"`` -> an int."""
    if max_samples is None:
        return n_samples
    if any(c in max_samples for c in ".eE"):
        fraction = float(max_samples)
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"a fractional --max-samples must be in (0, 1], got {fraction}")
        return max(1, round(fraction * n_samples))
    rows = int(max_samples)
    if not 1 <= rows <= n_samples:
        raise ValueError(f"--max-samples={rows} must be between 1 and N={n_samples}")
    return rows


def make_data(n_samples: int, n_features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``X ~ N(0, 1)`` as float32 and a random regression target ``y ~ N(0, 1)``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features), dtype=np.float32)
    y = rng.standard_normal(n_samples)
    return X, y


def make_geoforest(s: Settings, rows_per_tree: int) -> gf.UnsupervisedForest:
    extra = {}
    if s.projection == "sparse":
        extra = {"feature_combinations": s.feature_combinations, "max_redraws": 0}
    return gf.UnsupervisedForest(
        n_estimators=s.n_estimators,
        projection=s.projection,
        criterion="twomeans",
        **extra,
        max_features=s.max_features,
        min_samples_split=s.min_samples_split,
        min_samples_leaf=1,
        max_depth=None,
        max_samples=rows_per_tree,
        bootstrap=True,
        n_jobs=s.n_jobs,
        random_state=SEED,
    )


def make_sklearn(s: Settings, rows_per_tree: int) -> RandomForestRegressor:
    return RandomForestRegressor(
        n_estimators=s.n_estimators,
        criterion="squared_error",
        max_features=s.max_features,
        min_samples_split=s.min_samples_split,
        min_samples_leaf=1,
        max_depth=None,
        max_samples=rows_per_tree,
        bootstrap=True,
        n_jobs=s.n_jobs,
        random_state=SEED,
    )


def time_geoforest(s: Settings, X: np.ndarray, rows_per_tree: int) -> tuple[float, list[int]]:
    """Seconds for one geoforest fit, and the number of leaves of each tree."""
    model = make_geoforest(s, rows_per_tree)
    gc.collect()
    t0 = time.perf_counter()
    model.fit(X)
    elapsed = time.perf_counter() - t0
    leaves = [tree.n_leaves for tree in model.trees_]
    del model
    return elapsed, leaves


def time_sklearn(
    s: Settings, X: np.ndarray, y: np.ndarray, rows_per_tree: int
) -> tuple[float, list[int]]:
    """Seconds for one scikit-learn fit, and the number of leaves of each tree."""
    model = make_sklearn(s, rows_per_tree)
    gc.collect()
    t0 = time.perf_counter()
    model.fit(X, y)
    elapsed = time.perf_counter() - t0
    leaves = [int(est.tree_.n_leaves) for est in model.estimators_]
    del model
    return elapsed, leaves


def warm_up(s: Settings, n_features: int) -> None:
    """Compile / load numba kernels and import scikit-learn's tree code (not timed)."""
    X, y = make_data(300, n_features, SEED + 1)
    tiny = Settings(
        2,
        min(s.max_features, n_features),
        s.min_samples_split,
        None,
        s.n_jobs,
        s.projection,
        s.feature_combinations,
    )
    make_geoforest(tiny, 300).fit(X)
    make_sklearn(tiny, 300).fit(X, y)


def run_size(s: Settings, n_samples: int, n_features: int, repeats: int) -> SizeResult:
    X, y = make_data(n_samples, n_features, SEED)
    result = SizeResult(n_samples, resolve_rows_per_tree(s.max_samples, n_samples))
    for r in range(repeats):
        order = ("gf", "sk") if r % 2 == 0 else ("sk", "gf")
        for lib in order:
            if lib == "gf":
                t, leaves = time_geoforest(s, X, result.rows_per_tree)
                result.gf_times.append(t)
                result.gf_leaves = leaves
            else:
                t, leaves = time_sklearn(s, X, y, result.rows_per_tree)
                result.sk_times.append(t)
                result.sk_leaves = leaves
        print(
            f"  N={n_samples:>9,}  repeat {r + 1}/{repeats}: "
            f"geoforest {result.gf_times[-1]:8.3f} s   sklearn {result.sk_times[-1]:8.3f} s",
            flush=True,
        )
    return result


def leaves_summary(leaves: list[int]) -> str:
    return f"{statistics.fmean(leaves):,.0f} ({min(leaves):,}-{max(leaves):,})"


def print_table(results: list[SizeResult]) -> None:
    header = (
        f"{'N':>9}  {'rows/tree':>9}  {'geoforest s':>11}  {'sklearn s':>9}  "
        f"{'gf/sk':>6}  {'gf leaves/tree (min-max)':>26}  {'sk leaves/tree (min-max)':>26}"
    )
    print(header)
    print("-" * len(header))
    for res in results:
        gf_med = statistics.median(res.gf_times)
        sk_med = statistics.median(res.sk_times)
        print(
            f"{res.n_samples:>9,}  {res.rows_per_tree:>9,}  {gf_med:>11.3f}  {sk_med:>9.3f}  "
            f"{gf_med / sk_med:>6.2f}  {leaves_summary(res.gf_leaves):>26}  "
            f"{leaves_summary(res.sk_leaves):>26}"
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(
            "Fit time of geoforest UnsupervisedForest(projection='axis' or 'sparse', "
            "criterion='twomeans') "
            "vs scikit-learn RandomForestRegressor on a random target."
        )
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10_000, 100_000], help="values of N"
    )
    parser.add_argument("--n-features", type=int, default=N_FEATURES_DEFAULT, help="p")
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-features", type=int, default=3)
    parser.add_argument("--min-samples-split", type=int, default=2)
    parser.add_argument(
        "--max-samples",
        default=None,
        help="rows per tree, drawn with replacement: an int, a fraction such as 0.5, "
        "or omitted for N",
    )
    parser.add_argument(
        "--projection",
        choices=("axis", "sparse"),
        default="axis",
        help="geoforest's candidates: single features, or sparse oblique projections",
    )
    parser.add_argument(
        "--feature-combinations",
        type=float,
        default=1.5,
        help="mean nonzeros per sparse projection (--projection sparse)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: N=2,000, 10 trees, 1 repeat"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.n_estimators, args.repeats = [2_000], 10, 1
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.max_features > args.n_features and args.projection == "axis":
        parser.error("--max-features cannot exceed --n-features")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    s = Settings(
        args.n_estimators,
        args.max_features,
        args.min_samples_split,
        args.max_samples,
        args.n_jobs,
        args.projection,
        args.feature_combinations,
    )
    print(
        f"python {platform.python_version()}  geoforest {gf.__version__}  "
        f"scikit-learn {sklearn.__version__}  numpy {np.__version__}  numba {numba.__version__}  "
        f"cpus {os.cpu_count()}"
    )
    print(
        f"geoforest projection={s.projection}"
        + (
            f" (feature_combinations={s.feature_combinations}, max_redraws=0)"
            if s.projection == "sparse"
            else ""
        )
        + "  criterion=twomeans\n"
        f"p={args.n_features}  n_estimators={s.n_estimators}  max_features={s.max_features}  "
        f"min_samples_split={s.min_samples_split}  min_samples_leaf=1  bootstrap=True  "
        f"max_samples={s.max_samples or 'N'}  n_jobs={s.n_jobs}  repeats={args.repeats}"
    )
    t0 = time.perf_counter()
    warm_up(s, args.n_features)
    print(f"warm-up (not timed): {time.perf_counter() - t0:.1f} s", flush=True)

    results = [run_size(s, n, args.n_features, args.repeats) for n in args.sizes]
    print()
    print("median fit time; gf/sk <= 1.0 means geoforest is faster")
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
