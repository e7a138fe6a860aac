"""A forest sized for clustering: does ForestSpectralClustering need the forest's redraws and trees?

    python studies/forest_spectral_redraws.py [--seeds 3] [--n-jobs 2] [--cache DIR]
        [--settings 8:100 1:100 8:50 1:50 8:100:decay]

``UnsupervisedForest`` redraws a node's candidate projections up to
``max_redraws = 8`` times while none has a positive Fast-BIC gain.  Inside
clusters (nodes with no two-cluster structure) that is most nodes, and on
50-dimensional clusters the forest's fit is 80 % of
``ForestSpectralClustering``'s time (``docs/scale.md``).  The neighbours'
default was chosen for neighbour quality; this asks whether the clustering
needs it.  For each setting ``r:t`` of ``--settings``,
``ForestSpectralClustering`` with K given and label-free, its forest
``UnsupervisedForest(max_redraws=r, n_estimators=t)`` (``r:t:decay``: with
``decay_redraws=True``),
on the clustering suite's selection half (25 sets, clean and with 100 noise
columns) and the controls, at most 1,000 rows, seeds ``0 .. seeds - 1``.
Printed: median over sets of the per-set median ARI (K given, label-free),
median |K^ - K|, the controls' K^, and the total fit time per setting.
Public API only; the report half is never read.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

CONTROLS = ("touching", "one-blob", "multidensity", "hierarchy")


def one(name: str, seed: int, setting: str, cache: Path) -> dict:
    parts = setting.split(":")
    redraws, trees = int(parts[0]), int(parts[1])
    decay = parts[2:] == ["decay"]
    tail = "" if trees == 100 else f"_t{trees}"  # the default's files keep their names
    tail += "_decay" if decay else ""
    path = cache / f"{name}_{seed}_{redraws}{tail}.joblib"
    if path.exists():
        return {**joblib.load(path), "setting": setting}
    warnings.simplefilter("ignore")
    X, y, _ = load_suite_data(name)
    k = int(np.unique(y).size)
    row = {"name": name, "seed": seed, "setting": setting, "K": k}
    for label, n_clusters in (("given", k), ("free", None)):
        forest = gf.UnsupervisedForest(max_redraws=redraws, n_estimators=trees, decay_redraws=decay)
        t = time.perf_counter()
        model = gf.ForestSpectralClustering(
            n_clusters, forest=forest, random_state=seed, n_jobs=1
        ).fit(X)
        row[f"seconds_{label}"] = time.perf_counter() - t
        row[f"ari_{label}"] = float(adjusted_rand_score(y, model.labels_))
        row[f"k_{label}"] = int(model.n_clusters_)
    joblib.dump(row, path)
    return row


def per_set_median(rows, names, setting, key):
    values = []
    for name in names:
        mine = [r[key] for r in rows if r["name"] == name and r["setting"] == setting]
        values.append(np.median(mine))
    return float(np.median(values))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("forest_spectral_redraws_cache"))
    ap.add_argument(
        "--settings",
        nargs="+",
        default=["8:100", "1:100"],
        help="max_redraws:n_estimators, with ':decay' for decay_redraws=True",
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    names = (*SELECTION, *noisy, *CONTROLS)
    rows = Parallel(n_jobs=args.n_jobs, verbose=5)(
        delayed(one)(n, s, r, args.cache)
        for r in args.settings
        for n in names
        for s in range(args.seeds)
    )
    for r in args.settings:
        mine = [row for row in rows if row["setting"] == r]
        for k_err in mine:
            k_err["k_err"] = abs(k_err["k_free"] - k_err["K"])
        seconds = sum(row["seconds_given"] + row["seconds_free"] for row in mine)
        print(f"\nmax_redraws:n_estimators={r}: {seconds:.0f} s of fits in all")
        for label, half in (("clean", SELECTION), (f"+{NOISE_DIMS}", noisy)):
            given = per_set_median(rows, half, r, "ari_given")
            free = per_set_median(rows, half, r, "ari_free")
            err = per_set_median(rows, half, r, "k_err")
            print(f"  {label:5s} K given {given:.3f}  label-free {free:.3f}  |K^-K| {err:.1f}")
        for name in CONTROLS:
            ks = [row["k_free"] for row in mine if row["name"] == name]
            print(f"  {name:13s} K^ {ks}")
    print("\nper set: ARI K given / label-free, by setting")
    for name in (*SELECTION, *noisy):
        cells = [
            f"{per_set_median(rows, [name], r, 'ari_given'):.3f}/"
            f"{per_set_median(rows, [name], r, 'ari_free'):.3f}"
            for r in args.settings
        ]
        print(f"  {name:22s}", "  ".join(cells))


if __name__ == "__main__":
    main()
