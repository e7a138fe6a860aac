"""Edge weights of the neighbour graph behind ``ForestSpectralClustering(affinity="knn")``.

For every set of the clustering suite's selection half (or the sets given),
the forest's and the Euclidean 10- and 15-NN lists are weighted four ways
and clustered with the true K by scikit-learn's ``SpectralClustering(
affinity="precomputed")`` (seeds 0-2, median ARI): binary (the union of the
lists), self-tuning Gaussian ``exp(-d^2 / (s_i s_j))`` (``s`` the distance to
the 7th neighbour), UMAP-style fuzzy weights, and shared neighbours
(:func:`geoforest.graph.knn_affinity`).  ``--noise 100`` appends 100 Gaussian
columns (sd the median positive column sd).  ``docs/defaults.md`` ("The
geometry of each clusterer") reads the result.

Run::

    python studies/graph_weights.py                 # about 5 minutes on 2 cores
    python studies/graph_weights.py --noise 100
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import SpectralClustering
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest_experiments.clustering_suite import SELECTION, load_suite_data

KINDS = ("binary", "self-tuning", "fuzzy", "shared")


def weighted(dist: np.ndarray, ind: np.ndarray, k: int, kind: str) -> sp.csr_matrix:
    """The symmetric affinity of the first ``k`` entries of each list."""
    n = ind.shape[0]
    d, i = dist[:, :k], ind[:, :k]
    if kind == "shared":
        return gf.graph.knn_affinity(i, n)
    if kind == "binary":
        w = np.ones_like(d)
    elif kind == "self-tuning":
        s = np.maximum(d[:, min(6, k - 1)], 1e-12)
        w = np.exp(-(d**2) / (s[:, None] * s[i]))
    else:  # fuzzy: distances beyond the nearest, in units of their median
        rho = d[:, :1]
        s = np.maximum(np.median(d - rho, axis=1, keepdims=True), 1e-12)
        w = np.exp(-np.maximum(d - rho, 0) / s)
    G = sp.csr_matrix((w.ravel(), i.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    if kind == "fuzzy":
        return (G + G.T - G.multiply(G.T)).tocsr()
    return (0.5 * (G + G.T)).tocsr()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=",".join(SELECTION))
    parser.add_argument("--noise", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name in args.data.split(","):
        X, y, _ = load_suite_data(name, max_n=1000)
        if args.noise:
            sd = X.std(axis=0)
            scale = np.median(sd[sd > 0])
            noise = np.random.RandomState(1).standard_normal((X.shape[0], args.noise))
            X = np.hstack([X, scale * noise])
        k_true = int(y.max()) + 1
        forest = gf.UnsupervisedForest(n_estimators=100, random_state=0, n_jobs=2).fit(X)
        euclid = NearestNeighbors(n_neighbors=16).fit(X).kneighbors(X)
        lists = {
            "forest": forest.kneighbors(n_neighbors=15),
            "euclid": (euclid[0][:, 1:], euclid[1][:, 1:]),  # the point itself left out
        }
        cells = []
        for geometry, (dist, ind) in lists.items():
            for k in (10, 15):
                for kind in KINDS:
                    A = weighted(dist, ind, k, kind)
                    aris = [
                        adjusted_rand_score(
                            y, SpectralClustering(k_true, affinity="precomputed",
                                                  random_state=s).fit_predict(A)
                        )
                        for s in range(3)
                    ]  # fmt: skip
                    cells.append(f"{geometry}{k} {kind} {np.median(aris):.2f}")
        print(f"{name:<16} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
