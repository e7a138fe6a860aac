"""Scaling curves of geoforest: fit time, kneighbors time and peak memory against n and p.

What is measured
----------------
Data: the URerF helix (``geoforest.datasets.make_helix``, 3 signal features) with
``p - 3`` noise dimensions N(0, 70) (``add_noise_dims``), float32.  Two sweeps:

* against ``n`` (default 1,000 .. 100,000) at ``p = 13`` (10 noise dimensions);
* against ``p`` (default 10 .. 300; ``--p-grid ... 1000`` adds about five
  minutes) at ``n = 10,000``.

For every point, one fresh child process (this script re-run with ``--child``)
fits ``gf.UnsupervisedForest(n_estimators=100, n_jobs=N_JOBS, random_state=0)``
with its default parameters (sparse projections, Fast-BIC, ``max_features="sqrt"``,
half the rows per tree, ``min_samples_split=45``) after an untimed tiny fit that
loads numba's kernels, times ``fit`` and ``kneighbors(n_neighbors=20)`` (every
training point) and reports its own peak resident memory (``VmHWM``; see
``benchmarks/_memory.py``).  As the reference line, another child times
scikit-learn's ``RandomForestRegressor`` on a random N(0, 1) target with the
same number of trees, the same ``max_features`` (resolved to an int), the same
``min_samples_split`` and half the rows per tree (``bootstrap=True,
max_samples=0.5``; geoforest draws its half without replacement).  The two
children alternate per point, so the noise of a shared machine hits both.

Output: ``scaling.csv`` (one row per point and library) and ``scaling_n.png``,
``scaling_p.png`` (log-log panels: fit time, kneighbors time, peak memory)
under ``--out`` (default ``docs/results/scaling``).  The default grid runs in
about ten minutes on 2 shared cores (the n = 100,000 point alone takes four; the
recorded run with p = 1,000 added took 14; at large p, geoforest's
``max_redraws=8`` dominates its fit time).

How to run
----------
From the repository root::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 -u benchmarks/bench_scaling.py
    python3 benchmarks/bench_scaling.py --n-grid 1000 10000 --p-grid 10 100
    python3 benchmarks/bench_scaling.py --quick          # smoke run, written to /tmp

See ``python3 benchmarks/bench_scaling.py --help`` for all flags.  Needs
matplotlib.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402

SEED = 0
SIGNAL_DIMS = 3
FIELDS = ("sweep", "library", "n", "p", "fit_s", "kneighbors_s", "peak_mib", "leaves_per_tree")


def make_X(n: int, p: int) -> np.ndarray:
    """The helix with ``p - 3`` noise dimensions, float32."""
    from geoforest import datasets

    X, _ = datasets.make_helix(n, random_state=SEED)
    X = datasets.add_noise_dims(X, p - SIGNAL_DIMS, random_state=SEED)
    return np.ascontiguousarray(X, dtype=np.float32)


def run_child(kind: str, n: int, p: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one workload in this (child) process and return its measurements."""
    from _memory import peak_rss_bytes

    out: dict[str, Any] = {"library": kind, "n": n, "p": p}
    X = make_X(n, p)
    if kind == "geoforest":
        import geoforest as gf

        warm = gf.UnsupervisedForest(n_estimators=2, random_state=SEED).fit(X[:500])
        warm.kneighbors(n_neighbors=5)
        forest = gf.UnsupervisedForest(
            n_estimators=args.n_estimators, n_jobs=args.n_jobs, random_state=SEED
        )
        t0 = time.perf_counter()
        forest.fit(X)
        t1 = time.perf_counter()
        forest.kneighbors(n_neighbors=args.n_neighbors)
        t2 = time.perf_counter()
        out.update(fit_s=t1 - t0, kneighbors_s=t2 - t1)
        out["leaves_per_tree"] = float(np.mean([t.n_leaves for t in forest.trees_]))
        out["max_features"] = int(forest.n_projections_)
    else:
        from sklearn.ensemble import RandomForestRegressor

        y = np.random.default_rng(SEED).standard_normal(n)
        model = RandomForestRegressor(
            n_estimators=args.n_estimators,
            max_features=args.max_features,
            min_samples_split=45,
            max_samples=0.5,
            bootstrap=True,
            n_jobs=args.n_jobs,
            random_state=SEED,
        )
        t0 = time.perf_counter()
        model.fit(X, y)
        out["fit_s"] = time.perf_counter() - t0
        out["kneighbors_s"] = None
        out["leaves_per_tree"] = float(np.mean([e.tree_.n_leaves for e in model.estimators_]))
    out["peak_mib"] = peak_rss_bytes() / 2**20
    return out


