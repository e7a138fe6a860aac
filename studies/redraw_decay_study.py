"""Decaying redraws (``decay_redraws=True``) against the default on larger helices.

For the URerF paper's helix with 7 or 97 appended noise dimensions at N = 20,000
(100 trees) and N = 100,000 (30 trees), fit ``UnsupervisedForest`` with and
without ``decay_redraws`` and print the fit time and the geodesic precision@20
of ``kneighbors(20)`` (truth: arc length).  The result backs the default
(``False``) in ``UnsupervisedForest``'s Notes.

Run (about 5 minutes on 2 cores)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python studies/redraw_decay_study.py
"""

from __future__ import annotations

import time

import numpy as np

import geoforest as gf


def main() -> None:
    for n, noise_dims in [(20_000, 7), (20_000, 97), (100_000, 7)]:
        X0, arc = gf.datasets.make_helix(n, random_state=0)
        X = gf.datasets.add_noise_dims(X0, noise_dims, random_state=1).astype(np.float32)
        n_trees = 100 if n < 50_000 else 30
        for decay in (False, True):
            t = time.perf_counter()
            forest = gf.UnsupervisedForest(
                n_trees, n_jobs=2, random_state=0, decay_redraws=decay
            ).fit(X)
            fit_s = time.perf_counter() - t
            ind = forest.kneighbors(n_neighbors=20, return_distance=False)
            prec = gf.metrics.geodesic_precision_recall(ind, latent=arc, ks=[20]).precision[0]
            name = "decay" if decay else "default"
            print(
                f"N={n:>7,} noise dims {noise_dims:>3} {n_trees} trees {name:<8}"
                f" fit {fit_s:6.1f}s  precision@20 {prec:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
