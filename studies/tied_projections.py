"""Choose ``max_tied_fraction`` of ``UnsupervisedForest`` on real data with and without noise.

For every data set of the clustering suite's *selection half* (at most 3,000
rows, stratified, the suite's preprocessing), clean and with 10 and 100
appended N(0, sigma^2) columns (sigma = the median column standard
deviation), fit a 100-tree forest per candidate setting and print its 10-NN
label agreement (the fraction of a point's 10 forest neighbours that share its
class) beside the best Euclidean agreement (raw or z-scored data), their
ratio and the fit + query seconds.  The report half is never read here: it is
run once, by ``geoforest experiment neighbours``.  Results and the choice:
``docs/defaults.md``.

Run::

    python studies/tied_projections.py            # about 10 minutes on 2 cores
    python studies/tied_projections.py --quick    # iris, wdbc-raw, vehicle; clean only
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest_experiments.clustering_suite import SELECTION, load_suite_data

CANDIDATES: dict[str, dict] = {
    "no growth (paper)": {"max_tied_fraction": None},
    "tied 0.10": {"max_tied_fraction": 0.10},
    "tied 0.05 (default)": {"max_tied_fraction": 0.05},
    "tied 0.02": {"max_tied_fraction": 0.02},
    "dense (8 nonzeros)": {"max_tied_fraction": None, "feature_combinations": 8.0},
}


def agreement(ind: np.ndarray, y: np.ndarray) -> float:
    """Mean fraction of each point's neighbours that share its label."""
    return float((y[ind] == y[:, None]).mean())


def euclidean(X: np.ndarray, y: np.ndarray, k: int) -> float:
    sd = X.std(axis=0)
    best = 0.0
    for Z in (X, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)):
        ind = NearestNeighbors(n_neighbors=k + 1).fit(Z).kneighbors(return_distance=False)
        best = max(best, agreement(ind[:, 1:], y))
    return best


def with_noise(X: np.ndarray, columns: int, seed: int = 0) -> np.ndarray:
    if columns == 0:
        return X
    sigma = float(np.median(X.std(axis=0)))
    noise = np.random.RandomState(seed).normal(0.0, sigma, (X.shape[0], columns))
    return np.hstack([X, noise])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--candidates", nargs="*", default=list(CANDIDATES))
    args = parser.parse_args()
    names = ("iris", "wdbc-raw", "vehicle") if args.quick else SELECTION
    noises = (0,) if args.quick else (0, 10, 100)
    k = 10
    print("10-NN label agreement; cells: agreement (ratio to best Euclid, seconds)")
    for name in names:
        X0, y, _ = load_suite_data(name, max_n=3000)
        for columns in noises:
            X = with_noise(X0, columns)
            best = euclidean(X, y, k)
            cells = []
            for cand in args.candidates:
                t0 = time.perf_counter()
                forest = gf.UnsupervisedForest(
                    n_estimators=100, random_state=0, n_jobs=args.n_jobs, **CANDIDATES[cand]
                ).fit(X)
                ind = forest.kneighbors(n_neighbors=k, return_distance=False)
                seconds = time.perf_counter() - t0
                a = agreement(ind, y)
                cells.append(f"{cand}: {a:.3f} ({a / best:.2f}, {seconds:.1f}s)")
            print(f"{name:<10} +{columns:<4} Euclid {best:.3f} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
