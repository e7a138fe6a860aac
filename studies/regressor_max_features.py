"""``ObliqueForestRegressor(max_features=1.0)``: the default, on real data.

Candidates per node for the SPORF regressor: 1.0 (``n_features``, scikit-learn's
``RandomForestRegressor`` default), 0.5 and 1/3 (faster), on the regression
selection half (``geoforest_experiments/_regression_data.py``), clean and with
10 appended N(0, sigma^2) noise columns (sigma the median column spread), as
a forest default must hold under (`docs/defaults.md`).  Rows capped at 3,000 (the first rows of
a fixed permutation), 3 random 70/30 splits, 100 trees, one thread; test R²
and fit seconds, with scikit-learn's random forest as the reference.

Run: ``OMP_NUM_THREADS=1 nice python studies/regressor_max_features.py``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

import geoforest as gf
from geoforest_experiments._regression_data import load_regression_dataset, regression_half

SETTINGS = (1.0, 0.5, 1 / 3)


def noisy(X: np.ndarray, n_columns: int, seed: int) -> np.ndarray:
    if n_columns == 0:
        return X
    sigma = float(np.median(X.std(axis=0)))
    noise = np.random.default_rng(seed).normal(scale=sigma, size=(X.shape[0], n_columns))
    return np.hstack([X, noise])


def main() -> None:
    print(f"{'set':<14}{'noise':>6}" + "".join(f"{f'mf={m:.2f}':>11}" for m in SETTINGS)
          + f"{'RF':>9}   fit s per setting")  # fmt: skip
    gaps = {m: [] for m in SETTINGS}
    for name in regression_half("selection"):
        X0, y0 = load_regression_dataset(name)
        keep = np.random.default_rng(0).permutation(len(y0))[:3000]
        for n_noise in (0, 10):
            X, y = noisy(X0[keep], n_noise, 0), y0[keep]
            r2 = {m: [] for m in (*SETTINGS, "RF")}
            secs = {m: [] for m in SETTINGS}
            for seed in range(3):
                tr, te = train_test_split(np.arange(len(y)), test_size=0.3, random_state=seed)
                for m in SETTINGS:
                    est = gf.ObliqueForestRegressor(max_features=m, n_jobs=1, random_state=seed)
                    t0 = time.perf_counter()
                    est.fit(X[tr], y[tr])
                    secs[m].append(time.perf_counter() - t0)
                    r2[m].append(est.score(X[te], y[te]))
                rf = RandomForestRegressor(n_jobs=1, random_state=seed).fit(X[tr], y[tr])
                r2["RF"].append(rf.score(X[te], y[te]))
            for m in SETTINGS:
                gaps[m].append(np.mean(r2[m]) - np.mean(r2[1.0]))
            print(
                f"{name:<14}{n_noise:>6}" + "".join(f"{np.mean(r2[m]):>11.4f}" for m in SETTINGS)
                + f"{np.mean(r2['RF']):>9.4f}   "
                + " ".join(f"{np.mean(secs[m]):.2f}" for m in SETTINGS)
            )  # fmt: skip
    for m in SETTINGS:
        g = np.array(gaps[m])
        print(f"mf={m:.2f}: R² minus mf=1.0's, median {np.median(g):+.4f}, worst {g.min():+.4f}")


if __name__ == "__main__":
    main()
