"""Time and peak memory of geoforest's all-points ``kneighbors`` at scale.

What is measured
----------------
On ``X ~ N(0, 1)`` (float32, ``N`` rows, ``p`` features; default N=200,000, p=10):

* **geoforest**: ``gf.UnsupervisedForest(n_estimators=100, n_jobs=2, random_state=0)``
  with otherwise default parameters; wall-clock time of ``fit(X)`` and of
  ``kneighbors(n_neighbors=50)`` (the neighbours of every training point,
  excluding itself), and the peak resident memory of the process.
* **scikit-learn, for reference**: ``NearestNeighbors(n_neighbors=50,
  algorithm="kd_tree", n_jobs=2)`` (Euclidean); time of ``fit(X)`` and of
  ``kneighbors(X)``, and peak memory.

Goal: ``kneighbors(k=50)`` at N=200,000, p=10, 100 trees under 4 GB peak
(4e9 bytes of total peak RSS of the geoforest process).

How memory is measured
----------------------
Each workload runs in its own child process (this script re-run through
``subprocess`` with ``--child KIND``), so that one workload's allocations cannot
hide or inflate another's.  The child reads its own peak RSS (``VmHWM`` in
``/proc/self/status``, i.e. the high-water mark of its address space, falling
back to ``getrusage(RUSAGE_SELF).ru_maxrss``) just before exiting and reports it
to the parent.  ``getrusage(RUSAGE_CHILDREN)`` in the parent is not used per
workload because it is the maximum over *all* children waited for so far.

Baselines are children that only import the library plus numpy and allocate
``X`` (the geoforest baseline imports ``geoforest``; the scikit-learn one imports
``sklearn.neighbors``).  The table shows each workload's total peak and its peak
minus its baseline.  The geoforest workload first warms numba up with a tiny
fit + kneighbors (not timed); a third baseline row shows the memory of that
warm-up alone (numba's cached kernels loaded), which is part of the geoforest
peak.  Before any measured child, an unmeasured ``numba-cache`` child runs the
same warm-up so that numba's on-disk cache is fresh: otherwise the first child
after a change to geoforest's source would pay (in time and memory) for the
LLVM compilation that later children skip.

How to run
----------
From the repository root::

    python3 benchmarks/bench_kneighbors.py               # N=200,000, 100 trees
    python3 benchmarks/bench_kneighbors.py --n 50000
    python3 benchmarks/bench_kneighbors.py --quick       # smoke run: N=5,000, 10 trees

See ``python3 benchmarks/bench_kneighbors.py --help`` for all flags.  Linux only
for exact memory figures (``/proc``); elsewhere ``ru_maxrss`` is used.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402
from _memory import peak_rss_bytes  # noqa: E402

SEED = 0
GOAL_BYTES = 4_000_000_000
GOAL_SETTINGS = {"n": 200_000, "n_features": 10, "n_estimators": 100, "n_neighbors": 50}
CHILD_KINDS = (
    "numba-cache",  # unmeasured: refreshes numba's on-disk cache
    "gf-baseline",
    "gf-warm-baseline",
    "geoforest",
    "sk-baseline",
    "sklearn",
)


# ---------------------------------------------------------------- child side
def make_X(n: int, n_features: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(SEED)
    return rng.standard_normal((n, n_features), dtype=np.float32)


def gf_warm_up(n_features: int, n_neighbors: int, n_jobs: int) -> None:
    """Compile / load geoforest's numba kernels with a tiny fit + kneighbors."""
    import geoforest as gf

    X = make_X(max(500, 2 * n_neighbors + 2), n_features)
    forest = gf.UnsupervisedForest(n_estimators=2, n_jobs=n_jobs, random_state=SEED).fit(X)
    forest.kneighbors(n_neighbors=n_neighbors)