def spawn(kind: str, n: int, p: int, args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """Run this script as a child for one workload and parse its result."""
    flags = {
        "child": kind,
        "child-n": n,
        "child-p": p,
        "n-estimators": args.n_estimators,
        "n-neighbors": args.n_neighbors,
        "n-jobs": args.n_jobs,
        "max-features": extra.get("max_features"),
    }
    return spawn_child(__file__, flags, what=f"child {kind} n={n} p={p}")


def run_point(sweep: str, n: int, p: int, args: argparse.Namespace, flip: bool) -> list[dict]:
    """geoforest and scikit-learn at one grid point (sklearn gets geoforest's max_features)."""
    rows: dict[str, dict[str, Any]] = {}
    order = ("sklearn", "geoforest") if flip else ("geoforest", "sklearn")
    max_features = max(1, int(np.ceil(np.sqrt(p))))
    for kind in order:
        if kind == "geoforest":
            rows[kind] = spawn(kind, n, p, args)
        else:
            rows[kind] = spawn(kind, n, p, args, max_features=max_features)
    gf_mf = rows["geoforest"].get("max_features")
    if gf_mf is not None and gf_mf != max_features:
        print(f"  note: geoforest used max_features={gf_mf}, sklearn {max_features}")
    g, s = rows["geoforest"], rows["sklearn"]
    print(
        f"  {sweep}  n={n:>7,}  p={p:>5}  geoforest fit {g['fit_s']:7.2f} s  "
        f"kneighbors {g['kneighbors_s']:7.2f} s  peak {g['peak_mib']:7.0f} MiB  |  "
        f"sklearn fit {s['fit_s']:7.2f} s  peak {s['peak_mib']:7.0f} MiB",
        flush=True,
    )
    return [{"sweep": sweep, **rows[k]} for k in ("geoforest", "sklearn")]


def plot(rows: list[dict[str, Any]], sweep: str, path: str, fixed: str, n_trees: int) -> None:
    """Three log-log panels (fit time, kneighbors time, peak memory) for one sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x_key = "n" if sweep == "n" else "p"
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    panels = (
        ("fit_s", "fit time (s)"),
        ("kneighbors_s", "kneighbors(k=20) time (s)"),
        ("peak_mib", "peak RSS (MiB)"),
    )
    styles = {"geoforest": dict(marker="o"), "sklearn": dict(marker="s", linestyle="--")}
    for ax, (key, label) in zip(axes, panels, strict=True):
        for lib in ("geoforest", "sklearn"):
            pts = [
                (r[x_key], r[key])
                for r in rows
                if r["sweep"] == sweep and r["library"] == lib and r[key] not in (None, "")
            ]
            if not pts:
                continue
            xs, ys = zip(*sorted(pts), strict=True)
            name = "sklearn RandomForestRegressor" if lib == "sklearn" else "geoforest"
            ax.plot(xs, ys, label=name, **styles[lib])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(x_key)
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"geoforest scaling against {x_key} ({fixed}; {n_trees} trees; sklearn: fit only)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| sweep | n | p | gf fit s | gf kneighbors s | gf peak MiB | sklearn fit s | gf/sk fit |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_key = {(r["sweep"], r["n"], r["p"], r["library"]): r for r in rows}
    for sweep, n, p, lib in by_key:
        if lib != "geoforest":
            continue
        g, s = by_key[(sweep, n, p, "geoforest")], by_key[(sweep, n, p, "sklearn")]
        print(
            f"| {sweep} | {n:,} | {p:,} | {g['fit_s']:.2f} | {g['kneighbors_s']:.2f} | "
            f"{g['peak_mib']:,.0f} | {s['fit_s']:.2f} | {g['fit_s'] / s['fit_s']:.2f} |"
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="geoforest fit / kneighbors time and peak memory against n and p, "
        "with scikit-learn's RandomForestRegressor fit time as the reference line."
    )
    parser.add_argument(
        "--n-grid", type=int, nargs="+", default=[1_000, 3_000, 10_000, 30_000, 100_000]
    )
    parser.add_argument("--p-grid", type=int, nargs="+", default=[10, 30, 100, 300])
    parser.add_argument("--p-for-n", type=int, default=13, help="p of the n sweep")
    parser.add_argument("--n-for-p", type=int, default=10_000, help="n of the p sweep")
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--n-neighbors", type=int, default=20)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default=os.path.join("docs", "results", "scaling"))
    parser.add_argument("--quick", action="store_true", help="smoke run, written to /tmp")
    parser.add_argument("--child", choices=("geoforest", "sklearn"), help=argparse.SUPPRESS)
    parser.add_argument("--child-n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-p", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--max-features", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n_grid, args.p_grid, args.n_for_p = [1_000, 2_000], [10, 30], 1_000
        args.n_estimators, args.out = 10, "/tmp/geoforest_scaling_quick"
    if min(args.p_grid + [args.p_for_n]) <= SIGNAL_DIMS:
        parser.error(f"p must exceed the helix's {SIGNAL_DIMS} signal dimensions")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        result = run_child(args.child, args.child_n, args.child_p, args)
        report(result)
        return 0

    import matplotlib
    import numba
    import sklearn

    import geoforest as gf

    print(
        f"python {platform.python_version()}  geoforest {gf.__version__}  "
        f"scikit-learn {sklearn.__version__}  numpy {np.__version__}  numba {numba.__version__}  "
        f"matplotlib {matplotlib.__version__}  cpus {os.cpu_count()}  n_jobs={args.n_jobs}"
    )
    print(
        f"{args.n_estimators} trees; geoforest defaults otherwise; kneighbors k={args.n_neighbors}"
    )
    spawn("geoforest", 600, args.p_for_n, args)  # refresh numba's on-disk cache, not recorded
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for i, n in enumerate(args.n_grid):
        rows += run_point("n", n, args.p_for_n, args, flip=i % 2 == 1)
    for i, p in enumerate(args.p_grid):
        rows += run_point("p", args.n_for_p, p, args, flip=i % 2 == 1)
    print(f"total {time.perf_counter() - t0:.0f} s\n")

    os.makedirs(args.out, exist_ok=True)
    csv_path = os.path.join(args.out, "scaling.csv")
    with open(csv_path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    plot(
        rows, "n", os.path.join(args.out, "scaling_n.png"), f"p = {args.p_for_n}", args.n_estimators
    )
    plot(
        rows,
        "p",
        os.path.join(args.out, "scaling_p.png"),
        f"n = {args.n_for_p:,}",
        args.n_estimators,
    )
    print_table(rows)
    print(f"\nwrote {csv_path}, scaling_n.png, scaling_p.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
