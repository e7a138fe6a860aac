"""Exact Euclidean MST engines by dimension: where does each win?

Times :func:`geoforest.graph.euclidean_mst` with ``method="kdtree"``
(quitefastmst's sesqui-tree Borůvka, d <= 20), ``"boruvka"`` (geoforest's
component-pruned K-d tree Borůvka, numba, single thread) and ``"brute"``
(quitefastmst's parallel Jarník-Prim) on two kinds of data:

* ``uniform``: uniform in the unit cube of dimension d (full intrinsic dimension);
* ``ldln``: :func:`geoforest.datasets.make_ldln` (clusters on 1-2 dimensional
  sets in R^d plus 20 % uniform background noise) - the data LLPD is made for.

Every engine's total weight is checked against the others.  Run from the
repository root::

    python benchmarks/bench_emst.py --n 20000 --dims 2 5 10 20 30 50 100

The smallest time per row is the engine ``method="auto"`` should pick.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from geoforest.datasets import make_ldln
from geoforest.graph import euclidean_mst


def _data(kind: str, n: int, d: int, seed: int) -> np.ndarray:
    if kind == "uniform":
        return np.random.default_rng(seed).random((n, d))
    X, _ = make_ldln(n, ambient_dim=d, intrinsic_dim="mixed" if d >= 3 else 1, random_state=seed)
    return X


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 5, 10, 20, 30, 50, 100])
    parser.add_argument("--kinds", nargs="+", default=["uniform", "ldln"])
    parser.add_argument("--brute-max-n", type=int, default=50000)
    args = parser.parse_args(argv)
    euclidean_mst(np.random.default_rng(0).random((50, 3)), method="boruvka")  # compile
    print(f"n = {args.n}; seconds (best of 2 for runs under 5 s)")
    print(f"{'data':<8} {'d':>4} {'kdtree':>8} {'boruvka':>8} {'brute':>8}  weight check")
    for kind in args.kinds:
        for d in args.dims:
            X = _data(kind, args.n, d, 0)
            times, totals = {}, {}
            for method in ("kdtree", "boruvka", "brute"):
                if method == "kdtree" and d > 20 or method == "brute" and args.n > args.brute_max_n:
                    continue
                best = np.inf
                for _ in range(2):
                    t0 = time.perf_counter()
                    w, _ = euclidean_mst(X, method=method)
                    best = min(best, time.perf_counter() - t0)
                    if best > 5:
                        break
                times[method], totals[method] = best, w.sum()
            ref = next(iter(totals.values()))
            ok = all(abs(v - ref) <= 1e-9 * ref for v in totals.values())
            cells = [
                f"{times[m]:8.3f}" if m in times else f"{'-':>8}"
                for m in ("kdtree", "boruvka", "brute")
            ]
            check = "same" if ok else "DIFFERENT"
            print(f"{kind:<8} {d:>4} {' '.join(cells)}  {check}", flush=True)


if __name__ == "__main__":
    main()
