"""Time and peak memory of LUND at 100,000 points (d = 10), beside HDBSCAN and spectral clustering.

What is measured
----------------
On ``make_multidensity_clusters(n, n_clusters=4, ambient_dim=10)`` (4
non-convex clusters of different densities with 10 % background, rotated
into R^10; float64), in a child process of its own:

* ``diffusion_map``: :class:`geoforest.DiffusionMap` fit (15-NN graph, cut
  and bridged, 10 eigenpairs by shift-invert ARPACK);
* ``lund_fixed_t``: :class:`geoforest.LUND` at one time ``t = 2^22`` (graph,
  eigenpairs, density, nearest denser points, K estimate, labels);
* ``lund``: :class:`geoforest.LUND` with its defaults (multiscale ``t``);
* on a random subset of ``--subset`` points, side by side: LUND (defaults),
  ``sklearn.cluster.HDBSCAN(min_cluster_size=25)`` and
  ``sklearn.cluster.SpectralClustering(4, affinity="nearest_neighbors",
  n_neighbors=15, assign_labels="cluster_qr")`` (given K), for the ratios
  ``HDBSCAN / LUND`` and ``spectral / LUND``.

K and accuracy (Hungarian, on the cluster points) are printed for each.
Peak memory is the child's ``VmHWM`` after everything.  One BLAS thread.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_lund.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_lund.py --n 20000 --subset 5000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _memory import peak_rss_bytes

MARKER = "BENCH_LUND "


def child(n: int, subset: int) -> dict:
    import warnings

    import numpy as np
    from sklearn.cluster import HDBSCAN, SpectralClustering

    from geoforest import LUND, DiffusionMap
    from geoforest.datasets import make_multidensity_clusters
    from geoforest.metrics import clustering_accuracy

    warnings.simplefilter("ignore")
    X, y = make_multidensity_clusters(n, n_clusters=4, ambient_dim=10, random_state=0)
    out: dict = {"n": n, "d": X.shape[1], "subset": subset}

    def timed(name, fn):
        t0 = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - t0
        return value

    def score(name, labels, yy):
        core = yy >= 0
        out[name + "_k"] = int(np.unique(labels[labels >= 0]).size)
        out[name + "_acc"] = float(clustering_accuracy(yy[core], labels[core]))

    dm = timed("diffusion_map", lambda: DiffusionMap(random_state=0).fit(X))
    out["bridges"] = dm.n_bridges_
    fixed = timed("lund_fixed_t", lambda: LUND(t=2.0**22, random_state=0).fit(X))
    score("lund_fixed_t", fixed.labels_, y)
    model = timed("lund", lambda: LUND(random_state=0).fit(X))
    score("lund", model.labels_, y)
    out["lund_t"] = model.t_
    pick = np.random.RandomState(0).choice(n, subset, replace=False)
    Xs, ys = X[pick], y[pick]
    small = timed("sub_lund", lambda: LUND(random_state=0).fit(Xs))
    score("sub_lund", small.labels_, ys)
    hdb = timed("sub_hdbscan", lambda: HDBSCAN(min_cluster_size=25).fit_predict(Xs))
    score("sub_hdbscan", hdb, ys)
    spectral = SpectralClustering(4, affinity="nearest_neighbors", n_neighbors=15,
                                  assign_labels="cluster_qr", random_state=0)  # fmt: skip
    spec = timed("sub_spectral", lambda: spectral.fit_predict(Xs))
    score("sub_spectral", spec, ys)
    out["peak_rss_gb"] = peak_rss_bytes() / 1e9
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--subset", type=int, default=20_000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(MARKER + json.dumps(child(args.n, args.subset)), flush=True)
        return
    cmd = [sys.executable, __file__, "--child", "--n", str(args.n), "--subset", str(args.subset)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [x for x in proc.stdout.splitlines() if x.startswith(MARKER)]
    if proc.returncode or not lines:
        print(f"failed:\n{proc.stderr[-3000:]}")
        return
    r = json.loads(lines[0][len(MARKER) :])
    print(f"n = {r['n']}, d = {r['d']} (make_multidensity_clusters, 4 clusters, 10 % noise)")
    print(f"  DiffusionMap fit            {r['diffusion_map']:8.1f} s   ({r['bridges']} bridges)")
    print(f"  LUND, t = 2^22              {r['lund_fixed_t']:8.1f} s   K = {r['lund_fixed_t_k']}"
          f"  accuracy {r['lund_fixed_t_acc']:.4f}")  # fmt: skip
    print(f"  LUND, defaults (multiscale) {r['lund']:8.1f} s   K = {r['lund_k']}  accuracy "
          f"{r['lund_acc']:.4f}  (t = {r['lund_t']:.0f})")  # fmt: skip
    print(f"subset of {r['subset']} points, side by side:")
    for key, name in (("sub_lund", "LUND (defaults)"), ("sub_hdbscan", "HDBSCAN(25)"),
                      ("sub_spectral", "SpectralClustering(K=4)")):  # fmt: skip
        print(f"  {name:<26} {r[key]:8.1f} s   K = {r[key + '_k']}  accuracy {r[key + '_acc']:.4f}")
    print(f"  ratio HDBSCAN / LUND = {r['sub_hdbscan'] / r['sub_lund']:.2f}, "
          f"spectral / LUND = {r['sub_spectral'] / r['sub_lund']:.2f}")  # fmt: skip
    print(f"peak memory {r['peak_rss_gb']:.2f} GB")


if __name__ == "__main__":
    main()
