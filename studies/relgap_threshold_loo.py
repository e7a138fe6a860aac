"""Leave-one-data-set-out check of the relative-gap bar (``MIN_RELATIVE_GAP = 2``).

    python studies/relgap_threshold_loo.py [--seeds 2]

For every data set of the clustering suite's selection half and every control,
the rpf-kernel of a 200-tree forest at its unfragmented beta_1 is sharpened at
each grid beta_2, and every (beta_2, K) is scored by its relative gap
``mu_(K+1) / mu_K`` and its partition's smallest cluster.  Then, for each bar
in a grid, the rule's K^ and ARI; and, leaving out one selection data set at
a time, the bar that the other eight would choose (smallest median |K^ - K|,
then largest median ARI, among bars that get every control right).  Public API
only; about 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest.cluster import (
    sharpen_kernel,
)
from geoforest.graph import (
    min_cluster_size,
    n_components,
    spectral_eigs,
    spectral_embedding_njw,
)
from geoforest_experiments.clustering_suite import CONTROLS, SELECTION, load_suite_data

SCALES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 20.0, 100.0)
BARS = (1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)
MAX_K = 10


def candidates(name: str, seed: int) -> tuple[int, list[dict]]:
    """(true K, every scored (beta_2, K) of one data set and seed)."""
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gf.ForestSpectralClustering(random_state=seed, n_jobs=2, affinity="kernel").fit(X)
    floor = min_cluster_size(y.size)
    rows = []
    for b2 in SCALES:
        A = sharpen_kernel(model.kernel_, model.threshold_, b2)
        values, vectors = spectral_eigs(A, MAX_K + 1, random_state=0, tol=1e-6)
        mu = np.maximum(1.0 - values, 1e-6)
        for k in range(n_components(values) + 1, MAX_K + 1):
            emb = spectral_embedding_njw(vectors[:, :k])
            labels = KMeans(k, n_init=4, random_state=0).fit_predict(emb)
            rows.append({"k": k, "gap": mu[k] / mu[k - 1], "b2": b2,
                         "ok": np.bincount(labels, minlength=k).min() >= floor,
                         "ari": adjusted_rand_score(y, labels)})  # fmt: skip
    return int(np.unique(y[y >= 0]).size), rows


def rule(k_true: int, rows: list[dict], bar: float) -> tuple[float, float]:
    """|K^ - K| and ARI of the relative-gap rule with this bar."""
    ok = [r for r in rows if r["ok"]]
    best = max(ok, key=lambda r: (r["gap"], r["b2"])) if ok else None
    k, ari = (1, 0.0) if best is None or best["gap"] < bar else (best["k"], best["ari"])
    if k_true == 1:
        ari = float(k == 1)
    return abs(k - k_true), ari


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    data = {n: [candidates(n, s) for s in range(args.seeds)] for n in SELECTION + CONTROLS}
    res = {b: {n: [rule(k, rows, b) for k, rows in runs] for n, runs in data.items()} for b in BARS}

    def med(bar, names):
        dk = np.median([np.mean([x[0] for x in res[bar][n]]) for n in names])
        ari = np.median([np.mean([x[1] for x in res[bar][n]]) for n in names])
        return dk, ari

    right = {b: all(np.mean([x[0] for x in res[b][n]]) == 0 for n in CONTROLS) for b in BARS}
    for b in BARS:
        dk, ari = med(b, SELECTION)
        print(
            f"bar {b:4}: selection median |K^-K| {dk:.1f}, ARI {ari:.3f}; controls right {right[b]}"
        )
    for out in SELECTION:
        rest = [n for n in SELECTION if n != out]
        allowed = [b for b in BARS if right[b]] or list(BARS)
        key = {b: (med(b, rest)[0], -med(b, rest)[1]) for b in allowed}
        tied = [b for b in allowed if key[b] == min(key.values())]
        print(f"without {out:9s}: bars {tied} tie; |K^-K| on {out} at 2: "
              f"{np.mean([x[0] for x in res[2.0][out]]):.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
