"""The forest behind the clustering of whole data sets: redraws and rows per tree.

    python studies/large_n_forest.py [--sets letter magic ...] [--seeds 2] [--noise]
        [--variants default decay] [--bench 20000 200000]

At 2·10⁵ points of ``benchmarks/bench_cluster_scale.py``'s data the forest's
fit is 79 % of ``ForestSpectralClustering(10)``'s time and its graph is
weaker than at 2·10⁴ (15-NN label share 0.605 against 0.619).  Two ways to
grow it cheaper both make the graph better there: redraws that decay down
a branch that found no structure (``decay_redraws=True``) and a cap on the
rows per tree (``max_samples``).  The clustering suite's 1,000 rows per set
cannot show that (``studies/forest_spectral_redraws.py`` judged redraws and
trees there and kept the neighbours' forest), so this study measures it on
the selection half's sets of more than 5,000 points, whole (clean;
``--noise`` adds their ``+100`` rows), seeds ``0 .. seeds - 1``, K given,
and on the benchmark's data at the sizes of ``--bench``.

Variants (``--variants``; the forest passed to
``ForestSpectralClustering(K, forest=...)``):

* ``default``: ``UnsupervisedForest()``;
* ``decay``: ``UnsupervisedForest(decay_redraws=True)``;
* ``cap50k``: ``UnsupervisedForest(max_samples=min(0.5, 50_000 / n))``.

Per set, seed and variant: the ARI, the label share of the graph's 15-NN
lists, and the fit's time (2 threads); then the medians over sets per
variant.  Public API only; the report half is never read (``--half report``
reads it, once, after the choice).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

from geoforest import ForestSpectralClustering, UnsupervisedForest
from geoforest_experiments.clustering_suite import NOISE_DIMS, load_suite_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_cluster_scale import make_data  # noqa: E402

SELECTION = ("musk2", "texture", "mnist10", "satimage", "magic", "penbased", "letter")
#: The report half's sets of more than 2,500 points (read once, after the choice).
REPORT = ("marketing", "splice", "twonorm", "banana")
VARIANTS = ("default", "decay", "cap50k")


def forest_of(variant: str, n: int) -> UnsupervisedForest:
    if variant == "decay":
        return UnsupervisedForest(decay_redraws=True)
    if variant == "cap50k":
        return UnsupervisedForest(max_samples=min(0.5, 50_000 / n))
    return UnsupervisedForest()


def load(name: str):
    if name.startswith("bench"):
        X, y = make_data(int(name.split(":")[1]), 0)
        return X, y
    X, y, _ = load_suite_data(name, max_n=10**7)
    return X, y


def run(name: str, seed: int, variant: str) -> dict:
    X, y = load(name)
    keep = y >= 0
    k = len(np.unique(y[keep]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model = ForestSpectralClustering(
            k, forest=forest_of(variant, X.shape[0]), random_state=seed, n_jobs=2
        ).fit(X)
        seconds = time.perf_counter() - t
    ind = model.kneighbors(return_distance=False)
    return {
        "ari": adjusted_rand_score(y[keep], model.labels_[keep]),
        "share": float((y[ind] == y[:, None]).mean()),
        "seconds": seconds,
        "n": X.shape[0],
        "K": k,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", help="no names: the benchmark's data only")
    parser.add_argument("--half", choices=("selection", "report"), default="selection")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--noise", action="store_true", help="add the sets' +100 rows")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=["default", "decay"])
    parser.add_argument("--bench", type=int, nargs="*", default=[], help="benchmark data sizes")
    args = parser.parse_args()
    half = SELECTION if args.half == "selection" else REPORT
    base = list(half) if args.sets is None else list(args.sets)
    sets = base + ([f"{s}+{NOISE_DIMS}" for s in base] if args.noise else [])
    sets += [f"bench:{n}" for n in args.bench]
    cols = [f"{v} {c}" for v in args.variants for c in ("ARI", "share", "s")]
    print("| set | n | K | " + " | ".join(cols) + " |", flush=True)
    medians: dict[str, list[float]] = {c: [] for c in cols}
    for name in sets:
        cells = []
        for v in args.variants:
            rows = [run(name, seed, v) for seed in range(args.seeds)]
            for c, key in (("ARI", "ari"), ("share", "share"), ("s", "seconds")):
                value = float(np.median([r[key] for r in rows]))
                if not name.startswith("bench"):
                    medians[f"{v} {c}"].append(value)
                cells.append(f"{value:.1f}" if c == "s" else f"{value:.3f}")
        print(
            f"| {name} | {rows[0]['n']} | {rows[0]['K']} | " + " | ".join(cells) + " |", flush=True
        )
    if medians[cols[0]]:
        print(
            "| median of the sets | | | "
            + " | ".join(
                f"{np.median(medians[c]):.1f}"
                if c.endswith(" s")
                else f"{np.median(medians[c]):.3f}"
                for c in cols
            )
            + " |"
        )


if __name__ == "__main__":
    main()
