"""Choose how ``UnsupervisedForest`` ranks neighbours: proximity, or proximity candidates
ranked by a feature metric the forest learned (``distance="relevance"``).

For each data set, a 100-tree forest at its defaults (``distance="proximity"``)
gives every point its highest-proximity candidates.  From the candidates of
the first ``kest`` neighbours, the relevance of feature ``j`` is
``rho_j = max(0, 1 - r_j)``, ``r_j`` the mean of ``(x_ij - x_cj)^2 / (2
var_j)`` over those pairs; the neighbours are then the best ``k`` of the first
``M k`` candidates under ``sum_j rho_j^power (x_j - y_j)^2 / var_j``.  The
grid: ``power`` in {2, 3}, ``M`` in {3, 4, 6}, ``kest`` in {10, 30}, beside
plain proximity, the library's ``distance="relevance"`` (the chosen cell:
power 3, M 6, kest 30, at most 2,000 points in the estimate, proximity ties
at the M k-th candidate kept) and the best Euclidean neighbours (raw or
z-scored).

Data: the selection half of ``geoforest experiment neighbours`` (clean, +10
and +100 noise columns; 10-NN label agreement) and the URerF paper's four
simulations at N = 1,000 with 0, 10, 100 and 1,000 noise dimensions
(geodesic precision@50).  The report half is never read here.  Results and
the choice: ``docs/defaults.md``.

Run::

    python studies/relevance_distance.py sims     # about 3 minutes on 2 cores
    python studies/relevance_distance.py real     # about 4 minutes
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest_experiments._runner import simulation, truth
from geoforest_experiments.clustering_suite import SELECTION
from geoforest_experiments.neighbours import (
    label_agreement,
    load_real,
    precision_recall,
    with_noise,
    zscore,
)

GRID = [(kest, power, M) for kest in (10, 30) for power in (2, 3) for M in (3, 4, 6)]


def rerank(X: np.ndarray, cand: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best of each row's candidates under ``sum_j w_j (x_j - y_j)^2``."""
    d = (((X[cand] - X[:, None, :]) ** 2) * w).sum(axis=2)
    best = np.argsort(d, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand, best, axis=1)


def weights(X: np.ndarray, cand: np.ndarray, kest: int, power: int) -> np.ndarray:
    var = X.var(axis=0)
    var[var == 0] = np.inf
    rows = np.arange(0, X.shape[0], max(1, X.shape[0] // 2000))
    D = ((X[cand[rows, :kest]] - X[rows, None, :]) ** 2 / (2 * var)).reshape(-1, X.shape[1])
    rho = np.clip(1 - D.mean(axis=0), 0, None)
    return rho**power / var


def evaluate(X: np.ndarray, score, k: int, tag: str) -> None:
    euclid = max(
        score(NearestNeighbors(n_neighbors=k + 1).fit(Z).kneighbors(return_distance=False)[:, 1:])
        for Z in (X, zscore(X))
    )
    forest = gf.UnsupervisedForest(random_state=0, n_jobs=2, distance="proximity").fit(X)
    cand = forest.kneighbors(n_neighbors=min(6 * max(k, 10), X.shape[0] - 1), return_distance=False)
    cells = {"proximity": score(cand[:, :k])}
    for kest, power, M in GRID:
        w = weights(X, cand, kest, power)
        cells[f"k{kest}p{power}M{M}"] = score(rerank(X, cand[:, : M * k], w, k))
    forest.set_params(distance="relevance").fit(X)
    cells["library"] = score(forest.kneighbors(n_neighbors=k, return_distance=False))
    row = " ".join(f"{name} {v:.3f} ({v / euclid:.2f})" for name, v in cells.items())
    print(f"{tag:<16} Euclid {euclid:.3f} | {row}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["sims", "real"])
    args = parser.parse_args()
    if args.what == "sims":
        for sim in ("linear", "helix", "sphere", "mixture"):
            for noise in (0, 10, 100, 1000):
                X, latent = simulation(sim, 1000, noise_dims=noise, random_state=0)
                kw = truth(sim, latent)
                evaluate(
                    X, lambda ind, kw=kw: precision_recall(ind, [50], **kw).precision[0], 50,
                    f"{sim}+{noise}",
                )  # fmt: skip
    else:
        for name in SELECTION:
            X0, y, _ = load_real(name)
            for noise in (0, 10, 100):
                X = with_noise(X0, noise, 0, name)
                evaluate(X, lambda ind, y=y: label_agreement(ind, y), 10, f"{name}+{noise}")


if __name__ == "__main__":
    main()
