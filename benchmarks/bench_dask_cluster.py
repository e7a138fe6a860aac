"""ForestSpectralClustering of a Dask array on a local cluster, stage by stage.

What is measured
----------------
A cluster of ``--n-workers`` (2) worker processes, one thread each, with the
scheduler in a process of its own (``SubprocessCluster``: this process is the
client alone, so its memory is the client's) and ``--memory-limit`` (6GiB)
per worker.  The data are those of ``bench_cluster_scale.py`` (10 touching
Gaussian clusters in a 10-D latent space, mapped into 50 dimensions, noise in
all of them), drawn *on the workers*, ``--chunk-rows`` rows per task, each
chunk from its own seed, and persisted there before anything is timed; the
client never holds ``X``.

On the cluster, each stage timed on its own through the public API, with
the client's peak memory growth (``VmHWM`` less the ``VmRSS`` baseline taken
once before the first stage; the peak is reset after each stage), the
workers' peaks and the memory restarts (``bench_dask.Meter``):

* ``whole fit``: ``ForestSpectralClustering(10, random_state=0).fit_predict``
  of the Dask array from scratch (the stages below, the copies check on the
  workers, the bridges when the graph needs them), its ARI and a digest of
  its labels; then, one by one:
* ``forest fit``: ``gf.UnsupervisedForest(**params)`` with the whole fit's
  forest's parameters (``forest_.get_params()``) fitted on the Dask array;
* ``neighbours``: its 15 nearest others of every point, searched on the
  workers and gathered (``n x 15`` distances and indices);
* ``graph``: ``gf.graph.knn_affinity`` of the lists, in the client;
* ``eigensolver`` and ``k-means``: ``gf.graph.spectral_eigs`` and the rest of
  ``gf.graph.spectral_clustering``, in the client.

Beside it (``--inmemory``, default on), the same ``ForestSpectralClustering``
on the same points as a NumPy array in a child process: time, peak memory,
ARI and the digest, so the table says whether the labels are equal.

How to run
----------
::

    python benchmarks/bench_dask_cluster.py --n 100000 1000000

Needs ``distributed``.  Linux only for the memory figures (``/proc``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_dask  # noqa: E402
from _child import report, spawn_child  # noqa: E402
from _memory import peak_rss_bytes  # noqa: E402
from bench_dask import Meter, reset_peak, status_bytes, subprocess_cluster  # noqa: E402

import geoforest as gf  # noqa: E402

N_CLUSTERS = 10
N_NEIGHBORS = 15
MB = 2**20


def _model(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The clusters' centres (10 x 10) and the orthonormal map into 50 dimensions."""
    rng = np.random.RandomState(seed)
    centres = rng.normal(0.0, 1.0, size=(N_CLUSTERS, 10))
    Q, _ = np.linalg.qr(rng.normal(size=(50, 10)))
    return centres, Q


def chunk(rows: int, index: int, labels: bool = False) -> np.ndarray:
    """Chunk ``index`` of the data (``rows`` points, its own seed), or its labels."""
    centres, Q = _model()
    rng = np.random.RandomState(1000 + index)
    y = rng.randint(N_CLUSTERS, size=rows)
    if labels:
        return y
    Z = centres[y] + rng.normal(size=(rows, 10))
    return (Z @ Q.T + rng.normal(0.0, 0.5, size=(rows, 50))).astype(np.float32)


def chunk_sizes(n: int, chunk_rows: int) -> list[int]:
    return [min(chunk_rows, n - s) for s in range(0, n, chunk_rows)]


def digest(labels: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(labels, dtype=np.int64).tobytes()).hexdigest()[:12]


