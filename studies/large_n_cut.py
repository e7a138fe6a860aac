"""The forest graph's cut on whole data sets: where the suite's 1,000 rows cannot look.

    python studies/large_n_cut.py [--sets letter magic ...] [--seeds 2] [--noise]

The clustering suite runs at most 1,000 points per set, where the forest
graph's spectral cut with K given is the best clusterer measured
(``docs/results/clustering-suite.md``).  Issue 55's benchmark shows it
falling behind scanpy's pipeline at 2·10⁵ points, and letter at 20,000
points puts most of its points in one cluster.  This study measures the
same question on real data: the selection half's sets of more than 5,000
points, whole (clean; ``--noise`` adds their ``+100`` rows), seeds
``0 .. seeds - 1``.  Per set and seed it prints the ARI of

* ``forest spectral|K``: ``ForestSpectralClustering(K)`` at its defaults;
* ``Leiden on forest``: Leiden (RB configuration, resolution 1) on that
  fit's own affinity (``affinity_matrix_``, the same graph, another cut);
* ``Euclid spectral|K``: ``ForestSpectralClustering(K, metric="euclidean")``;
* ``pynndescent+Leiden``: scanpy's pipeline, as ``benchmarks/bench_cluster_scale.py``;

and the label share of the forest's and Euclid's 15-NN lists (the share
of a point's neighbours with its label), the graph's connected components
before bridging (``n_bridges_ + 1``) and the largest cluster's share of the
points, then the medians over sets.  It chooses nothing yet: it is the
measurement a default for the large-n cut must start from.  Needs
``pynndescent``, ``igraph`` and ``leidenalg``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

from geoforest import ForestSpectralClustering
from geoforest_experiments.clustering_suite import NOISE_DIMS, load_suite_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_cluster_scale import knn_connectivity, leiden  # noqa: E402

SETS = ("musk2", "texture", "mnist10", "satimage", "magic", "penbased", "letter")
COLUMNS = ("forest spectral|K", "Leiden on forest", "Euclid spectral|K", "pynndescent+Leiden")


def _share(y: np.ndarray, ind: np.ndarray) -> float:
    return float((y[ind] == y[:, None]).mean())


def run(name: str, seed: int) -> dict:
    from pynndescent import NNDescent

    X, y, _ = load_suite_data(name, max_n=10**7)
    keep = y >= 0
    k = len(np.unique(y[keep]))
    row: dict = {"set": name, "seed": seed, "n": X.shape[0], "K": k}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forest = ForestSpectralClustering(k, random_state=seed).fit(X)
        euclid = ForestSpectralClustering(k, metric="euclidean", random_state=seed).fit(X)
    ind = NNDescent(X, n_neighbors=16, random_state=seed).neighbor_graph[0][:, 1:]
    labels = {
        "forest spectral|K": forest.labels_,
        "Leiden on forest": leiden(forest.affinity_matrix_, seed),
        "Euclid spectral|K": euclid.labels_,
        "pynndescent+Leiden": leiden(knn_connectivity(ind), seed),
    }
    for column, lab in labels.items():
        row[column] = adjusted_rand_score(y[keep], lab[keep])
    row["share forest"] = _share(y, forest.kneighbors(return_distance=False))
    row["share Euclid"] = _share(y, euclid.kneighbors(return_distance=False))
    row["components"] = forest.n_bridges_ + 1
    row["largest"] = np.bincount(forest.labels_).max() / X.shape[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--noise", action="store_true", help="add the sets' +100 rows")
    args = parser.parse_args()
    sets = list(args.sets) + ([f"{s}+{NOISE_DIMS}" for s in args.sets] if args.noise else [])
    keys = (*COLUMNS, "share forest", "share Euclid", "components", "largest")
    print("| set | n | K | " + " | ".join(keys) + " |")
    medians: dict[str, list[float]] = {c: [] for c in keys}
    for name in sets:
        rows = [run(name, seed) for seed in range(args.seeds)]
        cells = []
        for c in keys:
            value = float(np.median([r[c] for r in rows]))
            medians[c].append(value)
            cells.append(f"{value:.3g}" if c == "components" else f"{value:.3f}")
        print(
            f"| {name} | {rows[0]['n']} | {rows[0]['K']} | " + " | ".join(cells) + " |", flush=True
        )
    print("| median | | | " + " | ".join(f"{np.median(medians[c]):.3f}" for c in keys) + " |")


if __name__ == "__main__":
    main()
