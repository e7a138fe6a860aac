"""The last significant gap, checked against a Gaussian null: issue 54's second-round
candidate, with bars chosen leave-one-set-out on the selection half (18 sets when
the bars were chosen; 25 since the few-level tabular sets joined it).

    python studies/label_free_gap_excess.py [--seeds 3] [--n-jobs 2] [--cache DIR]

The rule: among the K-way spectral partitions of the forest graph (K = 2 ..
16, none fragmented), take the *largest* K whose relative gap
``mu_(K+1) / mu_K`` reaches ``b`` and whose excess over Gaussian references
``log(mu_K(ref) / mu_K(data))`` (``gf.graph.spectral_excess``, two
references through the same pipeline) reaches ``e``; K = 1 when none does.
The largest relative gap (today's first step) finds the most separated
level; the last gap above a lower bar finds the finest one, and the excess
keeps a gap that one Gaussian blob would also show from counting
(``docs/results/label-free-levels.md`` has the first round).

For every (b, e) of the grid the script prints the median over the selection
sets of the per-set median ARI, clean and ``+100``, and the controls' K^;
then, leaving each parent set out (its clean and ``+100`` rows), the (b, e)
that maximises the smaller of the two medians on the others, and that pick's
ARI on the left-out set.  The report half is never read.  Public API only.
About 15 minutes on 2 cores.
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
from geoforest import graph as G
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

MAX_K = 16
GAP_BARS = (1.2, 1.3, 1.5, 1.7, 2.0)
EXCESS_BARS = (0.0, 0.3, 0.5, 0.8, 1.0)
CONTROL_SETS = ("touching", "one-blob", "multidensity", "hierarchy")


def graph_of(X: np.ndarray, k: int, seed: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gf.ForestSpectralClustering(n_clusters=k, random_state=seed, n_jobs=1).fit(X)


def one(name: str, seed: int, cache: Path) -> dict:
    path = cache / f"{name}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    K = len(np.unique(y[y >= 0]))
    model = graph_of(X, max(K, 1), seed)
    A = model.affinity_matrix_
    parts = G.spectral_partitions(A, MAX_K, random_state=seed, n_init=10)
    floor = G.min_cluster_size(X.shape[0])

    def build(points, s):
        return graph_of(points, 2, s).affinity_matrix_

    row = {
        "name": name,
        "seed": seed,
        "K": K,
        "k_given": adjusted_rand_score(y, model.labels_),
        "gaps": G.relative_gaps(parts.eigenvalues, MAX_K),
        "excess": G.spectral_excess(A, X, build, MAX_K, seed),  # entry K - 2
        "ok": {k: bool(np.bincount(lab).min() >= floor) for k, lab in parts.labels.items()},
        "ari": {k: adjusted_rand_score(y, lab) for k, lab in parts.labels.items()},
    }
    row["ari"][1] = adjusted_rand_score(y, np.zeros_like(y))
    joblib.dump(row, path)
    return row


def choose(row: dict, b: float, e: float) -> int:
    fragmented = [not row["ok"].get(k, False) for k in range(1, MAX_K + 1)]
    # This study measured both bars at every step (strong_excess=None), the rule
    # before the strong-step exemption (studies/label_free_strong_steps.py).
    return gf.graph.choose_finest_level(
        row["gaps"], row["excess"], fragmented, min_gap=b, min_excess=e, strong_excess=None
    )


def medians(rows: list[dict], b: float, e: float, names) -> tuple[float, float]:
    """Median over ``names`` of the per-set median ARI, and of |K^ - K|."""
    ari, err = [], []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        ks = [choose(r, b, e) for r in mine]
        ari.append(np.median([r["ari"][k] for r, k in zip(mine, ks, strict=True)]))
        err.append(np.median([abs(k - r["K"]) for r, k in zip(mine, ks, strict=True)]))
    return float(np.median(ari)), float(np.median(err))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("label-free-gap-excess-cache"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    names = [*SELECTION, *noisy, *CONTROL_SETS]
    rows = Parallel(n_jobs=args.n_jobs)(
        delayed(one)(nm, s, args.cache) for nm in names for s in range(args.seeds)
    )
    given = [
        float(np.median([np.median([r["k_given"] for r in rows if r["name"] == nm]) for nm in h]))
        for h in (SELECTION, noisy)
    ]
    print(f"K given: clean {given[0]:.3f}, +{NOISE_DIMS} {given[1]:.3f}")
    print(f"{'b':>5} {'e':>5} {'clean':>7} {'|dK|':>5} {'+100':>7} {'|dK|':>5}  controls K^")
    grid = [(b, e) for b in GAP_BARS for e in EXCESS_BARS]
    for b, e in grid:
        clean, noise = medians(rows, b, e, SELECTION), medians(rows, b, e, noisy)
        ctrl = {
            c: int(np.median([choose(r, b, e) for r in rows if r["name"] == c]))
            for c in CONTROL_SETS
        }
        cells = f"{clean[0]:7.3f} {clean[1]:5.1f} {noise[0]:7.3f} {noise[1]:5.1f}"
        print(f"{b:5.1f} {e:5.1f} {cells}  {ctrl}")
    print("\nLeave one set out (its clean and +100 rows): the pick on the others, scored on it")
    for out in SELECTION:
        keep = [s for s in SELECTION if s != out]
        keep_noisy = [f"{s}+{NOISE_DIMS}" for s in keep]
        score = {
            (b, e): min(medians(rows, b, e, keep)[0], medians(rows, b, e, keep_noisy)[0])
            for b, e in grid
        }
        b, e = max(score, key=score.get)
        left = [medians(rows, b, e, [n])[0] for n in (out, f"{out}+{NOISE_DIMS}")]
        print(f"{out:16s} pick b={b} e={e}  left-out ARI clean {left[0]:.3f} +100 {left[1]:.3f}")


if __name__ == "__main__":
    main()
