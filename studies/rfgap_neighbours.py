"""Which proximity of a supervised forest ranks neighbours best: RF-GAP or shared leaves.

On the classification selection half of the supervised experiment
(``geoforest_experiments.supervised``), 2 stratified 70/30 splits, the test
points' 10 nearest training points by ``ObliqueForestClassifier``'s RF-GAP
proximity (default forest, ``min_samples_leaf`` 5 and 10, 300 trees), by the
default forest's shared-leaf proximity (``kneighbors``' default
``method="all"``) and by Euclidean distance on z-scored features; the
fraction of neighbours with the test point's label.  Test accuracy of each
forest beside it.

The question behind it: RF-GAP trails Euclid on half the sets while the same
forest predicts better than a Euclidean 10-NN vote.  If more trees help RF-GAP
most, its top-k ranking is noise (few co-occurrences per neighbour, weighted
by bootstrap multiplicity) rather than a poor geometry.

Run: ``python studies/rfgap_neighbours.py`` (about 80 s on 2 cores);
``--half report`` evaluates the same settings once on the report half, after
the choice was made on the selection half (``docs/results/supervised.md``).
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf
from geoforest_experiments.supervised import (
    CLASSIFICATION_REPORT,
    CLASSIFICATION_SELECTION,
    load,
    splits,
)

#: Forest settings whose RF-GAP neighbours are compared (keyword overrides).
CONFIGS = {
    "default": {},
    "leaf 5": {"min_samples_leaf": 5},
    "leaf 10": {"min_samples_leaf": 10},
    "300 trees": {"n_estimators": 300},
}
K = 10


def agreement(y_train: np.ndarray, y_test: np.ndarray, ind: np.ndarray) -> float:
    return float(np.mean(y_train[ind] == y_test[:, None]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("selection", "report"), default="selection")
    half = parser.parse_args().half
    sets = CLASSIFICATION_SELECTION if half == "selection" else CLASSIFICATION_REPORT
    cols = [f"gap {k}" for k in CONFIGS] + ["shared", "euclid"]
    print(f"{'set':<10}" + "".join(f"{c:>15}" for c in cols) + "   accuracy per forest")
    for name in sets:
        X, y = load("classification", name, 3000)
        scores = {c: [] for c in cols}
        accs = {k: [] for k in CONFIGS}
        for seed, tr, te in splits("classification", y, 2, 0):
            for k, override in CONFIGS.items():
                params = {"n_estimators": 100, "random_state": seed, "n_jobs": 2, **override}
                forest = gf.ObliqueForestClassifier(**params).fit(X[tr], y[tr])
                accs[k].append(forest.score(X[te], y[te]))
                ind = forest.kneighbors(X[te], K, return_distance=False, method="rfgap")
                scores[f"gap {k}"].append(agreement(y[tr], y[te], ind))
                if k == "default":
                    ind = forest.kneighbors(X[te], K, return_distance=False)
                    scores["shared"].append(agreement(y[tr], y[te], ind))
            mean, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            nn = NearestNeighbors(n_neighbors=K).fit((X[tr] - mean) / sd)
            ind = nn.kneighbors((X[te] - mean) / sd, return_distance=False)
            scores["euclid"].append(agreement(y[tr], y[te], ind))
        print(
            f"{name:<10}" + "".join(f"{np.mean(v):>15.3f}" for v in scores.values())
            + "   " + " ".join(f"{np.mean(v):.3f}" for v in accs.values()),
            flush=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()
