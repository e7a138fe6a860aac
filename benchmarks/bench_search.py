"""In-memory forest neighbour search: this checkout against an earlier version, side by side.

What is measured
----------------
The same public calls, timed in this checkout and in ``--baseline`` (a git
ref whose ``geoforest/`` is extracted with ``git archive`` into a temporary
folder and imported from there), each in a fresh child process with its own
numba cache, kernels compiled by a warm-up call first.  Every child runs
one setting, ``n_jobs=1`` (per-query costs, not the machine's load, decide
the ratio):

* ``large-leaves``: ``X ~ N(0, 1)`` of 10**6 x 10 (float32),
  ``UnsupervisedForest(n_estimators=20, max_samples=10_000)``: a leaf holds
  about a thousand training points, so a query meets tens of thousands of
  co-leaf points, the case issue 32 names.  ``kneighbors(Q, 10)`` of 3,000
  random rows ``Q``, ranked by proximity and by the default relevance
  distance.
* ``defaults``: the helix with 7 noise dimensions, 10**5 points,
  ``UnsupervisedForest()`` at its defaults (100 trees, ``max_samples=0.5``):
  ``kneighbors(n_neighbors=10)`` of every training point; ``defaults-300k``
  the same at 3 x 10**5 points, more references than one block of counters
  (run when asked for).

Each ``kneighbors`` is timed twice and the faster kept (for ``defaults`` the
first run also pushes the training points down the trees).  The parent prints the
times, the ratio baseline / this checkout, and whether both versions returned
identical neighbours and distances (they must).

How to run
----------
From the repository root, one heavy job at a time::

    python benchmarks/bench_search.py                      # against e434c7a
    python benchmarks/bench_search.py --baseline v0.1.0 --settings defaults
    python benchmarks/bench_search.py --quick              # smoke run, 10**5 rows
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The last commit before the counted, cache-blocked search (issue 32).
DEFAULT_BASELINE = "e434c7a"
SETTINGS = {
    "large-leaves-proximity": {
        "n": 10**6, "data": "normal", "forest": {"n_estimators": 20, "max_samples": 10_000,
                                                 "distance": "proximity"}, "queries": 3000,
    },
    "large-leaves-relevance": {
        "n": 10**6, "data": "normal", "forest": {"n_estimators": 20, "max_samples": 10_000},
        "queries": 3000,
    },
    "defaults": {"n": 10**5, "data": "helix", "forest": {}, "queries": None},
    # more references than one block of counters (not run unless asked)
    "defaults-300k": {"n": 3 * 10**5, "data": "helix", "forest": {}, "queries": None},
}  # fmt: skip
#: Run when --settings is not given.
DEFAULT_SETTINGS = ("large-leaves-proximity", "large-leaves-relevance", "defaults")


def make_data(kind: str, n: int) -> np.ndarray:
    import geoforest as gf

    if kind == "normal":
        return np.random.default_rng(0).standard_normal((n, 10), dtype=np.float32)
    X, _ = gf.datasets.make_helix(n, random_state=0)
    return gf.datasets.add_noise_dims(X, 7, random_state=1).astype(np.float32)


def run_child(args: argparse.Namespace) -> None:
    import geoforest as gf

    setting = dict(SETTINGS[args.setting])
    n = min(setting["n"], args.max_rows)
    X = make_data(setting["data"], n)
    params = {"random_state": 0, "n_jobs": 1, **setting["forest"]}
    if isinstance(params.get("max_samples"), int):
        params["max_samples"] = min(params["max_samples"], n // 2)
    # warm-up: compile every kernel of the path on a small copy
    warm = gf.UnsupervisedForest(**{**params, "max_samples": None, "n_estimators": 3})
    warm.fit(X[:3000]).kneighbors(X[:50], 10)
    warm.kneighbors(n_neighbors=10)
    forest = gf.UnsupervisedForest(**params)
    t0 = time.perf_counter()
    forest.fit(X)
    fit_s = time.perf_counter() - t0
    Q = None
    if setting["queries"] is not None:
        Q = X[np.random.default_rng(1).choice(n, setting["queries"], replace=False)]
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        dist, ind = forest.kneighbors(Q, n_neighbors=10)
        times.append(time.perf_counter() - t0)
    np.save(args.out, np.hstack([ind, dist]))
    report({"fit_s": fit_s, "kneighbors_s": min(times), "queries": int(ind.shape[0]),
            "distance": forest.distance_, "geoforest": gf.__file__})  # fmt: skip


def extract(ref: str, into: str) -> str:
    """``geoforest/`` of git ref ``ref`` under ``into``; returns the folder to import from."""
    archive = subprocess.run(
        ["git", "-C", ROOT, "archive", ref, "geoforest"], check=True, stdout=subprocess.PIPE
    ).stdout
    os.makedirs(into, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref to compare with")
    ap.add_argument("--settings", default=",".join(DEFAULT_SETTINGS),
                    help=f"comma-separated, of: {', '.join(SETTINGS)}")  # fmt: skip
    ap.add_argument("--quick", action="store_true", help="at most 10**5 rows (smoke run)")
    ap.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--setting", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--max-rows", type=int, default=10**9, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        run_child(args)
        return
    max_rows = 10**5 if args.quick else 10**9
    with tempfile.TemporaryDirectory() as tmp:
        base_src = extract(args.baseline, os.path.join(tmp, "baseline"))
        print(f"baseline {args.baseline} vs this checkout; n_jobs=1, best of 2 runs", flush=True)
        print(f"{'setting':<24} {'queries':>8} {'baseline s':>11} {'this s':>8} "
              f"{'ratio':>6}  identical")  # fmt: skip
        for name in args.settings.split(","):
            found = {}
            for version, path in (("baseline", base_src), ("this", ROOT)):
                env = dict(os.environ, PYTHONPATH=path,
                           NUMBA_CACHE_DIR=os.path.join(tmp, f"numba-{version}"),
                           OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")  # fmt: skip
                out = os.path.join(tmp, f"{name}-{version}.npy")
                flags = {"child": 1, "setting": name, "out": out, "max-rows": max_rows}
                res = spawn_child(__file__, flags, env=env, what=f"{version} {name}")
                found[version] = (res, np.load(out))
            (b, b_out), (t, t_out) = found["baseline"], found["this"]
            same = np.array_equal(b_out, t_out)
            ratio = b["kneighbors_s"] / t["kneighbors_s"]
            print(f"{name:<24} {t['queries']:>8} {b['kneighbors_s']:>11.2f} "
                  f"{t['kneighbors_s']:>8.2f} {ratio:>6.2f}  {same}", flush=True)  # fmt: skip
            if not same:
                raise SystemExit(f"{name}: the two versions' neighbours differ")


if __name__ == "__main__":
    main()
