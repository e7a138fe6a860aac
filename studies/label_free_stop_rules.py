"""Which supported level to stop at: the finest, or the last one that adds structure?

    python studies/label_free_stop_rules.py [--seeds 3] [--n-jobs 2] [--cache DIR]

``gf.graph.label_free_levels`` marks a level ``K`` *supported* when its
relative gap and its excess over the Gaussian references reach their bars and
no cluster is a fragment, and takes the finest supported level.  Where the
excess is high at every ``K`` (parts that are not Gaussian: coded columns,
clusters of unequal density) a spurious gap at a fine level is enough to be
chosen: the more levels are tested, the likelier one passes.  This study fits
``ForestSpectralClustering()`` at its defaults once per set and seed, keeps
its ``levels_`` (every level's gap, excess, fragments, support and labels),
and compares stopping rules over the same levels:

* ``finest``: today's rule, the finest supported level (must equal
  ``n_clusters_``);
* ``rising d``: walk the supported levels from the coarsest; a finer one is
  taken only if its excess exceeds the level taken so far by at least ``d``,
  and the walk stops at the first that does not (the gap statistic's
  "first K that the next does not beat", Tibshirani, Walther and Hastie
  2001, with the spectral excess as the gap);
* ``peak``: the supported level of largest excess.

Sets: the selection half (25 sets since the few-level tabular sets joined it),
clean and with 100 noise columns, and the controls; at most 1,000 rows, the
suite's loaders (``load_suite_data``: the controls are drawn once, with seed
0, and fitted with every seed; the real sets' K is their class count, the
multidensity control's 5 counts its background).  ``d`` is judged by
leaving one set out.  The report half is never read.  Public API only.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

CONTROLS = ("touching", "one-blob", "multidensity", "hierarchy")
RISES = (0.0, 0.1, 0.2, 0.3, 0.5)


def one(name: str, seed: int, cache: Path) -> dict:
    path = cache / f"{name}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y, _ = load_suite_data(name)
    model = gf.ForestSpectralClustering(random_state=seed, n_jobs=1).fit(X)
    lv = model.levels_
    ari = {1: 0.0}
    for k, labels in lv.labels.items():
        ari[int(k)] = float(adjusted_rand_score(y, labels))
    row = {
        "name": name,
        "seed": seed,
        "K": int(np.unique(y).size),
        "n_clusters": int(model.n_clusters_),
        "excess": np.asarray(lv.excess, dtype=float),
        "gaps": np.asarray(lv.gaps, dtype=float),
        "supported": np.asarray(lv.supported, dtype=bool),
        "ari": ari,
    }
    joblib.dump(row, path)
    return row


def choose(row: dict, rule: str, rise: float = 0.0) -> int:
    supported = [int(k) + 1 for k in np.flatnonzero(row["supported"])]
    if not supported:
        return row["n_clusters"]  # K = 1, or the components when no level is judged
    if rule == "finest":
        return supported[-1]
    excess = row["excess"]
    if rule == "peak":
        return max(supported, key=lambda k: (excess[k - 1], -k))
    taken = supported[0]
    for k in supported[1:]:
        if not excess[k - 1] >= excess[taken - 1] + rise:
            break
        taken = k
    return taken


def score(rows: list[dict], names, rule: str, rise: float = 0.0) -> tuple[float, float]:
    ari, err = [], []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        ks = [choose(r, rule, rise) for r in mine]
        ari.append(np.median([r["ari"].get(k, 0.0) for r, k in zip(mine, ks, strict=True)]))
        err.append(np.median([abs(k - r["K"]) for r, k in zip(mine, ks, strict=True)]))
    return float(np.median(ari)), float(np.median(err))


RULES = [("finest", 0.0), ("peak", 0.0), *(("rising", d) for d in RISES)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("label_free_stop_rules_cache"))
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    names = (*SELECTION, *noisy, *CONTROLS)
    rows = Parallel(n_jobs=args.n_jobs, verbose=5)(
        delayed(one)(n, s, args.cache) for n in names for s in range(args.seeds)
    )
    bad = [r["name"] for r in rows if choose(r, "finest") != r["n_clusters"]]
    print("finest == n_clusters_ on every fit:", not bad, bad[:5])
    print(f"\n{'rule':12s} clean ARI |dK|   +100 ARI |dK|")
    for rule, d in RULES:
        c, n = score(rows, SELECTION, rule, d), score(rows, noisy, rule, d)
        print(f"{rule} {d:<5}  {c[0]:.3f} {c[1]:4.1f}    {n[0]:.3f} {n[1]:4.1f}")
    print("\ncontrols, K^ per seed")
    for name in CONTROLS:
        mine = [r for r in rows if r["name"] == name]
        ks = {f"{rule} {d}": [choose(r, rule, d) for r in mine] for rule, d in RULES}
        print(f"  {name:13s} K={mine[0]['K']}", "  ".join(f"{k}:{v}" for k, v in ks.items()))
    print("\nper set (clean / +100): K, K^ by finest, peak, rising 0.1")
    for name in SELECTION:
        cells = []
        for nm in (name, f"{name}+{NOISE_DIMS}"):
            mine = [r for r in rows if r["name"] == nm]
            cells.append(
                "/".join(
                    str(int(np.median([choose(r, rule, d) for r in mine])))
                    for rule, d in (("finest", 0.0), ("peak", 0.0), ("rising", 0.1))
                )
            )
        k = next(r["K"] for r in rows if r["name"] == name)
        print(f"  {name:16s} K={k:2d}  {cells[0]:>9s}  {cells[1]:>9s}")
    print("\nleave one set out: d chosen on the others (the smaller of clean, +100 medians)")
    left, left_noisy, left_err = [], [], []
    for out in SELECTION:
        keep = [s for s in SELECTION if s != out]
        keep_noisy = [f"{s}+{NOISE_DIMS}" for s in keep]
        pick = max(
            RULES,
            key=lambda rd: min(score(rows, keep, *rd)[0], score(rows, keep_noisy, *rd)[0]),
        )
        left.append(score(rows, [out], *pick)[0])
        left_noisy.append(score(rows, [f"{out}+{NOISE_DIMS}"], *pick)[0])
        left_err.append(score(rows, [out], *pick)[1])
        print(f"  {out:16s} pick {pick}")
    print(
        f"  left-out median ARI clean {np.median(left):.3f} +100 {np.median(left_noisy):.3f}"
        f" |dK| clean {np.median(left_err):.1f}"
    )


if __name__ == "__main__":
    main()
