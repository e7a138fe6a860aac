"""Which level of structure does a label-free rule find? Candidate rules for issue 54,
on the forest's kNN graph, on the clustering suite's *selection* half and its controls only.

    python studies/label_free_levels.py [--seeds 3] [--n-jobs 2] [--cache DIR] [--gmeans]

Issue 54: with K given, spectral clustering of the forest's graph is the best
clusterer measured; without K, the relative-gap rule finds the *coarsest*
level (K = 2 where one class separates completely). This study scores rules
that aim at the *finest supported* level, all on the same graph per data set
and seed (``ForestSpectralClustering(n_clusters=K).affinity_matrix_``, the
default geometry), so that only the rule differs:

* ``largest``: the default's first step, the largest unfragmented relative
  gap ``mu_(K+1) / mu_K`` (``choose_by_relative_gap``);
* ``last-gap b``: the largest K whose unfragmented relative gap reaches ``b``;
* ``recursive b``: split the graph by the relative-gap rule at bar ``b``, then
  each part's own subgraph again, until no part's gap reaches ``b``; scored on
  the leaves and (``+global``) on a spectral clustering of the whole graph at
  the number of leaves;
* ``modularity``: the K-way spectral partition of largest Newman modularity;
* ``excess b``: the largest K whose excess ``log(mu_K(ref) / mu_K(data))`` over
  two Gaussian references (same pipeline, fresh forests; ``spectral_excess``)
  reaches ``b``;
* ``excess-modularity``: the K of largest modularity above that of the
  Gaussian reference's own K-way partition;
* ``stability``: the largest K whose partition agrees (ARI >= 0.9) with the
  partition of a second forest's graph (the next seed's);
* ``gmeans`` (``--gmeans``, slow): G-means on the graph: bisect a part while a
  fresh forest's graph of it (at most 400 points) has an excess at K = 2 of at
  least 0.5 over its own Gaussian reference.

Prints, per rule, the median over data sets of the per-set median ARI and
|K^ - K|, for the clean sets, the ``+100`` sets and the controls; and K^ per
set.  Uses only public API.  About 15 minutes on 2 cores (35 with ``--gmeans``).
"""

from __future__ import annotations

import argparse
import warnings
from collections import defaultdict
from pathlib import Path

import joblib
import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.metrics import adjusted_rand_score

import geoforest as gf
from geoforest import graph as G
from geoforest_experiments.clustering_suite import (
    CONTROLS,
    NOISE_DIMS,
    SELECTION,
    load_suite_data,
)

MAX_K = 10
CONTROL_SETS = ("touching", "one-blob", "multidensity")


def forest_graph(X: np.ndarray, k: int, seed: int) -> gf.ForestSpectralClustering:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gf.ForestSpectralClustering(n_clusters=k, random_state=seed, n_jobs=1).fit(X)


def modularity(A, labels: np.ndarray) -> float:
    """Newman's weighted modularity of ``labels`` on the symmetric affinity ``A``."""
    A = sp.csr_matrix(A)
    total = A.sum()
    degree = np.asarray(A.sum(axis=1)).ravel()
    Z = sp.csr_matrix((np.ones(labels.size), (np.arange(labels.size), labels)))
    inner = (Z.T @ A @ Z).diagonal()
    return float(np.sum(inner / total - (Z.T @ degree / total) ** 2))


def unfragmented(parts, floor: int) -> dict[int, bool]:
    return {k: np.bincount(lab).min() >= floor for k, lab in parts.labels.items()}


def recursive(A, seed: int, bar: float, floor: int, depth: int = 0) -> np.ndarray:
    """Leaf labels of recursive relative-gap splitting of ``A`` (rows of ``A``)."""
    n = A.shape[0]
    if n < 2 * floor or depth > 6:
        return np.zeros(n, dtype=int)
    parts = G.spectral_partitions(A, min(MAX_K, n - 1), random_state=seed)
    gaps = G.relative_gaps(parts.eigenvalues, min(MAX_K, n - 1))
    ok = unfragmented(parts, floor)
    g = np.array([gaps[k - 1] if ok.get(k, False) else -np.inf for k in range(1, gaps.size + 1)])
    g[~np.isfinite(g)] = -np.inf
    if g.max() < bar:
        return np.zeros(n, dtype=int)
    labels = parts.labels[int(np.argmax(g)) + 1]
    out, offset = np.zeros(n, dtype=int), 0
    for c in range(labels.max() + 1):
        rows = np.flatnonzero(labels == c)
        sub = recursive(A[rows][:, rows].tocsr(), seed, bar, floor, depth + 1)
        out[rows] = sub + offset
        offset += sub.max() + 1
    return out


def gmeans(A, X, rows, seed, floor, depth=0, m=400, bar=0.5) -> list[np.ndarray]:
    if rows.size < 2 * floor or depth > 5:
        return [rows]
    rng = np.random.RandomState(seed + depth)
    sample = rows if rows.size <= m else np.sort(rng.choice(rows, m, replace=False))
    P = X[sample]

    def build(points, s):
        return forest_graph(points, 2, s).affinity_matrix_

    if G.spectral_excess(build(P, seed), P, build, 2, seed, n_references=1)[0] < bar:
        return [rows]
    labels = G.spectral_clustering(A[rows][:, rows], 2, random_state=seed).labels
    if np.bincount(labels, minlength=2).min() < floor:
        return [rows]
    return [
        leaf
        for c in range(2)
        for leaf in gmeans(A, X, rows[labels == c], seed, floor, depth + 1, m, bar)
    ]