def _warm(dim: int = 50) -> bool:
    """A tiny fit in memory: loads numba's kernels (in a worker, or here)."""
    X = np.random.default_rng(1).normal(size=(600, dim)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gf.ForestSpectralClustering(3, random_state=0).fit(X)
    return True


def run_dask(args: argparse.Namespace, n: int) -> dict[str, Any]:
    import cloudpickle
    import dask
    import dask.array as da
    import distributed
    from sklearn.metrics import adjusted_rand_score

    warnings.filterwarnings("ignore", message="Port 8787 is already in use")
    # The meter's functions run on the workers, which cannot import this folder.
    cloudpickle.register_pickle_by_value(bench_dask)
    cluster = subprocess_cluster(args.n_workers, args.memory_limit)
    client = distributed.Client(cluster)
    try:
        client.run(_warm)
        _warm()
        sizes = chunk_sizes(n, args.chunk_rows)
        blocks = [
            da.from_delayed(dask.delayed(chunk)(r, i), (r, 50), np.float32)
            for i, r in enumerate(sizes)
        ]
        X = da.concatenate(blocks).persist()
        distributed.wait(X)
        y = np.concatenate([chunk(r, i, labels=True) for i, r in enumerate(sizes)])
        meter = Meter(client, X)
        stages: list[dict[str, Any]] = []

        def timed(name: str, fn):
            t = time.perf_counter()
            out = fn()
            row = {"stage": name, "seconds": time.perf_counter() - t, **meter.phase()}
            stages.append(row)
            print(f"  n={n:,} dask {name}: {row['seconds']:.1f} s", flush=True)
            return out

        model = gf.ForestSpectralClustering(N_CLUSTERS, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            labels = timed("whole fit", lambda: model.fit_predict(X).compute())
        params = model.forest_.get_params()  # the fit's own forest, grown again
        model.geometry_ = model.forest_ = model.affinity_matrix_ = None  # freed
        forest = timed("forest fit", lambda: gf.UnsupervisedForest(**params).fit(X))
        _, ind = timed(
            "neighbours",
            lambda: tuple(a.compute() for a in forest.kneighbors(n_neighbors=N_NEIGHBORS)),
        )
        A = timed("graph", lambda: gf.graph.knn_affinity(ind, n))
        timed("eigensolver", lambda: gf.graph.spectral_eigs(A, N_CLUSTERS, random_state=0))
        timed("k-means", lambda: gf.graph.spectral_clustering(A, N_CLUSTERS, random_state=0))
        stages[-1]["seconds"] -= stages[-2]["seconds"]  # the eigensolver again
        return {
            "n": n,
            "stages": stages,
            "ari": float(adjusted_rand_score(y, labels)),
            "digest": digest(labels),
            "n_bridges": int(model.n_bridges_),
            "x_mb": X.nbytes / MB,
        }
    finally:
        client.close()
        cluster.close()


def run_inmemory_child(args: argparse.Namespace) -> dict[str, Any]:
    from sklearn.metrics import adjusted_rand_score

    _warm()
    sizes = chunk_sizes(args.child_n, args.chunk_rows)
    X = np.concatenate([chunk(r, i) for i, r in enumerate(sizes)])
    y = np.concatenate([chunk(r, i, labels=True) for i, r in enumerate(sizes)])
    baseline = status_bytes("VmRSS")
    reset_peak()
    t = time.perf_counter()
    labels = gf.ForestSpectralClustering(N_CLUSTERS, random_state=0, n_jobs=-1).fit(X).labels_
    seconds = time.perf_counter() - t
    return {
        "seconds": seconds,
        "peak_growth_mb": (peak_rss_bytes() - (baseline or 0)) / MB,
        "ari": float(adjusted_rand_score(y, labels)),
        "digest": digest(labels),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    parser.add_argument("--n-workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="6GiB", help="per worker")
    parser.add_argument("--no-inmemory", dest="inmemory", action="store_false")
    parser.add_argument("--child-n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_n is not None:
        report(run_inmemory_child(args))
        return 0
    print(f"geoforest {gf.__version__}, {os.cpu_count()} cores", flush=True)
    for n in args.n:
        res = run_dask(args, n)
        for s in res["stages"]:
            peaks = [w["peak"] for w in s["workers"].values() if w.get("peak")]
            growth = s["client_peak_growth_bytes"]
            print(
                f"n={n:>9,} dask {s['stage']:12s} {s['seconds']:8.1f} s  "
                f"client +{(growth or 0) / MB:7.0f} MB  "
                f"worker peak {max(peaks, default=0) / MB:6.0f} MB  "
                f"to client {s['to_client_bytes'] / MB:6.0f} MB  "
                f"restarts {s['memory_restarts']}",
                flush=True,
            )
        print(
            f"n={n:>9,} dask: ARI {res['ari']:.3f}  labels {res['digest']}  "
            f"bridges {res['n_bridges']}  X {res['x_mb']:.0f} MB",
            flush=True,
        )
        if args.inmemory:
            flags = {"child-n": n, "chunk-rows": args.chunk_rows}
            mem = spawn_child(__file__, flags, what=f"in-memory fit at n={n}")
            same = "equal" if mem["digest"] == res["digest"] else "DIFFERENT"
            print(
                f"n={n:>9,} in memory: {mem['seconds']:.1f} s  peak +{mem['peak_growth_mb']:.0f} MB"
                f"  ARI {mem['ari']:.3f}  labels {mem['digest']} ({same} to the Dask fit's)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