def run_child(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run one workload in this (child) process and return its measurements."""
    out: dict[str, Any] = {"kind": kind}
    # numpy itself is imported by make_X below
    if kind.startswith("gf") or kind == "geoforest":
        import geoforest as gf
    else:
        from sklearn.neighbors import NearestNeighbors

    if kind in ("numba-cache", "gf-warm-baseline", "geoforest"):
        gf_warm_up(args.n_features, args.n_neighbors, args.n_jobs)
    X = make_X(args.n, args.n_features)

    if kind == "geoforest":
        forest = gf.UnsupervisedForest(
            n_estimators=args.n_estimators, n_jobs=args.n_jobs, random_state=SEED
        )
        t0 = time.perf_counter()
        forest.fit(X)
        t1 = time.perf_counter()
        dist, ind = forest.kneighbors(n_neighbors=args.n_neighbors)
        t2 = time.perf_counter()
        out.update(fit_s=t1 - t0, kneighbors_s=t2 - t1)
        out["shape"] = list(ind.shape)
        out["leaves_per_tree"] = sum(t.n_leaves for t in forest.trees_) / len(forest.trees_)
        del dist, ind
    elif kind == "sklearn":
        nn = NearestNeighbors(n_neighbors=args.n_neighbors, algorithm="kd_tree", n_jobs=args.n_jobs)
        t0 = time.perf_counter()
        nn.fit(X)
        t1 = time.perf_counter()
        dist, ind = nn.kneighbors(X)
        t2 = time.perf_counter()
        out.update(fit_s=t1 - t0, kneighbors_s=t2 - t1)
        out["shape"] = list(ind.shape)
        del dist, ind
    out["peak_rss_bytes"] = peak_rss_bytes()
    return out


# --------------------------------------------------------------- parent side
def spawn(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run this script with ``--child KIND`` and parse the result it prints."""
    flags = {
        "child": kind,
        "n": args.n,
        "n-features": args.n_features,
        "n-estimators": args.n_estimators,
        "n-neighbors": args.n_neighbors,
        "n-jobs": args.n_jobs,
    }
    return spawn_child(__file__, flags, what=f"child {kind!r}")


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f}"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_table(results: dict[str, dict[str, Any]]) -> None:
    gf_base = results["gf-baseline"]["peak_rss_bytes"]
    sk_base = results.get("sk-baseline", {}).get("peak_rss_bytes")
    rows: list[tuple[str, dict[str, Any], int | None]] = [
        ("baseline: import geoforest + X", results["gf-baseline"], None),
        ("baseline + numba warm-up", results["gf-warm-baseline"], gf_base),
        ("geoforest fit + kneighbors", results["geoforest"], gf_base),
    ]
    if "sklearn" in results:
        rows += [
            ("baseline: import sklearn + X", results["sk-baseline"], None),
            ("sklearn KD-tree fit + kneighbors", results["sklearn"], sk_base),
        ]
    header = (
        f"{'workload':<34}  {'fit s':>7}  {'kneigh s':>8}  {'total s':>7}  "
        f"{'peak MiB':>9}  {'peak-base MiB':>13}"
    )
    print(header)
    print("-" * len(header))
    for label, res, base in rows:
        fit_s = res.get("fit_s")
        kn_s = res.get("kneighbors_s")
        total = None if fit_s is None else fit_s + kn_s
        peak = res["peak_rss_bytes"]
        delta = "-" if base is None else mib(peak - base)
        print(
            f"{label:<34}  {seconds(fit_s):>7}  {seconds(kn_s):>8}  {seconds(total):>7}  "
            f"{mib(peak):>9}  {delta:>13}"
        )


def report_goal(args: argparse.Namespace, peak: int) -> None:
    print(
        "\nGoal: kneighbors(k=50) at N=200,000, p=10, 100 trees under 4 GB peak "
        f"(total peak RSS < {GOAL_BYTES:.1e} bytes = {mib(GOAL_BYTES)} MiB)"
    )
    current = {
        "n": args.n,
        "n_features": args.n_features,
        "n_estimators": args.n_estimators,
        "n_neighbors": args.n_neighbors,
    }
    if current != GOAL_SETTINGS:
        print(
            f"  not assessed: this run used N={args.n:,}, p={args.n_features}, "
            f"{args.n_estimators} trees, k={args.n_neighbors} "
            f"(geoforest total peak {mib(peak)} MiB)"
        )
        return
    verdict = "MET" if peak < GOAL_BYTES else "NOT MET"
    print(f"  {verdict}: geoforest total peak {mib(peak)} MiB")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time and peak memory of geoforest fit + kneighbors(k=50) for all points, "
        "with scikit-learn's KD-tree NearestNeighbors for reference."
    )
    parser.add_argument("--n", type=int, default=200_000, help="number of points N")
    parser.add_argument("--n-features", type=int, default=10, help="p")
    parser.add_argument("--n-estimators", type=int, default=100, help="number of trees")
    parser.add_argument("--n-neighbors", type=int, default=50, help="k")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--no-sklearn", action="store_true", help="skip the scikit-learn reference")
    parser.add_argument("--quick", action="store_true", help="smoke run: N=5,000, 10 trees")
    parser.add_argument("--child", choices=CHILD_KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.n_estimators = 5_000, 10
    if args.n_neighbors >= args.n:
        parser.error("--n-neighbors must be smaller than --n")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        result = run_child(args.child, args)
        report(result)
        return 0

    print(f"python {platform.python_version()}  cpus {os.cpu_count()}  platform {sys.platform}")
    print(
        f"N={args.n:,}  p={args.n_features}  n_estimators={args.n_estimators}  "
        f"k={args.n_neighbors}  n_jobs={args.n_jobs}  "
        "(geoforest: default UnsupervisedForest parameters otherwise)"
    )
    kinds = [k for k in CHILD_KINDS if not (args.no_sklearn and k.startswith("sk"))]
    results: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        print(f"  running child {kind!r} ...", end=" ", flush=True)
        results[kind] = spawn(kind, args)
        print(f"done in {results[kind]['wall_s']:.1f} s", flush=True)

    gf_res = results["geoforest"]
    print(
        f"\ngeoforest: neighbours array {tuple(gf_res['shape'])}, "
        f"mean leaves per tree {gf_res['leaves_per_tree']:,.0f}\n"
    )
    print_table(results)
    report_goal(args, gf_res["peak_rss_bytes"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
