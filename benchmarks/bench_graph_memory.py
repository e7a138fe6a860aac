"""Peak memory of ``kneighbors_graph`` of the training points, against its output.

What is measured
----------------
On ``X ~ N(0, 1)`` (float32, ``N`` rows, 10 columns; default N=200,000), a
100-tree ``gf.UnsupervisedForest(n_jobs=2, random_state=0)`` at its defaults
is fitted and its neighbours queried once (so the training leaves are cached
and numba is warm).  Then, each on its own:

* ``forest.kneighbors(n_neighbors=k)``: the ``(dist, ind)`` arrays;
* ``forest.kneighbors_graph(n_neighbors=k, mode="distance")``: the symmetric,
  connected CSR graph (the union of the kNN graph and its transpose);
* for reference, scikit-learn's ``NearestNeighbors(n_neighbors=k, n_jobs=2)
  .kneighbors_graph(mode="distance")`` of the same points (Euclidean)
  symmetrised the usual way, ``G.maximum(G.T)`` (its k-d tree query takes
  minutes here: 10 dimensions of Gaussian noise).

For each, the growth of this process's peak resident memory during the call
(``VmHWM`` after the call minus ``VmRSS`` before it, the high-water mark reset
through ``/proc/self/clear_refs`` first) and the ratio of that growth to the
bytes of the result.  The goal of the reliability issue: the forest graph's
growth at most 4x its output at N=200,000.

How to run
----------
From the repository root (Linux: the reset of the high-water mark needs
``/proc``)::

    python3 benchmarks/bench_graph_memory.py              # N=200,000, k=15
    python3 benchmarks/bench_graph_memory.py --n 20000    # smoke run
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

import geoforest as gf


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def _measure(label: str, call) -> None:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak (VmHWM) to the current RSS
    before = _status("VmRSS:")
    t = time.perf_counter()
    out = call()
    seconds = time.perf_counter() - t
    grown = _status("VmHWM:") - before
    if isinstance(out, tuple):
        size = sum(a.nbytes for a in out)
    else:
        size = out.data.nbytes + out.indices.nbytes + out.indptr.nbytes
    print(
        f"{label:<44} {seconds:7.1f} s  peak growth {grown / 1e6:7.0f} MB  "
        f"output {size / 1e6:6.0f} MB  ratio {grown / size:5.1f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--n-neighbors", type=int, default=15)
    args = parser.parse_args(argv)
    k = args.n_neighbors
    X = np.random.default_rng(0).standard_normal((args.n, 10), dtype=np.float32)
    forest = gf.UnsupervisedForest(n_estimators=100, n_jobs=2, random_state=0).fit(X)
    forest.kneighbors(n_neighbors=k)  # leaves cached, kernels compiled
    print(f"N={args.n:,}, p=10, 100 trees, k={k}, distance_={forest.distance_!r}")
    _measure("geoforest kneighbors", lambda: forest.kneighbors(n_neighbors=k))
    _measure(
        "geoforest kneighbors_graph (symmetric)",
        lambda: forest.kneighbors_graph(n_neighbors=k, mode="distance"),
    )
    nn = NearestNeighbors(n_neighbors=k, n_jobs=2).fit(X)

    def _symmetric():
        G = nn.kneighbors_graph(mode="distance")
        return G.maximum(G.T).tocsr()

    _measure("sklearn kneighbors_graph + maximum(G, G.T)", _symmetric)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
