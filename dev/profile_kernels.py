"""Where a tree's time goes: the per-value cost of each step of the node loop.

What is measured
----------------
The node loop of ``build_tree`` does, for every candidate projection of a
node: project the node's rows (``project_samples``), copy and sort the values
(``sort_values``), scan every cut (``best_cut``), and finally partition the
rows.  This script times each step alone on one node of ``--n`` rows drawn
from a 1,000,000 x 10 float32 matrix (single thread, best of 5), in
nanoseconds per value, next to the machine's references:

* numpy's ``np.sort`` of the same float64 values (SIMD sort: the machine's sort
  throughput) and a plain copy;
* the projection with the rows in random order (what a non-stable partition
  would leave) against increasing order (what the engine keeps), from a
  row-major X and from the column-major copy the engine builds from.

It then times whole trees of ``UnsupervisedForest`` at ``max_redraws`` 0 and 8
on the same data, to show the redraw multiplier on structureless data.

How to run
----------
::

    OPENBLAS_NUM_THREADS=1 python dev/profile_kernels.py            # a node of 500,000 rows
    OPENBLAS_NUM_THREADS=1 python dev/profile_kernels.py --n 20000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import geoforest as gf
from geoforest._engine.projections import project_samples
from geoforest._engine.rng import make_state
from geoforest._engine.sorting import sort_values
from geoforest._engine.splits import FASTBIC, GMM, TWOMEANS, best_cut, make_workspace


def per_value_ns(fn: Callable[[], object], n: int, repeats: int = 5) -> float:
    """Best-of-``repeats`` time of ``fn`` in nanoseconds per value (after one warm-up call)."""
    fn()
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best / n * 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500_000, help="rows in the node")
    args = parser.parse_args(argv)
    n = args.n
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1_000_000, 10), dtype=np.float32)
    X_cols = np.asfortranarray(X)
    rows = rng.permutation(X.shape[0])[:n].astype(np.int64)
    rows_sorted = np.sort(rows)
    z = np.empty(n)
    zs = np.empty(n)
    keys = np.empty(n, dtype=np.int64)
    tmp = np.empty(n)
    idx = np.array([2, 7], dtype=np.int32)  # a sparse projection with two nonzeros
    w = np.array([1.0, -1.0], dtype=np.float32)
    state = make_state(1)
    params = np.zeros(4)

    # Fresh values on every sort (a rotating pool of projections): re-sorting
    # one array lets the branch predictor learn it, which flatters branchy
    # sorts 2-3x on nodes of a few thousand values.
    pool = [np.empty(n) for _ in range(8)]
    for k, out in enumerate(pool):
        pair = np.array([k, (k + 3) % 10], dtype=np.int32)
        project_samples(X, rows_sorted, 0, n, pair, w, 0, 2, out)
    turn = [0]

    def copy_sort() -> None:
        turn[0] = (turn[0] + 1) % len(pool)
        zs[:] = pool[turn[0]]
        sort_values(zs, n, keys, tmp)

    project_samples(X, rows_sorted, 0, n, idx, w, 0, 2, z)
    copy_sort()
    ws = {rule: make_workspace(rule, n) for rule in (FASTBIC, TWOMEANS, GMM)}

    def scan(rule: int) -> Callable[[], object]:
        return lambda: best_cut(rule, zs, n, 1, params, ws[rule], state)

    def project(order: np.ndarray, data: np.ndarray = X) -> Callable[[], object]:
        return lambda: project_samples(data, order, 0, n, idx, w, 0, 2, z)

    steps = [
        ("project, rows in increasing order", project(rows_sorted)),
        ("project, rows in random order", project(rows)),
        ("project, column-major X (engine)", project(rows_sorted, X_cols)),
        ("copy + sort_values (engine)", copy_sort),
        ("np.sort (numpy, reference)", lambda: np.sort(z)),
        ("copy only (reference)", lambda: zs.__setitem__(slice(None), z)),
        ("scan: Fast-BIC", scan(FASTBIC)),
        ("scan: two-means", scan(TWOMEANS)),
        ("scan: GMM (EM)", scan(GMM)),
    ]
    print(f"one node of {n:,} rows of a 1,000,000 x 10 float32 X; ns per value, best of 5")
    for name, fn in steps:
        print(f"  {name:<36}{per_value_ns(fn, n):8.1f}")

    m = min(200_000, X.shape[0])
    print(f"\nwhole trees on N(0, 1) noise, {m:,} rows, 4 trees, n_jobs=1 (seconds)")
    gf.UnsupervisedForest(1, random_state=0).fit(X[:2000])
    for redraws in (0, 8):
        t = time.perf_counter()
        gf.UnsupervisedForest(4, max_redraws=redraws, n_jobs=1, random_state=0).fit(X[:m])
        print(f"  max_redraws={redraws:<3}{time.perf_counter() - t:8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
