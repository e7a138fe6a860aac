"""Choosing a large node's split on a sample of its rows: what it costs the geometry.

    python studies/split_samples.py [--seeds 2] [--n-jobs -1] [--settings none 2048 4096 8192]
        [--data letter magic penbased satimage] [--noise 0 100]

``UnsupervisedForest(split_samples=s)`` chooses the projection and cut of a
node holding more than ``s`` rows on ``s`` of them, then sends all its rows
down the cut.  The suites' sets (at most 3,000 rows, 1,500 per tree) are
unchanged by any ``s >= 2048``, so the choice rests on larger data: the
clustering suite's selection sets that hold more rows, at full size (up to
20,000), clean and with 100 noise columns (``load_suite_data``'s
``"<name>+100"``).  Per setting, data set and seed: the forest's fit time,
the share of each point's 15 forest neighbours (``kneighbors`` at its
defaults) and of its 15 ``distance="proximity"`` neighbours that have its
label, and the ARI of spectral clustering with K given on the 15-NN graph
(``gf.graph.knn_affinity`` and ``gf.graph.spectral_clustering``, the path
``ForestSpectralClustering`` takes).  Printed: means over seeds per set, then
means over sets per setting.  Public API only; the report half is never read.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import SELECTION, load_suite_data

K_NEIGHBORS = 15


def purity(ind: np.ndarray, y: np.ndarray) -> float:
    """Share of the listed neighbours with the point's own label."""
    return float((y[ind] == y[:, None]).mean())


def one(X: np.ndarray, y: np.ndarray, setting: int | None, seed: int, n_jobs: int) -> dict:
    forest = gf.UnsupervisedForest(split_samples=setting, random_state=seed, n_jobs=n_jobs)
    t = time.perf_counter()
    forest.fit(X)
    seconds = time.perf_counter() - t
    _, ind = forest.kneighbors(n_neighbors=K_NEIGHBORS)
    _, ind_prox = forest.set_params(distance="proximity").kneighbors(n_neighbors=K_NEIGHBORS)
    k = len(np.unique(y))
    A = gf.graph.knn_affinity(ind, X.shape[0])
    labels = gf.graph.spectral_clustering(A, k, random_state=seed).labels
    return {
        "fit": seconds,
        "purity": purity(ind, y),
        "purity_prox": purity(ind_prox, y),
        "ari": adjusted_rand_score(y, labels),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--n-jobs", type=int, default=-1)
    parser.add_argument("--settings", nargs="+", default=["none", "2048", "4096", "8192"])
    parser.add_argument("--data", nargs="+", default=["letter", "magic", "penbased", "satimage"])
    parser.add_argument("--noise", nargs="+", type=int, default=[0, 100])
    args = parser.parse_args()
    if any(name not in SELECTION for name in args.data):
        raise SystemExit("--data: selection-half sets only")
    warnings.simplefilter("ignore")
    settings = [None if s == "none" else int(s) for s in args.settings]
    totals: dict[int | None, list[dict]] = {s: [] for s in settings}
    for name in args.data:
        for noise in args.noise:
            label = name if noise == 0 else f"{name}+{noise}"
            X, y, _ = load_suite_data(label, max_n=10**6)
            for s in settings:
                runs = [one(X, y, s, seed, args.n_jobs) for seed in range(args.seeds)]
                mean = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
                totals[s].append(mean)
                print(
                    f"{label:>14} n={X.shape[0]:>6} split_samples={s!s:>5}: "
                    f"fit {mean['fit']:6.1f} s  purity {mean['purity']:.4f}  "
                    f"proximity purity {mean['purity_prox']:.4f}  ARI|K {mean['ari']:.3f}",
                    flush=True,
                )
    print("\nmeans over sets")
    for s, rows in totals.items():
        mean = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
        print(
            f"split_samples={s!s:>5}: fit {mean['fit']:6.1f} s  purity {mean['purity']:.4f}  "
            f"proximity purity {mean['purity_prox']:.4f}  ARI|K {mean['ari']:.3f}"
        )


if __name__ == "__main__":
    main()
