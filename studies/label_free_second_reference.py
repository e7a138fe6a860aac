"""Does every label-free fit need its second Gaussian reference?

    python studies/label_free_second_reference.py [--seeds 3] [--n-jobs 2] [--cache DIR]

``gf.graph.label_free_levels`` compares the data's spectrum with the mean
spectrum of ``N_REFERENCES`` (2) Gaussian references, each a forest, its
neighbours and its graph: at 2,000 points on ``make_blobs`` the two
references are most of the label-free fit's cost
(``benchmarks/bench_label_free.py``).  One reference alone read the one-blob
control as ``K = 2`` (``docs/results/label-free-levels.md``), so the second
is needed where the choice is close; but where the first reference leaves
every level far from its bars, the second cannot change ``K``.

The candidate rule draws the first reference, then the second only when
the choice is not one ``K`` for every excess within ``m`` of the first
reference's (the finest supported level of ``excess - m`` differs from that
of ``excess + m``).  Support is monotone in the excess and the finest level
monotone in the supported set, so when the second reference moves no
level's excess by more than ``m`` the rule gives exactly the two-reference
``K``.  This study measures, on the same pair of references, how far the
second moves the excess (the levels that decide ``K``) and, for each margin
``m``, the fits whose ``K`` then differs from two references' and the share
of fits that draw the second.

Each fit is ``ForestSpectralClustering()`` at its defaults (its gaps, its
fragments, its partitions and, above the most separated level, its mixture
excess, all unchanged by the rule); the two Gaussian references are drawn
here with ``gf.graph.gaussian_reference`` and run through the estimator's
own graph (``ForestSpectralClustering(2).fit(R).affinity_matrix_``).  Rows:
the selection half (25 sets, clean and +100), the controls, and the blob
panel of ``studies/label_free_strong_steps.py``.  The report half is never
read.  Public API only.
"""

from __future__ import annotations

import argparse
import importlib.util
import warnings
from pathlib import Path

import joblib
import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import NOISE_DIMS, SELECTION

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("strong", HERE / "label_free_strong_steps.py")
strong = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(strong)

CONTROLS = strong.CONTROLS
MARGINS = (0.05, 0.1, 0.2, 0.3, 0.5)


def _reference_mu(X: np.ndarray, rng, seed: int, max_k: int) -> np.ndarray:
    """The ``max_k`` smallest normalised-Laplacian eigenvalues of one Gaussian reference."""
    R = gf.graph.gaussian_reference(X, rng)
    A = gf.ForestSpectralClustering(2, random_state=seed, n_jobs=1).fit(R).affinity_matrix_
    lam, _ = gf.graph.spectral_eigs(A, max_k, random_state=seed)
    return np.maximum(1.0 - np.sort(lam)[::-1][:max_k], np.finfo(float).tiny)


def one(name: str, seed: int, cache: Path) -> dict:
    path = cache / f"{name.replace(':', '_')}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y = strong.panel_data(name, seed)
    levels = gf.ForestSpectralClustering(random_state=seed, n_jobs=1).fit(X).levels_
    max_k = levels.gaps.size
    lam = np.sort(np.asarray(levels.eigenvalues, dtype=float))[::-1][:max_k]
    rng = np.random.RandomState(10_000 + seed)
    refs = [_reference_mu(X, rng, 10_000 + seed + r, max_k) for r in range(2)]
    row = {
        "name": name,
        "seed": seed,
        "K": int(np.unique(y[y >= 0]).size),
        "n_components": int(levels.n_components),
        "gaps": np.asarray(levels.gaps, dtype=float),
        "excess": np.asarray(levels.excess, dtype=float),
        "fragmented": np.asarray(levels.fragmented, dtype=bool),
        "mu": np.maximum(1.0 - lam, np.finfo(float).tiny),
        "refs": np.asarray(refs),
        "ari": {
            1: 0.0,
            **{int(k): float(adjusted_rand_score(y, lab)) for k, lab in levels.labels.items()},
        },
    }
    joblib.dump(row, path)
    return row


def separated_level(gaps: np.ndarray, fragmented: np.ndarray) -> int:
    """The ``K`` of the largest relative gap among unfragmented partitions, as the levels do."""
    usable = np.isfinite(gaps) & ~fragmented
    usable[0] = False
    return int(np.argmax(np.where(usable, gaps, -np.inf))) + 1 if usable.any() else 1


