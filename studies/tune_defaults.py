"""Measure candidate defaults of ``UnsupervisedForest`` on the URerF paper's simulations.

For each simulation (linear, helix, sphere, Gaussian mixture; N = 1000, rows in
random order) with 10, 100 and 1,000 appended N(0, 70) noise dimensions, fit a
100-tree forest per candidate setting and report geodesic precision@50 of its
``kneighbors`` and the fit time.  The chosen defaults and this table live in
``docs/defaults.md``.

Run::

    python studies/tune_defaults.py            # full grid (~15 minutes on 2 cores)
    python studies/tune_defaults.py --quick    # 300 points, 20 trees, 10/100 dims
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import geoforest as gf

CANDIDATES: dict[str, dict] = {
    "default": {},
    "paper sparsity (p/20)": {"feature_combinations": "paper"},
    "all rows per tree": {"max_samples": None},
    "minparent 20": {"min_samples_split": 20},
    "no redraws": {"max_redraws": 0},
    "24 redraws": {"max_redraws": 24},
}

SIMULATIONS = {
    "linear": (gf.datasets.make_linear, "euclidean"),
    "helix": (gf.datasets.make_helix, "euclidean"),
    "sphere": (gf.datasets.make_sphere, "great_circle"),
    "mixture": (gf.datasets.make_gaussian_mixture, "labels"),
}


def precision_at(ind: np.ndarray, y: np.ndarray, metric: str, k: int) -> float:
    if metric == "labels":
        res = gf.metrics.geodesic_precision_recall(ind, labels=y, ks=[k])
    else:
        res = gf.metrics.geodesic_precision_recall(ind, latent=y, metric=metric, ks=[k])
    return float(res.precision[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--candidates", nargs="*", default=list(CANDIDATES))
    args = parser.parse_args()
    n, trees, dims, k = (300, 20, [10, 100], 30) if args.quick else (1000, 100, [10, 100, 1000], 50)
    print(f"N={n}, {trees} trees, precision@{k}; cells: precision (fit seconds)")
    header = f"{'setting':<24}{'simulation':<10}" + "".join(f"{d:>16}" for d in dims)
    print(header)
    for name in args.candidates:
        for sim, (make, metric) in SIMULATIONS.items():
            X0, y = make(n, random_state=0)
            cells = []
            for d in dims:
                X = gf.datasets.add_noise_dims(X0, d, random_state=1)
                t0 = time.perf_counter()
                forest = gf.UnsupervisedForest(
                    n_estimators=trees, n_jobs=args.n_jobs, random_state=0, **CANDIDATES[name]
                ).fit(X)
                ind = forest.kneighbors(n_neighbors=k, return_distance=False)
                seconds = time.perf_counter() - t0
                cells.append(f"{precision_at(ind, y, metric, k):.3f} ({seconds:5.1f}s)")
            print(f"{name:<24}{sim:<10}" + "".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
