"""Clustering at scale: ForestSpectralClustering against the pipeline single-cell users run.

What is measured
----------------
Data (:func:`make_data`): ``n`` points in 50 dimensions from 10 Gaussian
clusters that touch, as an embedding (PCA to 50 components) of images or
cells looks: centres drawn N(0, 1) in a 10-dimensional latent space,
unit spread around them (they overlap: k-means with K given scores about
0.6), mapped into 50 dimensions by a random orthonormal map, plus
N(0, 0.5^2) in every one of the 50.  Labels are the clusters.

Methods, each in a fresh child process (its own peak memory, ``VmHWM``; an
untimed small fit first loads numba's kernels):

* ``forest|K``: ``ForestSpectralClustering(10)`` at its defaults;
* ``forest``: ``ForestSpectralClustering()``, K chosen without labels;
* ``pynndescent+leiden``: scanpy's recipe, pynndescent's approximate 15-NN
  graph, symmetrised, then leidenalg's RB-configuration partition at
  resolution 1 (igraph); an untimed small index compiles its numba code;
* ``sklearn+leiden``: the same with scikit-learn's exact 15-NN graph.

Every method gets the same cores: pynndescent's numba code uses all of them
by default, so the forests and scikit-learn's search get ``n_jobs=-1``
(``--n-jobs``); Leiden runs on one.

For ``forest|K`` the child then times the stages one by one through the
public API: the forest's ``fit`` (the fit's own settings), its
``kneighbors`` of every point (15), the shared-neighbour graph
(``gf.graph.knn_affinity``; the data have no copies and one component, so
nothing is bridged), the eigensolver (``gf.graph.spectral_eigs``) and
``gf.graph.spectral_clustering`` less the eigensolver (k-means in the
embedding).  What the label-free fit adds (the levels and their Gaussian
references) is its time less the K-given fit's.  Printed per ``n``: wall
time, ARI, the label share of the graph's 15-NN lists (the share of a
point's neighbours with its label, untimed: it tells a weaker graph from a
weaker cut of it), K^, peak memory, and each forest fit's time over the
pynndescent + Leiden pipeline's (issue 55 asks for at most 1.5x at 200,000
points).

How to run
----------
::

    python benchmarks/bench_cluster_scale.py                  # n = 20,000 and 60,000
    python benchmarks/bench_cluster_scale.py --n 200000 --methods forest|K pynndescent+leiden

Needs ``pynndescent``, ``igraph`` and ``leidenalg`` for the anchors.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402
from _memory import peak_rss_bytes  # noqa: E402

METHODS = ("forest|K", "forest", "pynndescent+leiden", "sklearn+leiden")
N_CLUSTERS = 10
N_NEIGHBORS = 15


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """10 touching Gaussian clusters in a 10-D latent space, embedded in 50-D with noise."""
    rng = np.random.RandomState(seed)
    centres = rng.normal(0.0, 1.0, size=(N_CLUSTERS, 10))
    y = rng.randint(N_CLUSTERS, size=n)
    Z = centres[y] + rng.normal(size=(n, 10))
    Q, _ = np.linalg.qr(rng.normal(size=(50, 10)))  # orthonormal columns
    X = Z @ Q.T + rng.normal(0.0, 0.5, size=(n, 50))
    return X.astype(np.float32), y


def leiden(A, seed: int) -> np.ndarray:
    """Leiden communities (RB configuration, resolution 1) of the symmetrised graph ``A``."""
    import igraph
    import leidenalg
    from scipy import sparse

    rows, cols = sparse.triu(A.maximum(A.T), k=1).nonzero()
    g = igraph.Graph(n=A.shape[0], edges=np.c_[rows, cols].tolist(), directed=False)
    part = leidenalg.find_partition(
        g, leidenalg.RBConfigurationVertexPartition, resolution_parameter=1.0, seed=seed
    )
    return np.asarray(part.membership, dtype=np.int64)


def knn_connectivity(ind: np.ndarray) -> Any:
    from scipy import sparse

    n, k = ind.shape
    rows = np.repeat(np.arange(n), k)
    return sparse.csr_matrix((np.ones(rows.size), (rows, ind.ravel())), shape=(n, n))


def forest_stages(X: np.ndarray, params: dict, seed: int) -> dict[str, float]:
    """The K-given fit's stages again, one by one through the public API."""
    import geoforest as gf

    stages: dict[str, float] = {}
    t = time.perf_counter()
    forest = gf.UnsupervisedForest(**params).fit(X)  # the fit's own settings
    stages["forest fit"] = time.perf_counter() - t
    t = time.perf_counter()
    _, ind = forest.kneighbors(n_neighbors=N_NEIGHBORS)
    stages["neighbours"] = time.perf_counter() - t
    t = time.perf_counter()
    A = gf.graph.knn_affinity(ind, X.shape[0])
    stages["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    gf.graph.spectral_eigs(A, N_CLUSTERS, random_state=seed, tol=1e-6)
    stages["eigensolver"] = time.perf_counter() - t
    t = time.perf_counter()
    gf.graph.spectral_clustering(A, N_CLUSTERS, random_state=seed, tol=1e-6)
    stages["k-means"] = time.perf_counter() - t - stages["eigensolver"]
    return stages


def run_child(method: str, n: int, seed: int, n_jobs: int) -> dict[str, Any]:
    from sklearn.metrics import adjusted_rand_score

    X, y = make_data(n, seed)
    stages: dict[str, float] = {}
    if method.startswith("forest"):
        import geoforest as gf

        warnings.simplefilter("ignore")  # the label-free choice's evidence warnings
        gf.ForestSpectralClustering(3, random_state=0).fit(make_data(500, 1)[0])  # load kernels
        k = N_CLUSTERS if method == "forest|K" else None
        t = time.perf_counter()
        model = gf.ForestSpectralClustering(k, random_state=seed, n_jobs=n_jobs).fit(X)
        seconds = time.perf_counter() - t
        labels, k_hat = model.labels_, int(model.n_clusters_)
        ind = model.kneighbors(return_distance=False)  # untimed: the graph's lists again
        if method == "forest|K":
            stages = forest_stages(X, model.forest_.get_params(), seed)
    else:
        leiden(knn_connectivity((np.arange(30)[:, None] + np.arange(1, 4)) % 30), seed)  # warm
        if method == "pynndescent+leiden":
            from pynndescent import NNDescent

            NNDescent(make_data(2000, 1)[0], n_neighbors=N_NEIGHBORS + 1)  # compile numba
        t = time.perf_counter()
        if method == "pynndescent+leiden":
            index = NNDescent(X, n_neighbors=N_NEIGHBORS + 1, random_state=seed)
            ind = index.neighbor_graph[0][:, 1:]
        else:
            from sklearn.neighbors import NearestNeighbors

            nn = NearestNeighbors(n_neighbors=N_NEIGHBORS, n_jobs=n_jobs).fit(X)
            ind = nn.kneighbors(return_distance=False)
        labels = leiden(knn_connectivity(ind), seed)
        seconds = time.perf_counter() - t
        k_hat = int(np.unique(labels).size)
    return {
        "method": method,
        "n": n,
        "seconds": seconds,
        "ari": float(adjusted_rand_score(y, labels)),
        "share": float((y[ind] == y[:, None]).mean()),
        "k_hat": k_hat,
        "peak_rss_mb": peak_rss_bytes() / 2**20,
        "stages": stages,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20_000, 60_000])
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=-1, help="threads of the forests and sklearn")
    parser.add_argument("--child", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--child-n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        report(run_child(args.child, args.child_n, args.seed, args.n_jobs))
        return 0
    import geoforest

    print(f"geoforest {geoforest.__version__}, numpy {np.__version__}, {os.cpu_count()} cores")
    for n in args.n:
        results = {}
        for method in args.methods:
            flags = {"child": method, "child-n": n, "seed": args.seed, "n-jobs": args.n_jobs}
            r = spawn_child(__file__, flags, what=f"{method} at n={n}")
            results[method] = r
            stages = "  ".join(f"{s} {v:.1f} s" for s, v in r["stages"].items())
            print(
                f"n={n:>9,} {method:20s} {r['seconds']:8.2f} s  ARI {r['ari']:.3f}  "
                f"share {r['share']:.3f}  "
                f"K^ {r['k_hat']:3d}  peak {r['peak_rss_mb']:7.0f} MB  {stages}",
                flush=True,
            )
        if "forest" in results and "forest|K" in results:
            extra = results["forest"]["seconds"] - results["forest|K"]["seconds"]
            print(f"n={n:>9,} label-free levels and references: {extra:.1f} s")
        anchor = results.get("pynndescent+leiden")
        if anchor:
            for method in ("forest|K", "forest"):
                if method in results:
                    ratio = results[method]["seconds"] / anchor["seconds"]
                    print(f"n={n:>9,} {method} / pynndescent+leiden: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