def excess_over(row: dict, refs: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """Excess of every ``K`` (entry ``K - 1``) over the mean of ``refs``, the
    Gaussian levels moved by ``shift``; above the most separated level the
    fit's own mixture excess."""
    ex = np.full(row["gaps"].size, np.nan)
    ex[1:] = np.log(np.mean(refs, axis=0)[1:] / row["mu"][1:]) + shift
    k_sep = separated_level(row["gaps"], row["fragmented"])
    if 2 <= k_sep < ex.size:
        ex[k_sep:] = row["excess"][k_sep:]
    return ex


def choose(row: dict, ex: np.ndarray) -> int:
    k = gf.graph.choose_finest_level(
        row["gaps"],
        ex[1:],
        row["fragmented"],
        min_gap=gf.graph.LEVEL_MIN_GAP,
        min_excess=gf.graph.MIN_EXCESS,
    )
    return max(k, row["n_components"])


def sequential(row: dict, margin: float) -> tuple[int, bool]:
    """The rule's ``K`` and whether it drew the second reference."""
    first = row["refs"][:1]
    low = choose(row, excess_over(row, first, -margin))
    high = choose(row, excess_over(row, first, margin))
    if low == high:
        return low, False
    return choose(row, excess_over(row, row["refs"])), True


def moved(row: dict) -> np.ndarray:
    """How far the second reference moves the excess of the levels that can
    decide ``K`` (those with a relative gap of at least ``LEVEL_MIN_GAP``,
    up to the most separated one when the mixture decides above it)."""
    one_ref = excess_over(row, row["refs"][:1])
    two = excess_over(row, row["refs"])
    with np.errstate(invalid="ignore"):
        deciding = (row["gaps"] >= gf.graph.LEVEL_MIN_GAP) & ~row["fragmented"]
    k_sep = separated_level(row["gaps"], row["fragmented"])
    if 2 <= k_sep < deciding.size:
        deciding[k_sep:] = False
    return (two - one_ref)[deciding]


def median_ari(rows: list[dict], names, ks: dict) -> float:
    per_set = []
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        per_set.append(np.median([r["ari"].get(ks[id(r)], 0.0) for r in mine]))
    return float(np.median(per_set))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("label_free_second_reference_cache"))
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    noisy = tuple(f"{s}+{NOISE_DIMS}" for s in SELECTION)
    jobs = strong.panel_jobs(args.seeds)
    rows = Parallel(n_jobs=args.n_jobs, verbose=5)(delayed(one)(n, s, args.cache) for n, s in jobs)
    shifts = np.abs(np.concatenate([moved(r) for r in rows]))
    shifts = shifts[np.isfinite(shifts)]
    q = np.quantile(shifts, [0.5, 0.9, 0.99, 1.0])
    print(f"{len(rows)} fits; |excess moved by the second reference| over {shifts.size} deciding")
    print(f"levels: median {q[0]:.3f}, 90% {q[1]:.3f}, 99% {q[2]:.3f}, max {q[3]:.3f}")
    both = {id(r): choose(r, excess_over(r, r["refs"])) for r in rows}
    first = {id(r): choose(r, excess_over(r, r["refs"][:1])) for r in rows}
    print(f"\n{'rule':22s} K differs  second drawn  clean ARI  +100 ARI  controls K^")
    table = [("two references", both, len(rows)), ("one reference", first, 0)]
    for m in MARGINS:
        seq = {id(r): sequential(r, m) for r in rows}
        ks = {i: k for i, (k, _) in seq.items()}
        table.append((f"sequential m={m}", ks, sum(d for _, d in seq.values())))
    for label, ks, drawn in table:
        differs = [r for r in rows if ks[id(r)] != both[id(r)]]
        controls = {c: [ks[id(r)] for r in rows if r["name"] == c] for c in CONTROLS}
        clean, plus = median_ari(rows, SELECTION, ks), median_ari(rows, noisy, ks)
        print(
            f"{label:22s} {len(differs):9d}  {drawn:5d} of {len(rows)}  "
            f"{clean:9.3f}  {plus:8.3f}  {controls}"
        )
        for r in differs:
            print(f"    {r['name']} seed {r['seed']}: K^ {both[id(r)]} -> {ks[id(r)]} (K={r['K']})")


if __name__ == "__main__":
    main()
