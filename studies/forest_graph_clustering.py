"""Clustering on unsupervised-forest geometry before and after ``max_tied_fraction``.

The clustering suite's own rows use Euclidean graphs (LUND, LLPD-SC) and the
random projection forest (rpfCluster), which ``max_tied_fraction`` does not
touch.  The rows built on ``UnsupervisedForest`` geometry are these, run here
on every real data set of the suite (selection and report halves, at most
1,000 rows, the suite's preprocessing), 100 trees, seed 0, for
``max_tied_fraction=None`` (before) and ``0.05`` (the default):

* ``LUND (forest graph)``: LUND on the forest's 15-NN distance graph
  (``affinity="precomputed_distance"``), K estimated;
* ``LUND (forest graph)|K``: the same with the true K;
* ``forest spectral|K``: ``ForestSpectralClustering(forest=UnsupervisedForest())``
  with the true K.

Each line prints the adjusted Rand index and K^.  This is a before/after
report, not a selection: no default is chosen here.

Run::

    python studies/forest_graph_clustering.py          # about 10 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import warnings

from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import REPORT, SELECTION, load_suite_data

SETTINGS = {"before (None)": None, "after (0.05)": 0.05}


def run(name: str, fraction: float | None, seed: int = 0) -> dict[str, tuple[float, int]]:
    X, y, _ = load_suite_data(name, max_n=1000)
    k = int(y.max()) + 1
    forest = gf.UnsupervisedForest(
        n_estimators=100, max_tied_fraction=fraction, random_state=seed, n_jobs=2
    )
    G = forest.fit(X).kneighbors_graph(n_neighbors=15, mode="distance")
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, n_clusters in (("LUND (forest graph)", None), ("LUND (forest graph)|K", k)):
            lund = gf.LUND(affinity="precomputed_distance", n_clusters=n_clusters,
                           random_state=seed).fit(G)  # fmt: skip
            out[label] = (adjusted_rand_score(y, lund.labels_), lund.n_clusters_)
        spec = gf.ForestSpectralClustering(
            n_clusters=k,
            forest=gf.UnsupervisedForest(n_estimators=100, max_tied_fraction=fraction),
            random_state=seed,
        ).fit(X)
        out["forest spectral|K"] = (adjusted_rand_score(y, spec.labels_), spec.n_clusters_)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(SELECTION + REPORT))
    args = parser.parse_args()
    print("ARI (K^) per method: before (max_tied_fraction=None) -> after (0.05)")
    for name in args.data.split(","):
        half = "selection" if name in SELECTION else "report"
        res = {s: run(name, f) for s, f in SETTINGS.items()}
        cells = []
        for method in res["before (None)"]:
            (a0, k0), (a1, k1) = res["before (None)"][method], res["after (0.05)"][method]
            cells.append(f"{method}: {a0:.2f} ({k0}) -> {a1:.2f} ({k1})")
        print(f"{half:<9} {name:<15} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
