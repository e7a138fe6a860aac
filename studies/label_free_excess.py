"""The label-free fallback of ``ForestSpectralClustering``: the spectrum's excess over a reference.

For every set of the clustering suite's selection half, its ``+100`` rows and
the controls (seeds 0-2), the forest's 15-NN shared-neighbour graph and two
Gaussian references of the data's mean and covariance (same geometry, same
weights) give ``s_K = log(mean mu_K(reference) / mu_K(data))`` for K = 2..10.
Where the relative gap finds no structure (the estimator then consults the
references: ``reference_excess_`` is set), the K of
each candidate rule is printed with its ARI: the last K with ``s_K >= bar``
for several bars, and the last K within a fraction of the largest excess.
``docs/defaults.md`` reads the result; the bar of the library is
``geoforest.graph._reference.MIN_EXCESS``.

Run::

    python studies/label_free_excess.py          # about 3 minutes on 2 cores
"""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest_experiments.clustering_suite import CONTROLS, NOISY, SELECTION, load_suite_data

MAX_K = 10
BARS = (0.3, 0.5, 0.8, 1.0, 1.2)
FRACTIONS = (0.5, 0.7, 0.9)


def graph(X: np.ndarray, seed: int):
    forest = gf.UnsupervisedForest(n_estimators=100, n_jobs=1)
    geometry = gf.graph.make_geometry("forest", forest, random_state=seed).fit(X)
    return gf.graph.knn_affinity(geometry.neighbors(15)[1], X.shape[0])


def spectrum(A, seed: int) -> np.ndarray:
    values, _ = gf.graph.spectral_eigs(A, MAX_K, random_state=seed)
    return np.maximum(1 - np.sort(values)[::-1], 1e-300)


def one(name: str, seed: int) -> dict:
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.ForestSpectralClustering(
            random_state=seed, n_jobs=1, forest=gf.UnsupervisedForest(n_estimators=100)
        ).fit(X)
    # The relative gap found nothing exactly when the estimator consulted the references.
    gap_k = 1 if model.reference_excess_ is not None else model.n_clusters_
    A = graph(X, seed)
    parts = gf.graph.spectral_partitions(A, MAX_K, random_state=seed).labels
    rng = np.random.RandomState(seed)
    cov = np.atleast_2d(np.cov(X, rowvar=False))
    refs = [
        spectrum(graph(rng.multivariate_normal(X.mean(0), cov, size=X.shape[0]), seed + r), seed)
        for r in (1, 2)
    ]
    s = np.log(np.mean(refs, axis=0)[1:] / spectrum(A, seed)[1:])
    return {"name": name, "seed": seed, "y": y, "gap_k": gap_k, "s": s, "parts": parts}


def main() -> None:
    names = list(SELECTION) + [n for n in NOISY if n.split("+")[0] in SELECTION] + list(CONTROLS)
    jobs = [(n, s) for n in names for s in ((0, 1, 2) if n in CONTROLS else (0,))]
    rows = Parallel(n_jobs=2)(delayed(one)(n, s) for n, s in jobs)
    rules = {f"bar {b}": ("bar", b) for b in BARS}
    rules.update({f"fraction {f}": ("fraction", f) for f in FRACTIONS})
    for r in rows:
        if r["gap_k"] != 1:
            continue
        k_true = int(np.unique(r["y"][r["y"] >= 0]).size)
        cells = []
        for label, (kind, v) in rules.items():
            s = r["s"]
            above = np.flatnonzero(s >= (v if kind == "bar" else v * s.max()))
            k = 1 if (kind == "bar" and not above.size) or s.max() < 0.5 else int(above.max()) + 2
            labels = r["parts"][k] if k > 1 else np.zeros_like(r["y"])
            cells.append(f"{label}: K^={k} ARI={adjusted_rand_score(r['y'], labels):.2f}")
        excess = " ".join(f"{v:.2f}" for v in r["s"])
        print(f"{r['name']:<16} s{r['seed']} K={k_true:<3} s_K: {excess}\n    " + " | ".join(cells))


if __name__ == "__main__":
    main()
