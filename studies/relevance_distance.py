"""Choose how ``UnsupervisedForest`` ranks neighbours: proximity, or proximity candidates
ranked by a feature metric the forest learned (``distance="relevance"``).

For each data set, a 100-tree forest ranked by proximity gives every point its
``6 (k + 1) - 1`` highest-proximity candidates; they are re-ranked by
``sum_j rho_j^3 (x_j - y_j)^2 / s_j`` with the relevance ``rho_j = max(0, 1 -
near_j / s_j)`` estimated on at most 2,000 points from their 30 nearest by
proximity (``near_j``: mean squared difference along ``j``) against:

* ``global`` (the first form): ``s_j = 2 var_j``, random pairs;
* ``local`` (chosen): ``s_j`` = the mean squared difference over the point's
  180 highest-proximity points, the pool of a 30-neighbour query;

beside plain proximity, the library's ``distance="relevance"`` (``local``,
with proximity ties at the cut kept) and the best Euclidean neighbours (raw or
z-scored).  Data: the selection half of ``geoforest experiment neighbours``
(clean and +100 noise columns; 10-NN label agreement), the URerF paper's four
simulations at N = 1,000 with 0 to 1,000 noise dimensions (precision@50), and
the helix with 7 noise dimensions at N = 20,000 and 100,000 (precision@20;
the million-point benchmark's data, smaller), where ``global`` fails.  The
report half is never read here.  Results and the choice: ``docs/defaults.md``.

Run::

    python studies/relevance_distance.py sims   # about 3 minutes on 2 cores
    python studies/relevance_distance.py real   # about 4 minutes
    python studies/relevance_distance.py big    # about 3 minutes
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


def rerank(X: np.ndarray, cand: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` best of each row's candidates under ``sum_j w_j (x_j - y_j)^2``."""
    out = np.empty((X.shape[0], k), dtype=np.int64)
    for lo in range(0, X.shape[0], 10_000):
        c = cand[lo : lo + 10_000]
        d = (((X[c] - X[lo : lo + 10_000, None, :]) ** 2) * w).sum(axis=2)
        best = np.argsort(d, axis=1, kind="stable")[:, :k]
        out[lo : lo + 10_000] = np.take_along_axis(c, best, axis=1)
    return out


def weights(X: np.ndarray, forest, near: int = 30, pool: int = 180) -> dict[str, np.ndarray]:
    """The ``global`` and ``local`` weights from the forest's proximity neighbours."""
    pool = min(pool, X.shape[0] - 1)
    near = min(near, pool)
    rows = np.linspace(0, X.shape[0] - 1, min(2000, X.shape[0])).astype(np.int64)
    ind = forest.kneighbors(X[rows], n_neighbors=pool + 1, return_distance=False)
    first = np.argsort(ind == rows[:, None], axis=1, kind="stable")[:, :pool]  # self dropped
    ind = np.take_along_axis(ind, first, axis=1)
    D = (X[ind] - X[rows, None, :]) ** 2
    near_sq = D[:, :near].reshape(-1, X.shape[1]).mean(axis=0)
    pool_sq = D.reshape(-1, X.shape[1]).mean(axis=0)
    var = X.var(axis=0)
    out = {}
    for name, s in (("global", 2 * var), ("local", pool_sq)):
        s = np.where(s > 0, s, np.inf)
        rho = np.clip(1 - near_sq / s, 0, None)
        out[name] = rho**3 / s
    return out


def nearest(Z: np.ndarray, k: int) -> np.ndarray:
    return NearestNeighbors(n_neighbors=k + 1).fit(Z).kneighbors(return_distance=False)[:, 1:]


def evaluate(X: np.ndarray, score, k: int, tag: str, euclid: bool = True) -> None:
    best = max(score(nearest(Z, k)) for Z in (X, zscore(X))) if euclid else float("nan")
    forest = gf.UnsupervisedForest(random_state=0, n_jobs=2, distance="proximity").fit(X)
    cand = forest.kneighbors(
        n_neighbors=min(6 * (k + 1) - 1, X.shape[0] - 1), return_distance=False
    )
    cells = {"proximity": score(cand[:, :k])}
    for name, w in weights(X, forest).items():
        cells[name] = score(rerank(X, cand, w, k))
    forest.set_params(distance="relevance").fit(X)
    cells["library"] = score(forest.kneighbors(n_neighbors=k, return_distance=False))
    row = " ".join(f"{name} {v:.3f} ({v / best:.2f})" for name, v in cells.items())
    print(f"{tag:<16} Euclid {best:.3f} | {row}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["sims", "real", "big"])
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
    elif args.what == "big":
        for n in (20_000, 100_000):
            X, arc = gf.datasets.make_helix(n, random_state=0)
            X = gf.datasets.add_noise_dims(X, 7, random_state=1).astype(np.float32)
            evaluate(
                X, lambda ind, arc=arc: precision_recall(ind, [20], latent=arc).precision[0], 20,
                f"helix{n}+7", euclid=False,
            )  # fmt: skip
    else:
        for name in SELECTION:
            X0, y, _ = load_real(name)
            for noise in (0, 100):
                X = with_noise(X0, noise, 0, name)
                evaluate(X, lambda ind, y=y: label_agreement(ind, y), 10, f"{name}+{noise}")


if __name__ == "__main__":
    main()
