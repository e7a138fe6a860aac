"""Score label-free (beta_1, beta_2) rules on candidates cached by ``rpf_rule_cache.py``.

Every rule sees a grid of candidate partitions (the model's default grid or
the oracle's fine grid) and picks one without labels; the table gives the
mean accuracy / co-cluster accuracy of the picks over the cached seeds, the
oracle (best accuracy on the grid) and the oracle-to-rule gap.  Rules:

* ``cons``     mean adjusted Rand index with every other candidate, ties to the
               first in grid order (the default until 2026-11-23)
* ``cons_tb``  ``cons`` with the estimator's tie-break (``select_best``: among
               tied scores the largest beta_2, then the smallest beta_1)
* ``cons_k``   ``cons`` among the candidates whose own eigengap estimates K
               (all candidates when none does)
* ``cons_w``   mean ARI weighted by the other candidates' relative eigengap
* ``gap``      largest eigengap lambda_K - lambda_{K+1}
* ``stage2``   per beta_1 the ``cons`` pick over beta_2, then ``cons`` among those
* ``refuse2``, ``refuse3``  ``cons_tb`` among the candidates whose lambda_{K+1} is
               below 1 - 1e-2 (1e-3): candidates whose graph has at least K + 1
               (almost) disconnected pieces are refused.  Needs the spectrum, so
               on caches written by the experiment's ``--sweep-dir`` it only
               means something on the default grid.

* ``unf``      the estimator's default (``selection="unfragmented"``): the beta_1
               it chose (read from the experiment's ``rpf_cluster.csv`` files given
               after the directory), then ``cons_tb`` over beta_2 at that beta_1; on
               the fine grid this is consensus over the fine beta_2 grid
* ``unf_r3``   ``unf`` refusing candidates with lambda_{K+1} > 1 - 1e-3 (default grid)
* ``unf_w``    ``unf`` with the ``cons_w`` weights (default grid)
* ``unf_sharp`` at ``unf``'s beta_1 the smallest beta_2 whose graph has at most K
               connected components and lambda_{K+1} < 1 - 1e-3 (default grid)

    python studies/rpf_rule_eval.py /tmp/rules
    python studies/rpf_rule_eval.py .rpf-sweeps /tmp/rpf/*/rpf_cluster.csv   # the runs' csv files
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from geoforest.cluster import select_best
from geoforest.graph import estimate_n_clusters
from geoforest.metrics import clustering_accuracy, cocluster_accuracy


def ari_matrix(labels: np.ndarray) -> np.ndarray:
    """Adjusted Rand index of every pair of partitions, from one product of one-hot codes."""
    m, n = labels.shape
    k = int(labels.max()) + 1
    B = np.zeros((m * k, n))
    B[(np.arange(m)[:, None] * k + labels).ravel(), np.tile(np.arange(n), m)] = 1.0
    C = (B @ B.T).reshape(m, k, m, k)  # C[i, :, j, :] is the contingency table of i and j
    comb = C * (C - 1) / 2
    index = comb.sum(axis=(1, 3))
    sizes = B.sum(axis=1).reshape(m, k)
    a = (sizes * (sizes - 1) / 2).sum(axis=1)
    total = n * (n - 1) / 2
    expected = np.outer(a, a) / total
    maximum = (a[:, None] + a[None, :]) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        ari = (index - expected) / (maximum - expected)
    return np.where(maximum == expected, 1.0, ari)


def cons_scores(A: np.ndarray, idx: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    sub = A[np.ix_(idx, idx)].copy()
    np.fill_diagonal(sub, 0.0)
    w = np.ones(idx.size) if weights is None else weights[idx]
    w = np.broadcast_to(w, sub.shape).copy()
    np.fill_diagonal(w, 0.0)
    return (sub * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-300)


def cons_pick(A: np.ndarray, idx: np.ndarray, weights: np.ndarray | None = None) -> int:
    return int(idx[np.argmax(cons_scores(A, idx, weights))])


def rules(d: dict, mask: np.ndarray, beta1: float | None = None) -> dict[str, int]:
    idx = np.flatnonzero(mask)
    labels, K = d["labels"], int(d["K"])
    A = ari_matrix(labels[idx])
    full = np.zeros((labels.shape[0], labels.shape[0]))
    full[np.ix_(idx, idx)] = A
    ev = d["eigenvalues"]
    gap = ev[:, K - 1] - ev[:, K]
    khat = np.array(
        [
            estimate_n_clusters(s, max_clusters=min(10, s.size - 1)) if np.isfinite(s).all() else -1
            for s in d["spectra"]
        ]
    )
    out = {"cons": cons_pick(full, idx)}
    pairs = d["pairs"]
    out["cons_tb"] = int(idx[select_best(cons_scores(full, idx), pairs[idx, 1], pairs[idx, 0])])
    good = idx[khat[idx] == K]
    out["cons_k"] = cons_pick(full, good if good.size else idx)
    rel = np.nan_to_num((1 - ev[:, K]) / np.maximum(1 - ev[:, K - 1], 1e-12), nan=0.0)
    out["cons_w"] = cons_pick(full, idx, weights=np.log1p(rel))
    out["gap"] = int(idx[np.nanargmax(gap[idx])])
    # refuse candidates whose lambda_{K+1} is 1 to within tol (at least K + 1 almost
    # disconnected pieces); only where the spectrum was computed (the default grid)
    for tol, key in ((1e-2, "refuse2"), (1e-3, "refuse3")):
        ok = idx[np.isfinite(ev[idx, K]) & (1.0 - ev[idx, K] > tol)]
        sub = ok if ok.size else idx
        out[key] = int(sub[select_best(cons_scores(full, sub), pairs[sub, 1], pairs[sub, 0])])
    if beta1 is not None:
        # the estimator's "unfragmented" beta_1 (read from the experiment's csv), then
        # consensus over beta_2 at it; unf_r3 also refuses lambda_{K+1} > 1 - 1e-3
        at = idx[np.isclose(pairs[idx, 0], beta1)]
        out["unf"] = int(at[select_best(cons_scores(full, at), pairs[at, 1], pairs[at, 0])])
        ok = at[np.isfinite(ev[at, K]) & (1.0 - ev[at, K] > 1e-3)]
        sub = ok if ok.size else at
        out["unf_r3"] = int(sub[select_best(cons_scores(full, sub), pairs[sub, 1], pairs[sub, 0])])
        # the sharpest beta_2 at that beta_1 whose graph is not in more than K pieces
        comp = d["components"] if "components" in d else np.full(len(pairs), -1)
        whole = at[(comp[at] >= 1) & (comp[at] <= K) & (1.0 - ev[at, K] > 1e-3)]
        out["unf_sharp"] = int(whole[np.argmin(pairs[whole, 1])]) if whole.size else out["unf"]
        w = np.log1p(rel)
        out["unf_w"] = int(at[select_best(cons_scores(full, at, w), pairs[at, 1], pairs[at, 0])])
    firsts = []
    for b1 in np.unique(pairs[idx, 0]):
        firsts.append(cons_pick(full, idx[pairs[idx, 0] == b1]))
    out["stage2"] = cons_pick(full, np.array(firsts))
    return out


def unfragmented_betas(paths: list[str]) -> dict[tuple[str, int], float]:
    """The rpfCluster (default, "unfragmented") beta_1 of each data set and seed."""
    import csv

    out = {}
    for path in paths:
        for row in csv.DictReader(open(path)):
            if row["method"] == "rpfCluster":
                out[row["dataset"], int(row["seed"])] = float(row["threshold"])
    return out


def main() -> None:
    root = Path(sys.argv[1])
    betas = unfragmented_betas(sys.argv[2:])
    table: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    for path in sorted(root.glob("*.npz")):
        name = path.stem.split("_")[0]
        seed = int(path.stem.rsplit("_s", 1)[1])
        d = dict(np.load(path))
        y = d["y"]
        acc = np.array([clustering_accuracy(y, lab) for lab in d["labels"]])
        for grid, mask in (("default", d["default_grid"]), ("fine", np.ones_like(acc, bool))):
            picks = rules(d, mask, betas.get((name, seed)))
            best = int(np.flatnonzero(mask)[np.argmax(acc[mask])])
            picks["oracle"] = best
            for rule, i in picks.items():
                table[(name, grid, rule)].append((acc[i], cocluster_accuracy(y, d["labels"][i])))
    names = sorted({k[0] for k in table})
    rule_names = (
        "oracle", "cons", "cons_tb", "cons_k", "cons_w", "gap", "stage2", "refuse2", "refuse3",
        "unf", "unf_r3", "unf_w", "unf_sharp",
    )  # fmt: skip
    print("dataset grid seeds " + " ".join(f"{r:>13}" for r in rule_names))
    for name in names:
        for grid in ("default", "fine"):
            cells = []
            for rule in rule_names:
                v = np.array(table[(name, grid, rule)])
                if v.size == 0:
                    cells.append("n/a")
                    continue
                cells.append(f"{v[:, 0].mean():.3f}/{v[:, 1].mean():.3f}")
            n = len(table[(name, grid, "cons")])
            print(f"{name:8s} {grid:7s} {n:3d} " + " ".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
