"""Should LUND's default geometry be the forest?  Euclidean vs forest kNN graph, selection half.

Measures, on the clustering suite's **selection half only** (its real data
sets :data:`~geoforest_experiments.clustering_suite.SELECTION` and their
``<name>+100`` rows, the same points with 100 Gaussian noise columns; the
report half is never loaded), ``LUND(n_clusters=K)`` (true K given) and
``LUND()`` (K estimated), each with ``metric="euclidean"`` and
``metric="forest"`` (the default ``UnsupervisedForest()``, seeded like LUND),
seeds 0 to ``--seeds - 1``, at most ``--max-n`` points per set (the suite's
stratified subsample).  Per data set it prints the median over seeds of the
ARI and of K̂; then the median over sets, for the clean sets, the ``+100``
sets and both.

The decision rule, fixed before the run: the score of a metric is the mean,
over the two variants (K given, K estimated), of the median over the 18
selection sets of the per-set median ARI.  The forest becomes LUND's default
only if its score is higher, and stays higher whichever single data set is
left out (leave-one-data-set-out: 18 checks).  Run from the repository root::

    python -u studies/lund_geometry.py --seeds 3 --jobs 2 --csv lund_geometry.csv
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

from geoforest import LUND
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

#: The selection half: its real sets and their noise-column rows.
DATASETS = SELECTION + tuple(f"{name}+{NOISE_DIMS}" for name in SELECTION)
METRICS = ("euclidean", "forest")
VARIANTS = ("LUND|K", "LUND")


def run_one(name: str, metric: str, variant: str, seed: int, max_n: int) -> dict:
    """One fit: ARI, K̂ and seconds (an ``error`` instead if it raised)."""
    X, y, half = load_suite_data(name, max_n=max_n)
    assert half.startswith("selection"), f"{name} is not in the selection half"
    k_true = int(np.unique(y[y >= 0]).size)
    row = {"dataset": name, "metric": metric, "variant": variant, "seed": seed, "k_true": k_true}
    model = LUND(
        n_clusters=k_true if variant == "LUND|K" else None,
        metric=metric,
        random_state=seed,
        n_jobs=1,
    )
    return fit_row(model, X, y, row)


def fit_row(model, X, y, row: dict) -> dict:
    """``row`` with the fit's ARI, K̂ and seconds (an ``error`` instead if it raised)."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X)
    except Exception as exc:  # noqa: BLE001 - recorded, never silent
        return {**row, "ari": np.nan, "k_hat": np.nan, "seconds": np.nan, "error": repr(exc)}
    return {
        **row,
        "ari": adjusted_rand_score(y, model.labels_),
        "k_hat": int(model.n_clusters_),
        "seconds": time.perf_counter() - start,
        "error": "",
    }


def per_set(rows: list[dict]) -> dict:
    """(dataset, metric, variant) -> median ARI, median K̂, median seconds over seeds."""
    out: dict = {}
    for key in {(r["dataset"], r["metric"], r["variant"]) for r in rows}:
        mine = [r for r in rows if (r["dataset"], r["metric"], r["variant"]) == key]
        columns = ("ari", "k_hat", "seconds")
        out[key] = tuple(float(np.median([r[c] for r in mine])) for c in columns)
    return out


def score(table: dict, metric: str, names) -> float:
    """Mean over the variants of the median over ``names`` of the per-set median ARI."""
    return float(np.mean([np.median([table[n, metric, v][0] for n in names]) for v in VARIANTS]))


def report(rows: list[dict]) -> None:
    table = per_set(rows)
    print(f"{'data set':<18}{'k':>3}  " + "  ".join(f"{v + ' ' + m[:6]:>20}" for v in VARIANTS
                                                     for m in METRICS))  # fmt: skip
    print(f"{'':<21}  " + "  ".join(f"{'ARI   K̂':>20}" for _ in VARIANTS for _ in METRICS))
    k_true = {r["dataset"]: r["k_true"] for r in rows}
    for name in DATASETS:
        cells = [table[name, m, v] for v in VARIANTS for m in METRICS]
        print(f"{name:<18}{k_true[name]:>3}  "
              + "  ".join(f"{a:>14.3f} {k:>5.1f}" for a, k, _ in cells))  # fmt: skip
    groups = {"selection": SELECTION, f"selection+{NOISE_DIMS}": DATASETS[len(SELECTION):],
              "both": DATASETS}  # fmt: skip
    print("\nmedian over data sets of the per-set medians (ARI / |K̂ - K| / seconds)")
    for group, names in groups.items():
        for v in VARIANTS:
            for m in METRICS:
                ari = np.median([table[n, m, v][0] for n in names])
                kerr = np.median([abs(table[n, m, v][1] - k_true[n]) for n in names])
                sec = np.median([table[n, m, v][2] for n in names])
                print(f"  {group:<15}{v:<8}{m:<10} ARI {ari:.3f}  |K̂-K| {kerr:.1f}  {sec:.1f} s")
    s = {m: score(table, m, DATASETS) for m in METRICS}
    loo = [
        score(table, "forest", [d for d in DATASETS if d != left])
        > score(table, "euclidean", [d for d in DATASETS if d != left])
        for left in DATASETS
    ]
    wins = s["forest"] > s["euclidean"]
    print(f"\nscore: euclidean {s['euclidean']:.4f}, forest {s['forest']:.4f}")
    print(f"forest higher with each set left out: {sum(loo)} of {len(loo)}")
    stable = wins and all(loo)
    print("decision:", "forest becomes the default" if stable else "keep euclidean")
    errors = [r for r in rows if r["error"]]
    for r in errors:
        print("error:", r["dataset"], r["metric"], r["variant"], r["seed"], r["error"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--csv", default=None, help="write every run here")
    args = parser.parse_args()
    jobs = [(n, m, v, s) for n in DATASETS for s in range(args.seeds) for m in METRICS
            for v in VARIANTS]  # fmt: skip
    rows = Parallel(n_jobs=args.jobs, verbose=5)(
        delayed(run_one)(n, m, v, s, args.max_n) for n, m, v, s in jobs
    )
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    report(rows)


if __name__ == "__main__":
    main()
