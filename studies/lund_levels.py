"""LUND with K from the shared label-free levels: would it reach the forest clusterer's median?

    python studies/lund_levels.py [--seeds 3] [--n-jobs 2] [--out DIR]

Issue 54 asks that LUND and LLPD-SC choose K by the graph layer's one
label-free mechanism and reach at least the label-free median of
``ForestSpectralClustering()`` on the same half.  Before moving LUND's
default, this study measures the candidate with public API only:

1. ``LUND(random_state=seed).fit(X)``: LUND's own label-free K (the ratio of
   sorted mode scores, the paper's rule) and its diffusion graph
   (``diffusion_map_.affinity_``);
2. ``gf.graph.label_free_levels`` on that graph, the references built by a
   ``DiffusionMap`` of the same parameters on Gaussian points: K^;
3. ``LUND(n_clusters=K^, random_state=seed).fit(X)``: LUND's modes and
   labels at that K.

Rows: ``metric="euclidean"`` (LUND's default) and ``metric="forest"`` (the
forest's 15-NN graph), on the selection sets (18 when run, 25 now), clean and with 100 noise
columns, and the controls; at most 1,000 rows; seeds ``0 .. seeds - 1``.
Printed: the median over sets of the per-set median ARI and |K^ - K| for
LUND's own rule and for the levels.  The report half is never loaded.
"""

from __future__ import annotations

import argparse
import csv
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

CONTROLS = ("touching", "one-blob", "multidensity", "hierarchy")
METRICS = ("euclidean", "forest")
FIELDS = ("dataset", "metric", "seed", "k_true", "k_own", "ari_own", "k_levels", "ari_levels")


def _job(name: str, metric: str, seed: int) -> dict:
    warnings.simplefilter("ignore")
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    params = {"metric": metric, "random_state": seed}
    own = gf.LUND(**params).fit(X)
    dm_params = {
        key: value
        for key, value in own.diffusion_map_.get_params().items()
        if key not in ("random_state",)
    }

    def reference_graph(points, ref_seed):
        return gf.DiffusionMap(**{**dm_params, "random_state": ref_seed}).fit(points).affinity_

    max_k = min(own.max_clusters, X.shape[0] - 1)
    levels = gf.graph.label_free_levels(
        own.diffusion_map_.affinity_,
        max_k,
        points=np.asarray(X, dtype=np.float64),
        reference_graph=reference_graph,
        random_state=seed,
    )
    k = levels.n_clusters
    labels = own.labels_ if k == own.n_clusters_ else gf.LUND(n_clusters=k, **params).fit(X).labels_
    return {
        "dataset": name,
        "metric": metric,
        "seed": seed,
        "k_true": int(np.unique(y[y >= 0]).size),
        "k_own": int(own.n_clusters_),
        "ari_own": adjusted_rand_score(y, own.labels_),
        "k_levels": int(k),
        "ari_levels": adjusted_rand_score(y, labels),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("lund-levels"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    cache = args.out / "rows.csv"
    rows = list(csv.DictReader(cache.open())) if cache.exists() else []
    done = {(r["dataset"], r["metric"], int(r["seed"])) for r in rows}
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    names = (*SELECTION, *noisy, *CONTROLS)
    todo = [
        (name, metric, seed)
        for name in names
        for metric in METRICS
        for seed in range(args.seeds)
        if (name, metric, seed) not in done
    ]
    rows += Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(_job)(*job) for job in todo)
    with cache.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    for metric in METRICS:
        for label, half in (("clean", SELECTION), (f"+{NOISE_DIMS}", noisy)):
            cells = []
            for rule in ("own", "levels"):
                ari, err = [], []
                for name in half:
                    mine = [r for r in rows if r["dataset"] == name and r["metric"] == metric]
                    mine = [r for r in mine if int(r["seed"]) < args.seeds]
                    ari.append(np.median([float(r[f"ari_{rule}"]) for r in mine]))
                    err.append(
                        np.median([abs(int(r[f"k_{rule}"]) - int(r["k_true"])) for r in mine])
                    )
                cells.append(f"{rule} {np.median(ari):.3f} |dK| {np.median(err):.1f}")
            print(f"{metric:9s} {label:6s} " + "   ".join(cells))
    print("\ncontrols (K^ per seed: own / levels)")
    for name in CONTROLS:
        for metric in METRICS:
            mine = sorted(
                (r for r in rows if r["dataset"] == name and r["metric"] == metric),
                key=lambda r: int(r["seed"]),
            )
            own = [int(r["k_own"]) for r in mine]
            lev = [int(r["k_levels"]) for r in mine]
            print(f"  {name:14s} {metric:9s} K={mine[0]['k_true']} own {own} levels {lev}")


if __name__ == "__main__":
    main()