def one(name: str, seed: int, cache: Path, with_gmeans: bool) -> dict:
    path = cache / f"{name}_{seed}.joblib"
    if path.exists():
        return joblib.load(path)
    warnings.simplefilter("ignore")
    X, y, _ = load_suite_data(name, max_n=1000, seed=seed)
    K = len(np.unique(y[y >= 0]))
    model = forest_graph(X, K, seed)
    A, n = model.affinity_matrix_, X.shape[0]
    floor = G.min_cluster_size(n)
    parts = G.spectral_partitions(A, MAX_K, random_state=seed, n_init=10)
    ok = unfragmented(parts, floor)
    gaps = G.relative_gaps(parts.eigenvalues, MAX_K)
    ari = lambda labels: adjusted_rand_score(y, labels)  # noqa: E731
    at = lambda k: parts.labels[k] if k > 1 else np.zeros(n, dtype=int)  # noqa: E731
    found: dict[str, tuple[int, np.ndarray]] = {}

    frag = np.array([[not ok.get(k, False) for k in range(1, MAX_K + 1)]])
    _, k, _ = G.choose_by_relative_gap(gaps[None], frag, base_k=G.n_components(parts.eigenvalues))
    found["largest"] = (k, at(k))
    for bar in (2.0, 3.0):
        good = [k for k in ok if ok[k] and np.isfinite(gaps[k - 1]) and gaps[k - 1] >= bar]
        k = max(good, default=1)
        found[f"last-gap {bar}"] = (k, at(k))
        leaves = recursive(A, seed, bar, floor)
        k = leaves.max() + 1
        found[f"recursive {bar}"] = (k, leaves)
        found[f"recursive {bar} +global"] = (k, at(k) if k <= MAX_K else leaves)
    Q = {k: modularity(A, lab) for k, lab in parts.labels.items() if ok[k]}
    k = max(Q, key=Q.get, default=1)
    found["modularity"] = (k, at(k))

    def build(points, s):
        return forest_graph(points, 2, s).affinity_matrix_

    excess = G.spectral_excess(A, X, build, MAX_K, seed)  # entry K - 2
    for bar in (0.5, 1.0):
        good = [k for k in ok if ok[k] and excess[k - 2] >= bar]
        k = max(good, default=1)
        found[f"excess {bar}"] = (k, at(k))
    R = G.gaussian_reference(X, np.random.RandomState(seed + 7))
    ref = G.spectral_partitions(build(R, seed + 1), MAX_K, random_state=seed, n_init=10)
    dQ = {k: Q[k] - modularity(build(R, seed + 1), ref.labels[k]) for k in Q}
    k = max(dQ, key=dQ.get, default=1)
    k = k if dQ.get(k, 0.0) >= 0.05 else 1
    found["excess-modularity"] = (k, at(k))
    other = G.spectral_partitions(
        forest_graph(X, K, seed + 1000).affinity_matrix_, MAX_K, random_state=seed, n_init=10
    )
    agree = {k: adjusted_rand_score(parts.labels[k], other.labels[k]) for k in ok}
    stable = [k for k in ok if ok[k] and agree[k] >= 0.9]
    k = max(stable, default=1)
    found["stability"] = (k, at(k))
    if with_gmeans:
        leaves = gmeans(A, X, np.arange(n), seed, floor)
        labels = np.zeros(n, dtype=int)
        for i, rows in enumerate(leaves):
            labels[rows] = i
        found["gmeans"] = (len(leaves), labels)
    row = {"name": name, "seed": seed, "K": K, "k-given": (K, ari(model.labels_))}
    row.update({rule: (int(k), ari(labels)) for rule, (k, labels) in found.items()})
    joblib.dump(row, path)
    return row


def group(name: str) -> str:
    if name in CONTROLS:
        return "control"
    return f"+{NOISE_DIMS}" if "+" in name else "clean"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("label-free-levels-cache"))
    parser.add_argument("--gmeans", action="store_true")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    names = [*SELECTION, *(f"{s}+{NOISE_DIMS}" for s in SELECTION), *CONTROL_SETS]
    jobs = [(nm, s) for nm in names for s in range(args.seeds)]
    rows = Parallel(n_jobs=args.n_jobs)(
        delayed(one)(nm, s, args.cache, args.gmeans) for nm, s in jobs
    )
    rules = [r for r in rows[0] if r not in ("name", "seed", "K")]
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for rule in rules:
            if rule in r:
                k, ari = r[rule]
                by[(group(r["name"]), rule)][r["name"]].append((ari, abs(k - r["K"]), k))
    print(f"{'rule':26s}" + "".join(f"{g:>22s}" for g in ("clean", f"+{NOISE_DIMS}", "control")))
    for rule in rules:
        cells = []
        for g in ("clean", f"+{NOISE_DIMS}", "control"):
            sets = by[(g, rule)].values()
            ari = np.median([np.median([a for a, _, _ in v]) for v in sets])
            err = np.median([np.median([e for _, e, _ in v]) for v in sets])
            cells.append(f"{ari:8.3f} |dK| {err:4.1f}")
        print(f"{rule:26s}" + "".join(f"{c:>22s}" for c in cells))
    print("\nK^ (median over seeds) per set:")
    for name in names:
        ks = {
            rule: int(np.median([k for _, _, k in by[(group(name), rule)][name]])) for rule in rules
        }
        print(f"{name:18s}", " ".join(f"{rule}={k}" for rule, k in ks.items() if rule != "k-given"))


if __name__ == "__main__":
    main()
