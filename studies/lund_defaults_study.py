"""Grid over LUND's graph settings on noisy multi-density clusters: K_hat and accuracy by t.

For every setting (kernel, n_neighbors, sigma factor, normalisation) and
every seed, one diffusion map is fitted and LUND is evaluated at every time
of a dyadic range (the geometry is shared; only t changes).  Prints, per
setting and t, the number of seeds with K_hat = K and the mean accuracy on
the cluster points.  Used to choose the defaults (docs/results/lund.md)::

    python -u studies/lund_defaults_study.py --seeds 10 > study.txt
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

from geoforest.datasets import make_multidensity_clusters
from geoforest.diffusion import LUND
from geoforest.metrics import clustering_accuracy


def evaluate(X, y, k_true, times, **params):
    model = LUND(t=1.0, random_state=0, **params)
    model.fit(X)
    out = []
    core = y >= 0
    for t in times:
        labels = model.labels_at(float(t))  # the fitted geometry at another time, no refit
        acc = clustering_accuracy(y[core], labels[core])
        out.append((labels.max() + 1 == k_true, acc))
    return out


def _kth_distance(X, k: int) -> np.ndarray:
    """Each point's distance to its k-th nearest other point."""
    return NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)[0][:, -1]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--clusters", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--kernels", nargs="+", default=["gaussian", "adaptive"])
    parser.add_argument("--neighbors", type=int, nargs="+", default=[15, 30])
    parser.add_argument("--sigma-factors", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--cutoffs", type=float, nargs="+", default=[1.0, 2.0, 3.0])
    parser.add_argument("--norms", nargs="+", default=["textbook", "symmetric"])
    parser.add_argument("--min-log2-t", type=int, default=0)
    parser.add_argument("--max-log2-t", type=int, default=16)
    args = parser.parse_args(argv)
    times = [2**j for j in range(args.min_log2_t, args.max_log2_t + 1, 2)]
    data = []
    for k_true, seed in itertools.product(args.clusters, range(args.seeds)):
        X, y = make_multidensity_clusters(args.n, n_clusters=k_true, random_state=seed)
        kth = {k: float(np.median(_kth_distance(X, k))) for k in args.neighbors}
        data.append((k_true, X, y, kth))
    print("times:", times)
    for kernel, k, factor, cut, norm in itertools.product(
        args.kernels, args.neighbors, args.sigma_factors, args.cutoffs, args.norms
    ):
        t0 = time.perf_counter()
        res = np.array(
            [
                evaluate(X, y, k_true, times, kernel=kernel, n_neighbors=k,
                         sigma=factor * kth[k], normalization=norm, cutoff=cut)
                for k_true, X, y, kth in data
            ]
        )  # fmt: skip
        kc = res[:, :, 0].mean(axis=0)
        acc = res[:, :, 1].mean(axis=0)
        line = " ".join(f"{a:.3f}/{c:.2f}" for a, c in zip(acc, kc, strict=True))
        secs = time.perf_counter() - t0
        print(f"{kernel:>8} k={k:<3} sf={factor:<4} c={cut:<4} {norm:>9} ({secs:.0f}s): {line}",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
