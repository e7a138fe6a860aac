"""Label-free scale rules for rpfCluster that need each candidate's embedding or kernel.

``rpf_rule_eval.py`` scores rules from cached labels and eigenvalues.  The
rules here need more of each candidate: the NJW embedding (k-means
distortion, the criterion Ng, Jordan and Weiss suggest for choosing their
scale), the forest distance ``1 - S`` (silhouette) or the unsharpened kernel
(normalised cut).  ``collect`` refits ``ForestSpectralClustering`` with its
defaults (K given, 200 trees, the experiment's preprocessing and
``kernel_neighbors``), re-clusters every candidate of the 5 x 10 grid on the
selection kernel (all points up to 1,000, else the 1,000-point subset) and
saves its features; ``evaluate`` prints mean accuracy / co-cluster accuracy
of each rule's pick on those selection points.  ::

    python studies/rpf_rule_features.py collect iris /tmp/rules 0 10
    python studies/rpf_rule_features.py evaluate /tmp/rules         # at the default's beta_1
    python studies/rpf_rule_features.py evaluate /tmp/rules --grid  # over the 5 x 10 grid
    python studies/rpf_rule_features.py evaluate /tmp/rules --by-scale  # each fixed beta_2

Rules (every one but ``unf`` refuses candidates with a cluster under
``max(5, 2 % n)`` points, as ``selection="stability"`` does; ties as in
:func:`~geoforest.cluster.select_best`):

* ``unf``      consensus (mean ARI with the other candidates): the default
* ``distort``  smallest k-means distortion of the NJW embedding (per point)
* ``sil``      largest silhouette on the forest distance ``1 - S``
* ``ncut``     smallest normalised cut of the unsharpened kernel ``S``
* ``gap``      largest eigengap ``lambda_K - lambda_{K+1}``
* ``relgap``   largest ``(1 - lambda_{K+1}) / (1 - lambda_K)``, the ratio of
               Laplacian eigenvalues that bounds how well K-way spectral
               clustering can do (higher-order Cheeger inequalities)
* ``cons_sil`` consensus + silhouette
* ``oracle``   best accuracy (uses the labels)
"""

from __future__ import annotations

import argparse
import pickle
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score, silhouette_score

from geoforest.cluster import RPF_SCALES, RPF_THRESHOLDS, ForestSpectralClustering, select_best
from geoforest.forest import RandomProjectionForest
from geoforest.metrics import clustering_accuracy, cocluster_accuracy
from geoforest_experiments import rpf_cluster


def _features(res, labels, K: int, S, D, degree) -> dict:
    """One candidate's features; ``D = 1 - S`` and the degrees are per kernel."""
    emb = np.setdiff1d(np.arange(labels.shape[0]), res.unembedded)
    E = res.embedding[emb]
    lab = labels[emb]
    distortion = sum(
        float(((E[lab == k] - E[lab == k].mean(axis=0)) ** 2).sum())
        for k in range(K)
        if np.any(lab == k)
    ) / max(emb.size, 1)
    sil = silhouette_score(D, labels, metric="precomputed") if np.unique(labels).size > 1 else -1.0
    onehot = sp.csr_array(
        (np.ones(labels.size), (np.arange(labels.size), labels)), shape=(labels.size, K)
    )
    within = np.asarray((onehot.T @ (S @ onehot)).toarray()).diagonal()
    volume = np.bincount(labels, weights=degree, minlength=K)
    ncut = float(np.sum((volume - within) / np.maximum(volume, 1e-300)))
    return {"distortion": distortion, "sil": float(sil), "ncut": ncut}


def collect(name: str, out: Path, first: int, stop: int) -> None:
    warnings.filterwarnings("ignore", category=UserWarning)
    X, y, K = rpf_cluster.prepare(name)
    kn = rpf_cluster.KERNEL_NEIGHBORS.get(name)
    runs = []
    for seed in range(first, stop):
        t0 = time.perf_counter()
        model = ForestSpectralClustering(
            K,
            forest=RandomProjectionForest(200),
            kernel_neighbors=kn,
            random_state=seed,
            n_jobs=1,
            affinity="kernel",
        ).fit(X)
        S = model.selection_kernel_
        sub = model.selection_indices_
        y_sel = y if sub is None else y[sub]
        D = 1.0 - S.toarray()  # the forest distance, at most 1,000 x 1,000
        np.fill_diagonal(D, 0.0)
        degree = np.asarray(S.sum(axis=1)).ravel()
        cands = []
        for b1 in RPF_THRESHOLDS:
            for b2 in RPF_SCALES:
                # K + 1 eigenvalues: the eigengap after K
                res = model.cluster_candidate(b1, b2, kernel=S, n_eigenvalues=K + 1)
                labels = res.labels
                cands.append(
                    {
                        "b1": b1,
                        "b2": b2,
                        "labels": labels,
                        "eig": res.eigenvalues,
                        "sizes": np.bincount(labels, minlength=K),
                        "acc": clustering_accuracy(y_sel, labels),
                        "co": cocluster_accuracy(y_sel, labels),
                        **_features(res, labels, K, S, D, degree),
                    }
                )
        runs.append({"seed": seed, "unf_b1": model.threshold_, "n": y_sel.size, "cands": cands})
        print(f"{name} seed {seed}: {time.perf_counter() - t0:.1f} s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{name}_{first}.pkl", "wb") as fh:
        pickle.dump({"name": name, "K": K, "runs": runs}, fh)


