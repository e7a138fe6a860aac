"""How many points the label-free level of ``ForestSpectralClustering`` needs.

    python studies/label_free_selection.py [--sizes 1000 2000 5000 0] [--seeds 3]
        [--sets letter magic ...] [--noise] [--half report] [--out DIR]

On more than ``max_selection_samples`` points the estimator chooses K on a
random subset of that many, in the subset's own geometry and against its own
Gaussian references, and cuts the whole graph at that K
(``docs/defaults.md``, "Label-free K on a subset").  The clustering suite
runs at most 1,000 points per set, so it cannot say what the subset costs:
this study runs the suite's sets that hold more than 5,000 points whole
(selection half: musk2, texture, mnist10, satimage, magic, penbased, letter;
``--noise`` adds their ``+100`` rows) with each subset size (``0``: every
point, the rule without a subset) and prints per set and size the median
ARI and K^ over seeds, the median seconds, and the medians over sets.

``--half report`` runs the report half's sets of more than 2,500 points
(marketing, splice, banana, twonorm): the check, once, of a size chosen on
the selection half.  Rows are cached in ``--out`` so a rerun only adds what
is missing.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

from geoforest import ForestSpectralClustering
from geoforest_experiments.clustering_suite import NOISE_DIMS, load_suite_data

SELECTION_SETS = ("musk2", "texture", "mnist10", "satimage", "magic", "penbased", "letter")
REPORT_SETS = ("marketing", "splice", "banana", "twonorm")
FIELDS = ("dataset", "size", "seed", "n", "k_true", "k_hat", "ari", "seconds")


def _run(name: str, size: int, seed: int) -> dict:
    X, y, _ = load_suite_data(name, max_n=10**7)
    keep = y >= 0
    model = ForestSpectralClustering(
        max_selection_samples=size or None, random_state=seed, n_jobs=1
    )
    start = time.perf_counter()
    labels = model.fit_predict(X)
    seconds = time.perf_counter() - start
    return {
        "dataset": name,
        "size": size,
        "seed": seed,
        "n": X.shape[0],
        "k_true": len(np.unique(y[keep])),
        "k_hat": model.n_clusters_,
        "ari": adjusted_rand_score(y[keep], labels[keep]),
        "seconds": seconds,
    }


def _cached(path: Path) -> dict:
    if not path.exists():
        return {}
    with path.open() as fh:
        return {(r["dataset"], int(r["size"]), int(r["seed"])): r for r in csv.DictReader(fh)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sets", nargs="+", default=None)
    parser.add_argument("--noise", action="store_true", help="add the sets' +100 rows")
    parser.add_argument("--half", choices=("selection", "report"), default="selection")
    parser.add_argument("--out", type=Path, default=Path("label_free_selection"))
    args = parser.parse_args()
    sets = list(args.sets or (SELECTION_SETS if args.half == "selection" else REPORT_SETS))
    if args.noise:
        sets += [f"{name}+{NOISE_DIMS}" for name in sets]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.half}.csv"
    rows = _cached(path)
    for name in sets:
        for size in args.sizes:
            for seed in range(args.seeds):
                if (name, size, seed) in rows:
                    continue
                row = _run(name, size, seed)
                rows[(name, size, seed)] = {k: str(v) for k, v in row.items()}
                print(name, size, seed, row["k_hat"], f"{row['ari']:.3f}", f"{row['seconds']:.1f}s")
                with path.open("w", newline="") as fh:
                    writer = csv.DictWriter(fh, FIELDS)
                    writer.writeheader()
                    writer.writerows(rows.values())
    _report(rows, sets, args.sizes)


def _report(rows: dict, sets: list[str], sizes: list[int]) -> None:
    print("\nmedian over seeds: ARI (K^), seconds; size 0 = every point")
    print("| set | n | K | " + " | ".join(str(s or "all") for s in sizes) + " |")
    per_size: dict[int, list[float]] = {s: [] for s in sizes}
    per_err: dict[int, list[float]] = {s: [] for s in sizes}
    for name in sets:
        cells, n, k = [], "", ""
        for size in sizes:
            got = [r for (d, s, _), r in rows.items() if d == name and s == size]
            if not got:
                cells.append("")
                continue
            n, k = got[0]["n"], got[0]["k_true"]
            ari = float(np.median([float(r["ari"]) for r in got]))
            k_hat = float(np.median([int(r["k_hat"]) for r in got]))
            sec = float(np.median([float(r["seconds"]) for r in got]))
            per_size[size].append(ari)
            per_err[size].append(abs(k_hat - int(k)))
            cells.append(f"{ari:.3f} ({k_hat:g}), {sec:.0f} s")
        print(f"| {name} | {n} | {k} | " + " | ".join(cells) + " |")
    print(
        "| median | | | "
        + " | ".join(
            f"{np.median(per_size[s]):.3f}, abs(K^-K) {np.median(per_err[s]):g}"
            if per_size[s]
            else ""
            for s in sizes
        )
        + " |"
    )


if __name__ == "__main__":
    main()
