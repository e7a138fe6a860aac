"""LUND's default, geometry and label-free rule chosen together on the selection half.

    python studies/lund_default.py [--seeds 3] [--jobs 2] [--out DIR] [--half report]

``studies/lund_geometry.py`` kept ``metric="euclidean"`` with LUND's own
label-free rule (the ratio of sorted mode scores), and
``studies/lund_levels.py`` found that the graph layer's label-free levels
(``LUND(selection="levels")``) lift LUND's label-free median on the forest's
graph but not on the Euclidean one.  A geometry and a rule that only work
together must be chosen together, so this study runs the estimator itself,
``LUND(metric=m, selection=s)``, at every pairing:

* settings ``(m, s)``: ``m`` in ``{"euclidean", "forest"}`` and ``s`` in
  ``{"mode-ratio", "levels"}``; today's default is ``("euclidean",
  "mode-ratio")``;
* each setting's label-free fit, and the K-given fit of its metric (the rule
  plays no part when K is given).

**Decision rule, fixed before the run** (as ``lund_geometry.py``'s): the
score of a setting is the mean, over its two variants (K given, label-free),
of the median over the selection half's rows (25 sets, clean and ``+100``:
50 rows) of the per-row median ARI over seeds.  A setting replaces today's
default only if its score is higher and stays higher with each set left out
(its clean and ``+100`` rows together: 25 checks); among those, the highest
score.  The controls (touching, one-blob, multidensity, hierarchy) are
printed as K̂ per seed: one blob must stay at K̂ = 1.

``--half report`` runs the same fits on the report half (8 keel sets, clean
and ``+100``) for today's default and the settings named by ``--settings``;
run it once, after the choice.  At most ``--max-n`` (1,000) rows per set,
seeds ``0 .. seeds - 1``; rows are cached in ``DIR/rows.csv`` so a re-run
only fits what is missing.  Public API only.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from lund_geometry import fit_row  # the same fit record (this folder is on sys.path)

from geoforest import LUND
from geoforest_experiments.clustering_suite import NOISE_DIMS, REPORT, SELECTION, load_suite_data

CONTROLS = ("touching", "one-blob", "multidensity", "hierarchy")
TODAY = ("euclidean", "mode-ratio")
SETTINGS = (TODAY, ("euclidean", "levels"), ("forest", "mode-ratio"), ("forest", "levels"))
FIELDS = ("dataset", "metric", "selection", "seed", "k_true", "ari", "k_hat", "seconds", "error")


def run_one(name: str, metric: str, selection: str, seed: int, max_n: int) -> dict:
    """One fit; ``selection="given"`` is the K-given fit.  Errors are recorded."""
    X, y, _ = load_suite_data(name, max_n=max_n, seed=seed)
    k_true = int(np.unique(y[y >= 0]).size)
    given = selection == "given"
    model = LUND(
        n_clusters=k_true if given else None,
        selection="mode-ratio" if given else selection,
        metric=metric,
        random_state=seed,
        n_jobs=1,
    )
    row = {
        "dataset": name,
        "metric": metric,
        "selection": selection,
        "seed": seed,
        "k_true": k_true,
    }
    return fit_row(model, X, y, row)


def medians(rows: list[dict]) -> dict:
    """(dataset, metric, selection) -> (median ARI, median K̂, median seconds) over seeds."""
    out: dict = {}
    keys = {(r["dataset"], r["metric"], r["selection"]) for r in rows}
    for key in keys:
        mine = [r for r in rows if (r["dataset"], r["metric"], r["selection"]) == key]
        out[key] = tuple(
            float(np.median([float(r[c]) for r in mine])) for c in ("ari", "k_hat", "seconds")
        )
    return out


def score(table: dict, setting: tuple[str, str], names) -> float:
    """Mean over K given and label-free of the median over ``names`` of the per-row ARI."""
    metric, selection = setting
    variants = ((metric, "given"), (metric, selection))
    return float(np.mean([np.median([table[n, m, s][0] for n in names]) for m, s in variants]))


def report(rows: list[dict], sets, settings) -> None:
    table = medians(rows)
    noisy = tuple(f"{name}+{NOISE_DIMS}" for name in sets)
    k_true = {r["dataset"]: int(r["k_true"]) for r in rows}
    print("median over sets of the per-set median (ARI / |K̂ - K| / seconds)")
    variants = sorted({(m, "given") for m, _ in settings}) + list(settings)
    for label, names in (("clean", sets), (f"+{NOISE_DIMS}", noisy)):
        for m, s in variants:
            ari = np.median([table[n, m, s][0] for n in names])
            err = np.median([abs(table[n, m, s][1] - k_true[n]) for n in names])
            sec = np.median([table[n, m, s][2] for n in names])
            print(f"  {label:6s} {m:9s} {s:10s} ARI {ari:.3f}  |K̂-K| {err:.1f}  {sec:.2f} s")
    both = (*sets, *noisy)
    scores = {s: score(table, s, both) for s in settings}
    print("\nscore (mean of K given and label-free medians over clean and +100 rows)")
    for s, v in scores.items():
        print(f"  {s[0]:9s} {s[1]:10s} {v:.4f}")
    if TODAY in settings:
        for s in settings:
            if s == TODAY:
                continue
            held = [
                score(table, s, [d for d in both if d.partition("+")[0] != left])
                > score(table, TODAY, [d for d in both if d.partition("+")[0] != left])
                for left in sets
            ]
            print(f"  {s} above today's with each set left out: {sum(held)} of {len(held)}")
    present = {r["dataset"] for r in rows}
    if any(c in present for c in CONTROLS):
        print("\ncontrols, K̂ per seed (label-free)")
        for name in CONTROLS:
            for m, s in settings:
                mine = sorted(
                    (
                        r
                        for r in rows
                        if (r["dataset"], r["metric"], r["selection"]) == (name, m, s)
                    ),
                    key=lambda r: int(r["seed"]),
                )
                ks = [int(float(r["k_hat"])) for r in mine]
                print(f"  {name:13s} K={mine[0]['k_true']} {m:9s} {s:10s} {ks}")
    for r in rows:
        if r["error"]:
            print("error:", r["dataset"], r["metric"], r["selection"], r["seed"], r["error"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--out", type=Path, default=Path("lund-default"))
    parser.add_argument("--half", choices=("selection", "report"), default="selection")
    parser.add_argument(
        "--settings",
        nargs="*",
        default=["forest:levels"],
        help="with --half report: metric:selection pairs beside today's",
    )
    args = parser.parse_args()
    report_half = args.half == "report"
    sets = REPORT if report_half else SELECTION
    settings = SETTINGS
    if report_half:
        settings = (TODAY, *(tuple(s.split(":")) for s in args.settings))
    names = (*sets, *(f"{name}+{NOISE_DIMS}" for name in sets))
    if not report_half:
        names += CONTROLS
    variants = sorted({(m, "given") for m, _ in settings}) + list(settings)
    args.out.mkdir(parents=True, exist_ok=True)
    cache = args.out / "rows.csv"
    rows = list(csv.DictReader(cache.open())) if cache.exists() else []
    done = {(r["dataset"], r["metric"], r["selection"], int(r["seed"])) for r in rows}
    todo = [
        (n, m, s, seed)
        for n in names
        for seed in range(args.seeds)
        for m, s in variants
        if (n, m, s, seed) not in done
    ]
    rows += Parallel(n_jobs=args.jobs, verbose=5)(
        delayed(run_one)(n, m, s, seed, args.max_n) for n, m, s, seed in todo
    )
    with cache.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    rows = [r for r in rows if int(r["seed"]) < args.seeds and r["dataset"] in names]
    report(rows, sets, settings)


if __name__ == "__main__":
    main()
