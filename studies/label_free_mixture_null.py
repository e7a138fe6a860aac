"""A null per part: levels finer than the most separated one, judged against a Gaussian mixture.

    python studies/label_free_mixture_null.py [--seeds 3] [--n-jobs 1] [--cache DIR]
        [--mixture-references 2]

The default label-free rule (``gf.graph.label_free_levels``) judges every
level against Gaussian references of the *whole* set's mean and covariance.
Where one class stands far from the others that Gaussian is elongated, its
graph is itself nearly cut in two, and the excess of the finer levels (the
touching classes) falls under the bar.  Here the levels above the most
separated one (the largest unfragmented relative gap, ``K_sep``) are judged
against a mixture instead: one Gaussian per part of the ``K_sep``-way
partition, with that part's mean, covariance and size, run through the same
forest graph.

Rules compared on the selection half (18 sets when run; 25 now) (clean and +100) and the
controls, at most 1,000 rows, 3 seeds, every (b, e):

* ``global``: today's rule;
* ``mixture``: K <= K_sep by the global excess, K > K_sep by the mixture's;
* ``either``: K > K_sep by the larger of the two.

The global spectra come from ``studies/label_free_gap_excess.py``'s cache
(its ``one``), so both studies see the same graphs.  Public API only; the
report half is never read.
"""

from __future__ import annotations

import argparse
import importlib.util
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed

import geoforest as gf
from geoforest import graph as G
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION, load_suite_data

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("gap_excess", HERE / "label_free_gap_excess.py")
gap_excess = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gap_excess)

MAX_K = gap_excess.MAX_K
CONTROLS = gap_excess.CONTROL_SETS
BARS = [(b, e) for b in (1.3, 1.5) for e in (0.3, 0.5, 0.8)]


def mixture_reference(X: np.ndarray, labels: np.ndarray, seed: int) -> np.ndarray:
    """One Gaussian per part, with the part's mean, covariance and size."""
    rng = np.random.RandomState(seed)
    R = np.empty_like(X)
    for k in np.unique(labels):
        rows = labels == k
        R[rows] = G.gaussian_reference(X[rows], rng)
    return R


def one(name: str, seed: int, cache: Path, base_cache: Path, n_references: int = 2) -> dict:
    path = cache / f"{name}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    row = gap_excess.one(name, seed, base_cache)
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    gaps = np.where([row["ok"].get(k, False) for k in range(1, MAX_K + 1)], row["gaps"], np.nan)
    k_sep = int(np.nanargmax(gaps)) + 1 if np.isfinite(gaps).any() else 1
    row["k_sep"] = k_sep
    row["mixture"] = np.full(MAX_K - 1, np.nan)
    if k_sep >= 2:
        model = gap_excess.graph_of(X, max(row["K"], 1), seed)
        A = model.affinity_matrix_
        parts = G.spectral_partitions(A, MAX_K, random_state=seed, n_init=10)
        labels = parts.labels[k_sep]

        def build(points, s):  # the mixture, not the whole-set Gaussian spectral_excess drew
            return gap_excess.graph_of(mixture_reference(X, labels, s), 2, s).affinity_matrix_

        row["mixture"] = G.spectral_excess(
            A, X, build, MAX_K, seed, n_references, eigenvalues=parts.eigenvalues
        )
    joblib.dump(row, path)
    return row


def choose(row: dict, rule: str, b: float, e: float) -> int:
    fragmented = [not row["ok"].get(k, False) for k in range(1, MAX_K + 1)]
    excess = np.asarray(row["excess"], dtype=float).copy()  # entry K - 2
    if rule != "global" and row["k_sep"] >= 2:
        finer = np.arange(2, MAX_K + 1) > row["k_sep"]
        mix = np.asarray(row["mixture"], dtype=float)
        excess[finer] = mix[finer] if rule == "mixture" else np.fmax(excess, mix)[finer]
    return gf.graph.choose_finest_level(row["gaps"], excess, fragmented, min_gap=b, min_excess=e)


def median_ari(rows: list[dict], names, rule: str, b: float, e: float) -> tuple[float, float]:
    ari, err = [], []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        ks = [choose(r, rule, b, e) for r in mine]
        ari.append(np.median([r["ari"][k] for r, k in zip(mine, ks, strict=True)]))
        err.append(np.median([abs(k - r["K"]) for r, k in zip(mine, ks, strict=True)]))
    return float(np.median(ari)), float(np.median(err))


def leave_one_set_out(rows: list[dict]) -> None:
    """Each set (its clean and +100 rows) scored at the (rule, b, e) picked on the
    other 17 (the smaller of their clean and +100 medians), against the same
    pick restricted to the global rule: does the mixture null hold off the
    sets it was chosen on?"""
    print("\nLeave one set out: the pick on the other 17 sets, scored on the left-out one")
    left: dict[str, list[float]] = {"global": [], "global or mixture": []}
    left_noisy: dict[str, list[float]] = {"global": [], "global or mixture": []}
    for out in SELECTION:
        keep = [s for s in SELECTION if s != out]
        keep_noisy = [f"{s}+{NOISE_DIMS}" for s in keep]
        for label, rules in (("global", ("global",)), ("global or mixture", ("global", "mixture"))):
            score = {
                (r, b, e): min(
                    median_ari(rows, keep, r, b, e)[0], median_ari(rows, keep_noisy, r, b, e)[0]
                )
                for r in rules
                for b, e in BARS
            }
            r, b, e = max(score, key=score.get)
            left[label].append(median_ari(rows, [out], r, b, e)[0])
            left_noisy[label].append(median_ari(rows, [f"{out}+{NOISE_DIMS}"], r, b, e)[0])
            print(f"  {out:16s} {label:18s} pick {r} b={b} e={e}")
    for label in left:
        print(
            f"  {label:18s} left-out median ARI clean {np.median(left[label]):.3f} "
            f"+100 {np.median(left_noisy[label]):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=Path("label-free-mixture-cache"))
    parser.add_argument("--base-cache", type=Path, default=Path("label-free-gap-excess-cache"))
    parser.add_argument("--mixture-references", type=int, default=2)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    args.base_cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    names = [*SELECTION, *noisy, *CONTROLS]
    rows = Parallel(n_jobs=args.n_jobs)(
        delayed(one)(nm, s, args.cache, args.base_cache, args.mixture_references)
        for nm in names
        for s in range(args.seeds)
    )
    print(
        f"{'rule':8s} {'b':>4} {'e':>4} {'clean':>6} {'|dK|':>4} {'+100':>6} {'|dK|':>4}  controls"
    )
    for rule in ("global", "mixture", "either"):
        for b, e in BARS:
            clean = median_ari(rows, SELECTION, rule, b, e)
            noise = median_ari(rows, noisy, rule, b, e)
            ctrl = {c: [choose(r, rule, b, e) for r in rows if r["name"] == c] for c in CONTROLS}
            print(
                f"{rule:8s} {b:4.1f} {e:4.1f} {clean[0]:6.3f} {clean[1]:4.1f} "
                f"{noise[0]:6.3f} {noise[1]:4.1f}  {ctrl}"
            )
    leave_one_set_out(rows)
    print("\nper set at (1.3, 0.5): K, K_sep, K^ global -> mixture")
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        glob = [choose(r, "global", 1.3, 0.5) for r in mine]
        mix = [choose(r, "mixture", 1.3, 0.5) for r in mine]
        print(
            f"  {name:22s} K={mine[0]['K']:>2} K_sep={[r['k_sep'] for r in mine]} {glob} -> {mix}"
        )


if __name__ == "__main__":
    main()