def _consensus(cands) -> np.ndarray:
    labels = [c["labels"] for c in cands]
    return np.array(
        [
            np.mean([adjusted_rand_score(a, b) for j, b in enumerate(labels) if j != i])
            for i, a in enumerate(labels)
        ]
    )


def _pick(cands, score, n: int, guard: bool = True) -> dict:
    score = np.asarray(score, dtype=float).copy()
    if guard:
        small = np.array([c["sizes"].min() < max(5, int(np.ceil(0.02 * n))) for c in cands])
        if not small.all():
            score[small] = -np.inf
    best = select_best(
        score, np.array([c["b2"] for c in cands]), np.array([c["b1"] for c in cands])
    )
    return cands[best]


RULES = {
    "unf": lambda cs, K, n: _pick(cs, _consensus(cs), n, guard=False),
    "distort": lambda cs, K, n: _pick(cs, [-c["distortion"] for c in cs], n),
    "sil": lambda cs, K, n: _pick(cs, [c["sil"] for c in cs], n),
    "ncut": lambda cs, K, n: _pick(cs, [-c["ncut"] for c in cs], n),
    "gap": lambda cs, K, n: _pick(cs, [c["eig"][K - 1] - c["eig"][K] for c in cs], n),
    "relgap": lambda cs, K, n: _pick(
        cs, [(1 - c["eig"][K]) / max(1 - c["eig"][K - 1], 1e-12) for c in cs], n
    ),
    "cons_sil": lambda cs, K, n: _pick(cs, _consensus(cs) + [c["sil"] for c in cs], n),
    "oracle": lambda cs, K, n: max(cs, key=lambda c: c["acc"]),
}


def _load(folder: Path) -> dict:
    data = {}
    for path in sorted(folder.glob("*.pkl")):
        with open(path, "rb") as fh:
            d = pickle.load(fh)
        K, runs = data.get(d["name"], (d["K"], []))
        data[d["name"]] = (K, runs + d["runs"])
    return data


def by_scale(folder: Path) -> None:
    """Mean accuracy / co-cluster of every fixed beta_2 at the default's beta_1."""
    data = _load(folder)
    names = list(data)
    print("| beta_2 | " + " | ".join(names) + " |")
    print("| ---: |" + " --- |" * len(names))
    for scale in RPF_SCALES:
        cells = []
        for name in names:
            chosen = [
                next(c for c in r["cands"] if c["b1"] == r["unf_b1"] and c["b2"] == scale)
                for r in data[name][1]
            ]
            acc = np.mean([c["acc"] for c in chosen])
            cells.append(f"{acc:.3f}/{np.mean([c['co'] for c in chosen]):.3f}")
        print(f"| {scale:g} | " + " | ".join(cells) + " |")


def evaluate(folder: Path, grid: bool) -> None:
    data = _load(folder)
    names = list(data)
    print("| rule | " + " | ".join(f"{m} ({len(data[m][1])})" for m in names) + " |")
    print("| --- |" + " --- |" * len(names))
    for rule, pick in RULES.items():
        cells = []
        for name in names:
            K, runs = data[name]
            chosen = [
                pick(
                    r["cands"] if grid else [c for c in r["cands"] if c["b1"] == r["unf_b1"]],
                    K,
                    r["n"],
                )
                for r in runs
            ]
            acc = np.mean([c["acc"] for c in chosen])
            co = np.mean([c["co"] for c in chosen])
            cells.append(f"{acc:.3f}/{co:.3f}")
        print(f"| {rule} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("name", choices=rpf_cluster.DATASETS_FULL)
    c.add_argument("out", type=Path)
    c.add_argument("first", type=int)
    c.add_argument("stop", type=int)
    e = sub.add_parser("evaluate")
    e.add_argument("folder", type=Path)
    e.add_argument("--grid", action="store_true", help="choose over the whole 5 x 10 grid")
    e.add_argument("--by-scale", action="store_true", help="every fixed beta_2 instead")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.name, args.out, args.first, args.stop)
    elif args.by_scale:
        by_scale(args.folder)
    else:
        evaluate(args.folder, args.grid)


if __name__ == "__main__":
    main()
