"""Which label-free rule picks rpfCluster's (beta_1, beta_2) best?  Candidates vs the oracle.

For each data set and seed: a 200-tree rpf-kernel, every (beta_1, beta_2) of
the grids ``geoforest.cluster.RPF_THRESHOLDS`` x ``RPF_SCALES``, NJW spectral clustering with the
true K, and then the candidate each rule would pick:

* ``oracle``  best clustering accuracy (uses the labels; the paper's protocol)
* ``gap``     largest eigengap lambda_K - lambda_{K+1} of the normalised affinity
* ``rel``     largest Laplacian eigenvalue ratio (1 - lambda_{K+1}) / (1 - lambda_K)
* ``ncut``    smallest normalised cut of the partition on the *raw* kernel S
* ``dist``    smallest k-means distortion in the NJW embedding
* ``cons``    partition agreeing best (mean ARI) with all other candidates
* ``sil``     largest silhouette with the kernel distance 1 - S
* ``fixed``   beta_1 = 0, beta_2 = 1

Prints mean accuracy / co-cluster accuracy per rule.  ``--standardize`` z-scores
every column (default: the paper's preprocessing, see experiments.rpf_cluster).

    python studies/rpf_beta_study.py iris,wine,wdbc --seeds 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, silhouette_score

import geoforest as gf
from geoforest.cluster import (
    RPF_SCALES,
    RPF_THRESHOLDS,
    sharpen_kernel,
)
from geoforest.graph import (
    normalized_affinity,
    spectral_eigs,
)
from geoforest.graph import spectral_embedding_njw as njw
from geoforest.metrics import clustering_accuracy, cocluster_accuracy
from geoforest_experiments.rpf_cluster import prepare

RULES = ("oracle", "gap", "rel", "ncut", "dist", "cons", "sil", "fixed")


def ncut(S: sp.csr_array, labels: np.ndarray, K: int) -> float:
    deg = np.asarray(S.sum(axis=1)).ravel()
    total = 0.0
    for c in range(K):
        m = labels == c
        vol = deg[m].sum()
        if vol == 0:
            return np.inf
        total += (vol - S[m][:, m].sum()) / vol
    return total


def candidates(X, y, K, seed, n_trees):
    S = sp.csr_array(
        gf.RandomProjectionForest(n_trees, random_state=seed, n_jobs=2).fit(X).proximity()
    )
    out = []
    for b1 in RPF_THRESHOLDS:
        for b2 in RPF_SCALES:
            A = sharpen_kernel(S, b1, b2)
            if len(y) <= 1000:
                M = normalized_affinity(A)[0].toarray()
                w, V = np.linalg.eigh((M + M.T) / 2)
                vals, vecs = w[::-1][: K + 1], V[:, ::-1][:, : K + 1]
            else:
                vals, vecs = spectral_eigs(A, K + 1, solver="arpack", random_state=seed)
            km = KMeans(K, n_init=10, random_state=seed).fit(njw(vecs[:, :K]))
            lab = km.labels_
            out.append(
                {
                    "b1": b1, "b2": b2, "labels": lab,
                    "acc": clustering_accuracy(y, lab), "co": cocluster_accuracy(y, lab),
                    "gap": vals[K - 1] - vals[K],
                    "rel": (1 - vals[K]) / max(1 - vals[K - 1], 1e-12),
                    "ncut": -ncut(S, lab, K), "dist": -km.inertia_ / len(y),
                }
            )  # fmt: skip
    D = 1.0 - S.toarray()
    np.fill_diagonal(D, 0.0)
    for i, o in enumerate(out):
        o["cons"] = np.mean(
            [adjusted_rand_score(o["labels"], p["labels"]) for j, p in enumerate(out) if j != i]
        )
        o["sil"] = (
            silhouette_score(D, o["labels"], metric="precomputed")
            if len(np.unique(o["labels"])) > 1
            else -1.0
        )
        o["oracle"] = o["acc"]
        o["fixed"] = 1.0 if (o["b1"], o["b2"]) == (0.0, 1.0) else 0.0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", help="comma-separated names, e.g. iris,wine,wdbc")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--standardize", action="store_true")
    args = parser.parse_args()
    for name in args.datasets.split(","):
        X, y, K = prepare(name)
        if args.standardize:
            X = (X - X.mean(axis=0)) / X.std(axis=0)
        picks = {r: [] for r in RULES}
        t0 = time.perf_counter()
        for seed in range(args.seeds):
            out = candidates(X, y, K, seed, args.trees)
            for r in RULES:
                best = out[int(np.argmax([o[r] for o in out]))]
                picks[r].append((best["acc"], best["co"]))
        sec = (time.perf_counter() - t0) / args.seeds
        cells = " | ".join(
            f"{r} {np.mean([a for a, _ in v]):.3f}/{np.mean([c for _, c in v]):.3f}"
            for r, v in picks.items()
        )
        print(f"{name:9s} ({sec:.0f}s/seed) | {cells}", flush=True)


if __name__ == "__main__":
    main()
