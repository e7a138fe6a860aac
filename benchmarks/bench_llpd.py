"""Time and peak memory of exact LLPD at scale, beside a plain Euclidean kNN query.

What is measured
----------------
On ``make_ldln(n, n_clusters=4, ambient_dim=5, intrinsic_dim="mixed",
noise_fraction=0.2)`` (float64, d = 5), for every ``n`` of ``--sizes``, in a
child process of its own:

* ``mst``: exact Euclidean MST (:func:`geoforest.graph.euclidean_mst`,
  ``method="auto"``, i.e. quitefastmst's K-d tree at d = 5);
* ``dendrogram``: union-find single-linkage dendrogram and its leaf layout;
* ``knn_distance``: LLPD to every point's k-th LLPD neighbour (k = ``--k``);
* ``kneighbors``: the k LLPD neighbours of every point (ties by Euclidean
  distance, then index; every tied point is scanned) — skipped above
  ``--kneighbors-max-n``;
* ``kneighbors_tree``: the same with ``tie_break="tree"`` (``O(n k)``);
* ``operator``: one product ``W x`` of the LLPD kernel operator;
* ``clustering``: the whole :class:`geoforest.LLPDSpectralClustering` fit
  (denoising, second LLPD on the kept points, eigengap over the scale grid,
  NJW), with its ``K`` and its accuracy on the kept cluster points;
* ``kdtree``: scikit-learn ``KDTree(X)`` build + ``query(X, k + 1)`` (the
  Euclidean k nearest neighbours of every point, itself included), for the
  ratio ``(mst + dendrogram + knn_distance) / kdtree``.

Peak memory is the child's ``VmHWM`` (``/proc/self/status``; ``ru_maxrss``
elsewhere) at the end, after everything above.  numba kernels are compiled
(or loaded from the cache) on a tiny problem first, not timed.

Run from the repository root (use ``nice`` on a shared machine)::

    python benchmarks/bench_llpd.py                       # n = 1e4, 1e5, 1e6
    python benchmarks/bench_llpd.py --sizes 100000 --k 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _memory import peak_rss_bytes

MARKER = "BENCH_LLPD "


def child(n: int, k: int, kneighbors_max_n: int) -> dict:
    import numpy as np
    from sklearn.neighbors import KDTree

    from geoforest.datasets import make_ldln
    from geoforest.graph import euclidean_mst
    from geoforest.llpd import LLPD, LLPDSpectralClustering, single_linkage
    from geoforest.metrics import clustering_accuracy

    warm, _ = make_ldln(300, ambient_dim=5, random_state=1)
    LLPDSpectralClustering(random_state=0).fit(warm)
    LLPD().fit(warm).kneighbors(n_neighbors=5)

    X, y = make_ldln(n, n_clusters=4, ambient_dim=5, noise_fraction=0.2, random_state=0)
    out: dict = {"n": n, "d": 5, "k": k}

    def timed(name, fn):
        t0 = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - t0
        return value

    weights, edges = timed("mst", lambda: euclidean_mst(X))
    tree = timed("dendrogram", lambda: single_linkage(n, weights, edges))
    del tree  # timed only: the fitted model below builds the same dendrogram
    t0 = time.perf_counter()
    model = LLPD().fit(X)
    model.knn_distance(k)
    out["fit_knn_distance"] = time.perf_counter() - t0
    timed("knn_distance", lambda: model.knn_distance(k))
    if n <= kneighbors_max_n:
        timed("kneighbors", lambda: model.kneighbors(n_neighbors=k))
    timed("kneighbors_tree", lambda: model.kneighbors(n_neighbors=k, tie_break="tree"))
    op = model.affinity_operator(float(np.median(weights[-20:])))
    x = np.random.default_rng(0).standard_normal(n)
    timed("operator", lambda: op @ x)
    clu = timed("clustering", lambda: LLPDSpectralClustering(random_state=0).fit(X))
    core = (y >= 0) & clu.kept_
    out["k_hat"] = int(clu.n_clusters_)
    out["accuracy_kept"] = float(clustering_accuracy(y[core], clu.labels_[core]))
    out["noise_removed"] = float(np.mean(~clu.kept_[y < 0]))
    timed("kdtree", lambda: KDTree(X).query(X, k=k + 1))
    out["ratio"] = (out["mst"] + out["dendrogram"] + out["knn_distance"]) / out["kdtree"]
    out["peak_rss_gb"] = peak_rss_bytes() / 1e9
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--kneighbors-max-n", type=int, default=100_000)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(MARKER + json.dumps(child(args.child, args.k, args.kneighbors_max_n)), flush=True)
        return
    cols = ("mst", "dendrogram", "knn_distance", "kneighbors", "kneighbors_tree", "operator",
            "fit_knn_distance", "clustering", "kdtree")  # fmt: skip
    print(f"LLPD on make_ldln(n, ambient_dim=5, 4 clusters, 20 % noise), k = {args.k}; seconds")
    print(f"{'n':>9} " + " ".join(f"{c[:12]:>12}" for c in cols) + "  ratio   K acc_kept  peak_GB")
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--child", str(n), "--k", str(args.k)]
        cmd += ["--kneighbors-max-n", str(args.kneighbors_max_n)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        lines = [x for x in proc.stdout.splitlines() if x.startswith(MARKER)]
        if proc.returncode or not lines:
            print(f"{n:>9} failed:\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(lines[0][len(MARKER) :])
        cells = " ".join(f"{r[c]:>12.3f}" if c in r else f"{'-':>12}" for c in cols)
        print(
            f"{n:>9} {cells} {r['ratio']:>6.2f} {r['k_hat']:>3} {r['accuracy_kept']:>8.4f} "
            f"{r['peak_rss_gb']:>8.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
