"""Clustering on unsupervised-forest geometry: the paper's forest, proximity, the defaults.

The clustering suite's own rows use Euclidean graphs (LUND, LLPD-SC) and the
random projection forest (rpfCluster), which neither default touches.  The
rows built on ``UnsupervisedForest`` geometry are these, run here on every
real data set of the suite (the selection half by default, at most 1,000 rows,
the suite's preprocessing), 100 trees, seed 0, for three forests: the paper's
(``max_tied_fraction=None, distance="proximity"``), the defaults' trees
ranked by proximity (the default ranking before ``distance="auto"``), and
the defaults (ranked by the learned metric, ``distance_ == "relevance"``):

* ``LUND (forest graph)``: LUND on the forest's 15-NN distance graph
  (``metric="precomputed"``), K estimated;
* ``LUND (forest graph)|K``: the same with the true K;
* ``forest spectral|K``: ``ForestSpectralClustering(forest=UnsupervisedForest(),
  affinity="kernel")``
  with the true K (a proximity kernel: ``distance`` does not change it, so
  the last two forests give the same row).

Each line prints the adjusted Rand index and K^ per forest.  This is a
before/after report, not a selection: no default is chosen here.

Run::

    python studies/forest_graph_clustering.py          # about 12 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import warnings

from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import SELECTION, load_suite_data

SETTINGS = {
    "paper": {"max_tied_fraction": None, "distance": "proximity"},
    "proximity": {"distance": "proximity"},
    "defaults": {},
}


def run(name: str, params: dict, spectral: dict, seed: int = 0) -> dict[str, tuple[float, int]]:
    """The three rows of one data set; ``spectral`` caches the kernel row by forest."""
    X, y, _ = load_suite_data(name, max_n=1000)
    k = int(y.max()) + 1
    forest = gf.UnsupervisedForest(n_estimators=100, random_state=seed, n_jobs=2, **params)
    G = forest.fit(X).kneighbors_graph(n_neighbors=15, mode="distance")
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, n_clusters in (("LUND (forest graph)", None), ("LUND (forest graph)|K", k)):
            lund = gf.LUND(metric="precomputed", n_clusters=n_clusters,
                           random_state=seed).fit(G)  # fmt: skip
            out[label] = (adjusted_rand_score(y, lund.labels_), lund.n_clusters_)
        fraction = forest.max_tied_fraction
        if fraction not in spectral:
            spec = gf.ForestSpectralClustering(
                n_clusters=k,
                forest=gf.UnsupervisedForest(n_estimators=100, max_tied_fraction=fraction),
                random_state=seed,
                affinity="kernel",
            ).fit(X)
            spectral[fraction] = (adjusted_rand_score(y, spec.labels_), spec.n_clusters_)
        out["forest spectral|K"] = spectral[fraction]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        default=",".join(SELECTION),
        help="data sets (default: the selection half; the report half waits for a fixed rule)",
    )
    args = parser.parse_args()
    print("ARI (K^) per method: " + " -> ".join(SETTINGS))
    for name in args.data.split(","):
        half = "selection" if name in SELECTION else "report"
        spectral: dict = {}
        res = {label: run(name, params, spectral) for label, params in SETTINGS.items()}
        cells = []
        for method in res["paper"]:
            steps = " -> ".join(f"{res[s][method][0]:.2f} ({res[s][method][1]})" for s in SETTINGS)
            cells.append(f"{method}: {steps}")
        print(f"{half:<9} {name:<15} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
