"""A million points on one machine: fit 100 trees, then 20 forest neighbours of every point.

What is measured
----------------
``gf.UnsupervisedForest(n_estimators=100, n_jobs=2, random_state=0)`` (other
parameters at their defaults unless flags say otherwise) on ``N`` rows with
``p`` columns, float32:

* ``--data helix`` (default): the URerF paper's helix (3 columns) with
  ``p - 3`` appended noise dimensions (``add_noise_dims``), i.e. the paper's
  setting at a million points;
* ``--data noise``: ``X ~ N(0, 1)``, the worst case for Fast-BIC (no node has
  two-cluster structure, so every node pays for its redraws).

Phases, each timed on its own: ``fit``; the training points' leaves
(``apply`` over the forest, cached by the forest); ``kneighbors(k)`` of every
training point (the gather over the leaf lists, excluding the point itself).
For the helix, the geodesic precision@k of the neighbours (truth: arc
length) is printed too, so faster settings show what they cost.  At the
default ``distance`` (resolved to ``"relevance"`` in memory) the same trees'
neighbours are also ranked by proximity (``kneighbors by proximity``), side
by side.  Peak memory
is this process's ``VmHWM`` at the end (the high-water mark of the
whole run, data generation included); the footprint of the fitted forest and
of the cached leaves are printed too.

The goal of the scale issue: 10^6 x 10, 100 trees, ``kneighbors(k=20)`` for
every point under 8 GB peak and under 10 minutes on 2 cores.

How to run
----------
From the repository root (one heavy job at a time; BLAS/OpenMP threads are not
used by these phases but are pinned to 1 anyway)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 benchmarks/bench_million.py
    python3 benchmarks/bench_million.py --data noise --decay-redraws
    python3 benchmarks/bench_million.py --n 100000 --n-estimators 10   # smoke run
    python3 benchmarks/bench_million.py --distance proximity   # fit and rank by proximity only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _memory import peak_rss_bytes  # noqa: E402

import geoforest as gf  # noqa: E402

SEED = 0


def make_data(kind: str, n: int, p: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The benchmark's float32 data and, for the helix, its arc length (the truth)."""
    if kind == "noise":
        return np.random.default_rng(SEED).standard_normal((n, p), dtype=np.float32), None
    X, arc = gf.datasets.make_helix(n, random_state=SEED)
    X = gf.datasets.add_noise_dims(X, p - 3, random_state=SEED + 1).astype(np.float32)
    return X, arc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--data", choices=("helix", "noise"), default="helix")
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--n-neighbors", type=int, default=20)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--max-redraws", type=int, default=None, help="default: the forest's")
    parser.add_argument("--decay-redraws", action="store_true")
    parser.add_argument(
        "--distance",
        choices=("auto", "relevance", "proximity"),
        default=None,
        help="default: the forest's",
    )
    args = parser.parse_args(argv)

    print(
        f"python {platform.python_version()}, numpy {np.__version__}, geoforest "
        f"{gf.__version__ if hasattr(gf, '__version__') else '?'}, {os.cpu_count()} cpus"
    )
    params = dict(n_estimators=args.n_estimators, n_jobs=args.n_jobs, random_state=SEED)
    if args.max_redraws is not None:
        params["max_redraws"] = args.max_redraws
    if args.decay_redraws:
        params["decay_redraws"] = True
    if args.distance is not None:
        params["distance"] = args.distance
    # Warm numba up (compiled or loaded from its cache) on a tiny problem.
    warm, _ = make_data(args.data, 2000, args.p)
    gf.UnsupervisedForest(**{**params, "n_estimators": 2}).fit(warm).kneighbors(
        n_neighbors=args.n_neighbors
    )

    t = time.perf_counter()
    X, arc = make_data(args.data, args.n, args.p)
    data_s = time.perf_counter() - t
    print(f"data {args.data} {X.shape} in {data_s:.1f}s; forest {params}", flush=True)

    forest = gf.UnsupervisedForest(**params, verbose=1)
    t = time.perf_counter()
    forest.fit(X)
    fit_s = time.perf_counter() - t
    leaves = np.mean([int((tr.left == -1).sum()) for tr in forest.trees_])
    print(f"fit {fit_s:.1f}s, {leaves:,.0f} leaves per tree", flush=True)

    t = time.perf_counter()
    train_leaves = forest.apply()  # the training points' leaves: computed once, kept
    apply_s = time.perf_counter() - t
    print(f"training leaves {apply_s:.1f}s", flush=True)

    t = time.perf_counter()
    dist, ind = forest.kneighbors(n_neighbors=args.n_neighbors)
    kn_s = time.perf_counter() - t
    print(f"kneighbors {kn_s:.1f}s", flush=True)
    prox_kn_s = prox_precision = None
    if forest.distance_ == "relevance":
        # The same trees ranked by proximity (the paper's ranking), side by side.
        distance = forest.distance
        forest.set_params(distance="proximity")
        t = time.perf_counter()
        _, prox_ind = forest.kneighbors(n_neighbors=args.n_neighbors)
        prox_kn_s = time.perf_counter() - t
        forest.set_params(distance=distance)
        print(f"kneighbors by proximity {prox_kn_s:.1f}s", flush=True)
        if arc is not None:
            res = gf.metrics.geodesic_precision_recall(prox_ind, latent=arc, ks=[args.n_neighbors])
            prox_precision = round(float(res.precision[0]), 4)
        del prox_ind
    precision = None
    if arc is not None:
        res = gf.metrics.geodesic_precision_recall(ind, latent=arc, ks=[args.n_neighbors])
        precision = round(float(res.precision[0]), 4)
        print(f"geodesic precision@{args.n_neighbors} {precision}", flush=True)

    result = {
        "n": args.n,
        "p": args.p,
        "data": args.data,
        "params": {k: v for k, v in params.items() if k != "n_jobs"},
        "n_jobs": args.n_jobs,
        "n_neighbors": args.n_neighbors,
        "fit_s": round(fit_s, 1),
        "leaves_s": round(apply_s, 1),
        "kneighbors_s": round(kn_s, 1),
        "total_s": round(fit_s + apply_s + kn_s, 1),
        "kneighbors_by_proximity_s": None if prox_kn_s is None else round(prox_kn_s, 1),
        "precision_at_k_by_proximity": prox_precision,
        "leaves_per_tree": round(float(leaves)),
        "precision_at_k": precision,
        "forest_gb": round(forest.nbytes_ / 1e9, 2),  # trees, flat copy, in-bag counts
        "train_leaves_gb": round(train_leaves.nbytes / 1e9, 2),
        "neighbours_gb": round((dist.nbytes + ind.nbytes) / 1e9, 2),
        "peak_rss_gb": round(peak_rss_bytes() / 1e9, 2),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
