"""Does a strong spectral step need the full excess?  The finest level on touching blobs.

    python studies/label_free_strong_steps.py [--seeds 3] [--n-jobs 2] [--cache DIR]

``gf.graph.label_free_levels`` supports a level ``K`` when its relative gap
reaches ``LEVEL_MIN_GAP`` (1.3) and its excess over the Gaussian references
reaches ``MIN_EXCESS`` (0.5).  On two-dimensional ``make_blobs`` the default
finds the number of blobs on only 4-5 seeds of 8: a pair of blobs that touch
makes a clear step (relative gap 2.8-4.1) whose excess over a Gaussian of
their part is 0.28-0.43 (``docs/results/label-free-levels.md``, "Round 6").
A relative gap of ``STRONG_RELATIVE_GAP`` (3) is already what structureless
data do not reach (``docs/defaults.md``, "Weak label-free evidence").  So
the candidate rules keep the default bars for every step and also accept a
*strong* one (gap >= 3) whose excess reaches a lower bar ``e`` (0, 0.1, 0.25):
the gap vouches that the step is not a blob's, the excess only that the
level is more clustered than its null.

Every fit is ``ForestSpectralClustering()`` at its defaults, once per data
set and seed; its ``levels_`` (gaps, excess, fragments, the partition of
every ``K``) are cached and the rules compared over the same levels.  Rows:
the selection half (25 sets, clean and +100), the controls, and a panel of
blobs, ``make_blobs(500, centers=c, n_features=d, random_state=s)`` for
``c`` in 2-5, ``d`` in (2, 5), ``s`` in 0-7 (fitted with seed 0).  ``e`` is
judged on the selection half by leaving one set out; the report half is never
read here.  Public API only.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

CONTROLS = ("touching", "one-blob", "multidensity", "hierarchy")
#: (name, ``strong_excess`` of ``choose_finest_level``); ``None``: both bars at every
#: step (the rule before this study); ``0.0`` is the default since (``STRONG_STEP_EXCESS``).
RULES = (("both bars", None), ("strong e=0.25", 0.25), ("strong e=0.1", 0.1), ("strong e=0", 0.0))
BLOBS = tuple((c, d, s) for d in (2, 5) for c in (2, 3, 4, 5) for s in range(8))


def panel_jobs(seeds: int) -> list[tuple[str, int]]:
    """``(name, seed)`` of every fit: the selection half clean and +100 and the
    controls for ``seeds`` seeds, and the blob panel once."""
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    jobs = [(n, s) for n in (*SELECTION, *noisy, *CONTROLS) for s in range(seeds)]
    return jobs + [(f"blobs:{c}:{d}:{s}", 0) for c, d, s in BLOBS]


def panel_data(name: str, seed: int):
    if name.startswith("blobs"):
        _, c, d, s = name.split(":")
        return make_blobs(500, centers=int(c), n_features=int(d), random_state=int(s))
    X, y, _ = load_suite_data(name, seed=seed)
    return X, y


def one(name: str, seed: int, cache: Path) -> dict:
    path = cache / f"{name.replace(':', '_')}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y = panel_data(name, seed)
    levels = gf.ForestSpectralClustering(random_state=seed, n_jobs=1).fit(X).levels_
    row = {
        "name": name,
        "seed": seed,
        "K": int(np.unique(y[y >= 0]).size),
        "n_clusters": int(levels.n_clusters),
        "n_components": int(levels.n_components),
        "gaps": np.asarray(levels.gaps, dtype=float),
        "excess": np.asarray(levels.excess, dtype=float),
        "fragmented": np.asarray(levels.fragmented, dtype=bool),
        "ari": {
            1: 0.0,
            **{int(k): float(adjusted_rand_score(y, lab)) for k, lab in levels.labels.items()},
        },
    }
    joblib.dump(row, path)
    return row


def choose(row: dict, low: float | None) -> int:
    """The finest supported level under the rule (at least the components)."""
    k = gf.graph.choose_finest_level(
        row["gaps"],
        row["excess"][1:],
        row["fragmented"],
        min_gap=gf.graph.LEVEL_MIN_GAP,
        min_excess=gf.graph.MIN_EXCESS,
        strong_excess=low,
    )
    return max(k, row["n_components"])


def score_picks(rows: list[dict], names, pick) -> tuple[float, float]:
    """Median over ``names`` of the per-set median ARI and |K^ - K|, K^ = ``pick(row)``."""
    ari, err = [], []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        ks = [pick(r) for r in mine]
        ari.append(np.median([r["ari"].get(k, 0.0) for r, k in zip(mine, ks, strict=True)]))
        err.append(np.median([abs(k - r["K"]) for r, k in zip(mine, ks, strict=True)]))
    return float(np.median(ari)), float(np.median(err))


def score(rows: list[dict], names, low) -> tuple[float, float]:
    return score_picks(rows, names, lambda r: choose(r, low))


def leave_one_set_out(rows: list[dict], candidates, score_of) -> None:
    """For each selection set, the candidate whose smaller median ARI (clean, +100) on
    the other sets is highest, scored on the left-out set; ``score_of(rows, names,
    candidate)`` is a study's :func:`score`.  Prints each pick and the left-out medians."""
    left, left_noisy = [], []
    for out in SELECTION:
        keep = [s for s in SELECTION if s != out]
        keep_noisy = [f"{s}+{NOISE_DIMS}" for s in keep]
        pick = max(
            candidates,
            key=lambda c: min(score_of(rows, keep, c)[0], score_of(rows, keep_noisy, c)[0]),
        )
        left.append(score_of(rows, [out], pick)[0])
        left_noisy.append(score_of(rows, [f"{out}+{NOISE_DIMS}"], pick)[0])
        print(f"  {out:16s} pick {pick}")
    print(f"  left-out median ARI clean {np.median(left):.3f} +100 {np.median(left_noisy):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("label_free_strong_steps_cache"))
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    jobs = panel_jobs(args.seeds)
    rows = Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(one)(n, s, args.cache) for n, s in jobs)
    for label, low in RULES:  # the fits' own rule is the one that reproduces them all
        same = all(choose(r, low) == r["n_clusters"] for r in rows)
        print(f"{label} reproduces every fit's n_clusters_: {same}")
    print(f"\n{'rule':14s} clean ARI |dK|   +100 ARI |dK|   blobs: K right (2-D / 5-D of 32)")
    for label, low in RULES:
        c, n = score(rows, SELECTION, low), score(rows, noisy, low)
        panel = [r for r in rows if r["name"].startswith("blobs")]
        right = {
            d: sum(choose(r, low) == r["K"] for r in panel if r["name"].split(":")[2] == str(d))
            for d in (2, 5)
        }
        print(
            f"{label:14s} {c[0]:.3f} {c[1]:4.1f}    {n[0]:.3f} {n[1]:4.1f}    "
            f"{right[2]} / {right[5]}"
        )
    print("\ncontrols, K^ per seed")
    for name in CONTROLS:
        mine = [r for r in rows if r["name"] == name]
        cells = "  ".join(f"{label}: {[choose(r, low) for r in mine]}" for label, low in RULES)
        print(f"  {name:13s} K={mine[0]['K']}  {cells}")
    print("\nper set whose median K^ moves (clean / +100)")
    for name in (*SELECTION, *noisy):
        mine = [r for r in rows if r["name"] == name]
        ks = [[choose(r, low) for r in mine] for _, low in RULES]
        if any(k != ks[0] for k in ks[1:]):
            aris = [score(rows, [name], low)[0] for _, low in RULES]
            print(f"  {name:20s} K={mine[0]['K']:2d}  K^ {ks}  ARI {np.round(aris, 3).tolist()}")
    print("\nleave one set out: the rule chosen on the others (the smaller of clean, +100)")
    by_label = dict(RULES)
    leave_one_set_out(rows, list(by_label), lambda r, names, lab: score(r, names, by_label[lab]))


if __name__ == "__main__":
    main()
