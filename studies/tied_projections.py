"""Choose ``max_tied_fraction`` of ``UnsupervisedForest`` on real data with and without noise.

For every data set of the clustering suite's *selection half* (at most 3,000
rows, stratified, the suite's preprocessing), clean and with 10 and 100
appended N(0, sigma^2) columns (sigma = the median column standard
deviation; the data and noise of ``geoforest experiment neighbours``), fit a
100-tree forest per candidate setting and print its 10-NN
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

import geoforest as gf
from geoforest_experiments.clustering_suite import SELECTION
from geoforest_experiments.neighbours import (
    euclid_raw,
    euclid_zscored,
    label_agreement,
    load_real,
    with_noise,
)

CANDIDATES: dict[str, dict] = {
    "no growth (paper)": {"max_tied_fraction": None},
    "tied 0.10": {"max_tied_fraction": 0.10},
    "tied 0.05 (default)": {"max_tied_fraction": 0.05},
    "tied 0.02": {"max_tied_fraction": 0.02},
    "dense (8 nonzeros)": {"max_tied_fraction": None, "feature_combinations": 8.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--candidates", nargs="*", default=list(CANDIDATES))
    args = parser.parse_args()
    names = ("iris", "wdbc-raw", "vehicle") if args.quick else SELECTION
    k = 10
    print("10-NN label agreement; cells: agreement (ratio to best Euclid, seconds)")
    for name in names:
        X0, y, _ = load_real(name)
        for columns in (0,) if args.quick else (0, 10, 100):
            # The noise columns of ``geoforest experiment neighbours`` (seed 0).
            X = with_noise(X0, columns, 0, name)
            best = max(
                label_agreement(euclid(X, k, 0, args.n_jobs), y)
                for euclid in (euclid_raw, euclid_zscored)
            )
            cells = []
            for cand in args.candidates:
                t0 = time.perf_counter()
                forest = gf.UnsupervisedForest(
                    n_estimators=100, random_state=0, n_jobs=args.n_jobs, **CANDIDATES[cand]
                ).fit(X)
                a = label_agreement(forest.kneighbors(n_neighbors=k, return_distance=False), y)
                seconds = time.perf_counter() - t0
                cells.append(f"{cand}: {a:.3f} ({a / best:.2f}, {seconds:.1f}s)")
            print(f"{name:<10} +{columns:<4} Euclid {best:.3f} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
