"""A forest grown from a Dask array on a local cluster, against the in-memory path.

What is measured
----------------
A local cluster of ``--n-workers`` (2) worker processes, one thread each, and
the scheduler in a process of its own (``SubprocessCluster``, as on a real
cluster; ``--scheduler-in-process``: a ``LocalCluster``, whose scheduler runs in
this process), ``--memory-limit`` (6GiB) each, and a ``Client``.  ``X ~ N(0, 1)``
(float32, ``n`` x ``p``; default 10^7 x 10, 400 MB) is generated *on the
workers* by ``dask.array.random.default_rng(0).standard_normal`` (each chunk of
``--chunk-rows`` rows is drawn inside its own task) and persisted there before
anything is timed; the client never holds it.  Then, each phase timed on its
own:

* ``fit``: ``gf.UnsupervisedForest(n_estimators=100, max_samples=100_000,
  random_state=0)`` (other parameters at their defaults) fitted on the Dask
  array;
* ``apply``: the leaves of all ``n`` training points (``forest.apply()``, a
  lazy ``n x n_estimators`` int32 Dask array), written by the workers with
  ``dask.array.to_npy_stack`` to a temporary directory (deleted afterwards), so
  that they never reach the client (``--apply-to sum`` reduces them on the
  workers instead);
* ``fit`` includes the learned metric's estimate (``distance="auto"``; with
  ``--distance proximity`` the forest is fitted without it);
* ``kneighbors``, once per ranking of ``--distance`` (default ``both``: the
  learned metric, the default, then ``set_params(distance="proximity")`` on the
  same forest, so the two are timed side by side on the same queries):
  ``dist, ind = forest.kneighbors(n_neighbors=20)`` (lazy), then
  ``dist[:q]`` and ``ind[:q]`` for the first ``--query-rows`` rows, persisted
  on the workers (one search for both) and written with ``to_npy_stack``, so
  the client receives none of it.  Only the query chunks holding those rows
  run, but each of them is searched against the reference index of *every*
  training point, which is built from the leaves of all ``n`` rows.  The time
  of all ``n`` rows is extrapolated as (time / rows computed) x ``n``, where
  "rows computed" is the rows of the query chunks touched.  That is an upper
  bound: it charges the index building once per query chunk, and a single
  query chunk (one search task per reference partition) may leave a worker
  idle.  A second extrapolation, "workers kept busy", uses the workers' CPU
  seconds divided by the number of workers instead of the wall time.  Both are
  printed as extrapolations, never as measurements.

For each phase:

* **workers CPU s**: the CPU seconds of the worker processes (all their
  threads, ``time.process_time`` through ``client.run``), summed;
* **bytes moved between workers**: the sum over workers of
  ``Worker.transfer_outgoing_bytes_total`` (a cumulative counter in
  ``distributed/worker.py``, incremented by ``Worker.get_data``, in bytes as
  Dask's ``sizeof`` estimates them), read with ``client.run`` before and after
  the phase.  ``get_data`` also serves the results the scheduler gathers for
  the client, so the counter is split with ``Worker.transfer_outgoing_log``
  (one entry per transfer, with ``who``: the requesting worker's address, or
  ``None`` for the scheduler's gather): entries requested by a worker are
  "between workers", the rest of the counter is "to client".  The script makes
  that log unbounded and drains it at every read.  ``sizeof`` is exact for
  NumPy arrays (and tuples or lists of them) but only ``sys.getsizeof`` for
  other objects, such as the fitted forest shipped as one graph node, so the
  "(wire MB)" column also sums the log's ``compressed`` field: the bytes each
  transfer wrote to the socket (what ``comm.write`` returns).  The bytes moved
  between workers are also broken down by task name, with where ``X``'s chunks
  are after each phase.  Data the client *sends* (the task graph, with the
  fitted forest in it) is not counted;
* **client peak**: this process's ``VmHWM`` minus its ``VmRSS`` baseline,
  taken after the cluster is up and ``X`` is persisted (``VmHWM`` is reset
  through ``/proc/self/clear_refs`` at the baseline and after each phase).
  With ``--scheduler-in-process`` the figure is client + scheduler.  The
  summary gives the peak growth over all phases in MB and as a percentage of
  ``X.nbytes``, and ``forest.nbytes_``: the fitted trees live on the client
  by design, whatever ``n``;
* **worker peak**: each worker process's ``VmHWM`` (read and reset through
  ``client.run`` the same way; the first reset is after ``X`` is persisted, so
  generation is not counted), and the bytes each worker spilled to disk.  A
  worker the nanny restarts starts a new process (and a new peak), so the
  figure is only meaningful with no restarts;
* **restarts**: the scheduler's events during the phase: workers the nannies
  restarted for passing the memory limit (topic ``worker-restart-memory``)
  and workers removed for any reason (``remove-worker`` in topic ``all``),
  whose tasks in memory are then recomputed.

Beside it, unless ``--inmemory-n 0``: the in-memory path on a NumPy array of
``--inmemory-n`` rows (default 10^6; same ``p``, trees, ``max_samples``,
``n_jobs=2``, same distribution, generated with NumPy), in a child process run
after the cluster is closed: ``fit``, ``apply()`` and ``kneighbors(20)`` of all
rows, each timed, with the child's peak RSS growth over its baseline (``X``
allocated, numba warm).

numba is warmed up before anything is timed: a tiny fit + ``kneighbors`` on
the client, the same in every worker process (``client.run``) and a tiny fit
from a Dask array on the cluster.  Each worker process therefore compiles, or
loads from numba's on-disk cache, the kernels once, outside the timings.

How to run
----------
From the repository root, one heavy job at a time (``--quick`` takes under a
minute; the default run is far longer, mostly its ``kneighbors`` phase)::

    python3 benchmarks/bench_dask.py                  # n = 10^7, 100 trees
    python3 benchmarks/bench_dask.py --n 4000000 --n-estimators 20 --inmemory-n 0
    python3 benchmarks/bench_dask.py --quick          # smoke run: n = 400,000, 10 trees
    python3 benchmarks/bench_dask.py --json /tmp/bench_dask.json

Linux only for the memory figures (``/proc``); elsewhere they are left out.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from collections import deque
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _child import report, spawn_child  # noqa: E402
from _memory import peak_rss_bytes  # noqa: E402

import geoforest as gf  # noqa: E402

SEED = 0
MB = 1e6
QUICK = {
    "n": 400_000,
    "chunk_rows": 50_000,
    "n_estimators": 10,
    "max_samples": 20_000,
    "query_rows": 20_000,
    "inmemory_n": 100_000,
}


# ------------------------------------------------------------ memory (/proc)
def status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:  # not Linux
        pass
    return None


def reset_peak() -> bool:
    """Reset this process's ``VmHWM`` to its current RSS (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ------------------------------------------------- run on every worker (client.run)
def _worker_prepare(dask_worker=None) -> bool:
    """Make the worker's outgoing-transfer log unbounded (drained at every read)."""
    dask_worker.transfer_outgoing_log = deque(dask_worker.transfer_outgoing_log)
    return True


def _worker_transfers(dask_worker=None) -> dict[str, Any]:
    """The worker's outgoing-bytes counter, and its transfers since the last read.

    ``by_key``: bytes sent per (requester, task name prefix).
    """
    from dask.utils import key_split

    log = dask_worker.transfer_outgoing_log
    entries = list(log)
    log.clear()
    by_key: dict[tuple[Any, str], int] = {}
    wire: dict[Any, int] = {}
    for e in entries:
        who = e.get("who")
        wire[who] = wire.get(who, 0) + int(e.get("compressed") or 0)
        for key, nbytes in e.get("keys", {}).items():
            name = (who, key_split(key))
            by_key[name] = by_key.get(name, 0) + int(nbytes or 0)
    return {
        "total": int(dask_worker.transfer_outgoing_bytes_total),
        "by_key": [[who, name, nbytes] for (who, name), nbytes in by_key.items()],
        "wire": [[who, nbytes] for who, nbytes in wire.items()],
    }


def _worker_memory(reset: bool = True, dask_worker=None) -> dict[str, Any]:
    """The worker's RSS, its peak since the last reset, CPU seconds and bytes spilled."""
    out = {"rss": status_bytes("VmRSS"), "peak": status_bytes("VmHWM")}
    out["cpu_s"] = time.process_time()  # all the worker process's threads
    metrics = getattr(dask_worker.data, "cumulative_metrics", {})
    out["spilled"] = int(metrics.get(("disk-write", "bytes"), 0))
    if reset:
        reset_peak()
    return out


def _warm_numba(p: int, n_neighbors: int) -> bool:
    """A tiny fit + apply + kneighbors, in memory: compiles or loads numba's kernels."""
    X = np.random.default_rng(SEED).standard_normal((2000, p), dtype=np.float32)
    forest = gf.UnsupervisedForest(n_estimators=2, max_samples=500, random_state=SEED).fit(X)
    forest.apply()
    forest.kneighbors(n_neighbors=n_neighbors)
    return True


# ---------------------------------------------------------------- the Dask path
class Meter:
    """Bytes moved and peaks of the client and the workers, phase by phase."""

    def __init__(self, client, X) -> None:
        self.client, self.X = client, X
        self.events = self._events()
        self.workers = set(client.scheduler_info()["workers"])
        client.run(_worker_prepare)
        self.totals = self._totals()
        self.memory = client.run(_worker_memory)  # first reset of the workers' peaks
        self.baseline = status_bytes("VmRSS")
        reset_peak()

    def _totals(self) -> dict[str, dict[str, Any]]:
        return self.client.run(_worker_transfers)

    def _events(self) -> tuple[int, int]:
        """The scheduler's counts so far: memory restarts, workers removed."""
        restarts = len(self.client.get_events("worker-restart-memory"))
        removed = sum(
            msg.get("action") == "remove-worker" for _, msg in self.client.get_events("all")
        )
        return restarts, removed

    def phase(self) -> dict[str, Any]:
        """What the phase that just ended moved and used; resets the peaks."""
        client_peak = status_bytes("VmHWM")
        reset_peak()
        after = self._totals()
        out_bytes = wire_between = wire_client = 0
        moved: dict[str, int] = {}  # between workers, by task name
        for addr, now in after.items():
            out_bytes += now["total"] - self.totals.get(addr, {"total": 0})["total"]
            for who, name, nbytes in now["by_key"]:
                if who in self.workers:
                    moved[name] = moved.get(name, 0) + nbytes
            for who, nbytes in now["wire"]:
                if who in self.workers:
                    wire_between += nbytes
                else:
                    wire_client += nbytes
        self.totals = after
        memory = self.client.run(_worker_memory)
        # A restarted worker has a new address: its CPU seconds start again from 0.
        cpu = sum(
            m["cpu_s"] - self.memory.get(a, {"cpu_s": 0.0})["cpu_s"] for a, m in memory.items()
        )
        events = self._events()
        restarts, removed = (now - before for now, before in zip(events, self.events, strict=True))
        self.events = events
        self.workers = set(memory)
        self.memory = memory
        who_has = self.client.who_has(self.X)
        between = sum(moved.values())
        return {
            "between_workers_bytes": between,
            "between_workers_by_task": dict(sorted(moved.items(), key=lambda kv: -kv[1])),
            "x_chunks_on_several_workers": sum(len(w) > 1 for w in who_has.values()),
            "x_chunks_per_worker": [
                sum(addr in w for w in who_has.values()) for addr in sorted(self.workers)
            ],
            "to_client_bytes": out_bytes - between,
            "between_workers_wire_bytes": wire_between,
            "to_client_wire_bytes": wire_client,
            "client_peak_growth_bytes": (
                None if client_peak is None else client_peak - self.baseline
            ),
            "workers_cpu_s": cpu,
            "workers": memory,
            "memory_restarts": restarts,
            "workers_removed": removed,
        }


def subprocess_cluster(n_workers: int, memory_limit: str):
    """Workers of one thread each and the scheduler in a process of its own, as on
    a real cluster: this process is then the client alone, and its memory is the
    client's."""
    from distributed.deploy.subprocess import SubprocessCluster

    return SubprocessCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        worker_kwargs={"memory_limit": memory_limit},
        dashboard_address=None,
    )


def run_dask(args: argparse.Namespace) -> dict[str, Any]:
    import dask
    import dask.array as da
    import distributed

    print(f"dask {dask.__version__}, distributed {distributed.__version__}", flush=True)
    # The scheduler's HTTP server (health, metrics) moves off 8787 if another cluster has it.
    warnings.filterwarnings("ignore", message="Port 8787 is already in use")
    if args.scheduler_in_process:
        cluster = distributed.LocalCluster(
            n_workers=args.n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=None,
        )
    else:
        cluster = subprocess_cluster(args.n_workers, args.memory_limit)
    client = distributed.Client(cluster)
    try:
        return _dask_phases(args, client, da, dask, distributed)
    finally:
        client.close()
        cluster.close()


def _dask_phases(args, client, da, dask, distributed) -> dict[str, Any]:
    # numba on every worker process, then the Dask path itself on a tiny array.
    t = time.perf_counter()
    client.run(_warm_numba, args.p, args.n_neighbors)
    tiny = da.random.default_rng(SEED + 1).standard_normal(
        (2000, args.p), chunks=(500, args.p), dtype=np.float32
    )
    warm = gf.UnsupervisedForest(n_estimators=2, max_samples=500, random_state=SEED).fit(tiny)
    warm.apply().sum(axis=0).compute()
    dask.compute(*warm.kneighbors(n_neighbors=args.n_neighbors))
    del warm, tiny
    print(f"workers warmed up in {time.perf_counter() - t:.1f}s", flush=True)

    t = time.perf_counter()
    X = da.random.default_rng(SEED).standard_normal(
        (args.n, args.p), chunks=(args.chunk_rows, args.p), dtype=np.float32
    )
    X = X.persist()
    distributed.wait(X)
    gen_s = time.perf_counter() - t
    print(
        f"X {X.shape} float32 ({X.nbytes / MB:,.0f} MB) in {X.numblocks[0]} chunks of "
        f"{args.chunk_rows:,} rows, generated and persisted on the workers in {gen_s:.1f}s",
        flush=True,
    )

    placed = client.who_has(X)
    addrs = sorted(client.scheduler_info()["workers"])
    per_worker = [sum(addr in w for w in placed.values()) for addr in addrs]
    print(f"X chunks per worker after persist: {'/'.join(map(str, per_worker))}", flush=True)
    meter = Meter(client, X)
    phases: list[dict[str, Any]] = []

    def record(name: str, seconds: float, **extra: Any) -> dict[str, Any]:
        row = {"phase": name, "seconds": seconds, **meter.phase(), **extra}
        phases.append(row)
        print(f"  {name}: {seconds:.1f}s", flush=True)
        return row

    params = dict(n_estimators=args.n_estimators, max_samples=args.max_samples, random_state=SEED)
    # The fit estimates the learned metric unless only proximity is asked for.
    fit_distance = "proximity" if args.distance == "proximity" else "auto"
    forest = gf.UnsupervisedForest(**params, distance=fit_distance)
    t = time.perf_counter()
    forest.fit(X)
    record("fit", time.perf_counter() - t)

    tmpdir = tempfile.mkdtemp(prefix="bench_dask_")
    try:
        t = time.perf_counter()
        if args.apply_to == "npy":
            da.to_npy_stack(os.path.join(tmpdir, "leaves"), forest.apply(), axis=0)
        else:
            forest.apply().sum(axis=0, dtype=np.int64).compute()
        record(f"apply (all rows, {args.apply_to})", time.perf_counter() - t)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)

    q = min(args.query_rows, args.n)
    rankings = {"both": ["auto", "proximity"]}.get(args.distance, [args.distance])
    by_ranking: dict[str, dict[str, Any]] = {}
    for ranking in rankings:
        forest.set_params(distance=ranking)
        name = forest.distance_
        t = time.perf_counter()
        dist, ind = forest.kneighbors(n_neighbors=args.n_neighbors)
        # Stored by the workers, as the docs' example does: the client gets nothing.
        tmpdir = tempfile.mkdtemp(prefix="bench_dask_")
        try:
            # One search for both arrays: persisted on the workers, then each stored.
            dist_q, ind_q = dask.persist(dist[:q], ind[:q])
            da.to_npy_stack(os.path.join(tmpdir, "dist"), dist_q, axis=0)
            da.to_npy_stack(os.path.join(tmpdir, "ind"), ind_q, axis=0)
            del dist_q, ind_q
            kn_s = time.perf_counter() - t
            stored = sum(
                os.path.getsize(os.path.join(root, f))
                for root, _, files in os.walk(tmpdir)
                for f in files
            )
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)
        starts = np.concatenate([[0], np.cumsum(ind.chunks[0])[:-1]])
        touched = int((starts < q).sum())
        rows_computed = int(sum(ind.chunks[0][:touched]))
        record(
            f"kneighbors ({name}), first {q:,} rows",
            kn_s,
            ranking=name,
            query_chunks_touched=touched,
            query_chunks=len(ind.chunks[0]),
            rows_computed=rows_computed,
            stored_bytes=int(stored),
        )
        # If every worker were busy all along (many query chunks at once): CPU / workers.
        kn_cpu = phases[-1]["workers_cpu_s"]
        by_ranking[name] = {
            "seconds": kn_s,
            "extrapolated_s": kn_s / rows_computed * args.n,
            "extrapolated_busy_s": kn_cpu / rows_computed * args.n / len(meter.workers),
        }
    first = by_ranking[next(iter(by_ranking))]
    extrapolated, extrapolated_busy = first["extrapolated_s"], first["extrapolated_busy_s"]

    client_growth = max((r["client_peak_growth_bytes"] or 0) for r in phases)
    worker_peaks: dict[str, int] = {}
    worker_spilled: dict[str, int] = {}
    for r in phases:
        for addr, m in r["workers"].items():
            worker_peaks[addr] = max(worker_peaks.get(addr, 0), m["peak"] or 0)
            worker_spilled[addr] = max(worker_spilled.get(addr, 0), m["spilled"])
    return {
        "n": args.n,
        "generate_s": gen_s,
        "x_nbytes": int(X.nbytes),
        "chunks": X.numblocks[0],
        "forest_nbytes": int(forest.nbytes_),
        "client_baseline_rss_bytes": meter.baseline,
        "client_peak_growth_bytes": client_growth,
        "worker_peak_rss_bytes": worker_peaks,
        "worker_spilled_bytes": worker_spilled,
        "kneighbors_all_rows_extrapolated_s": extrapolated,
        "kneighbors_all_rows_extrapolated_busy_s": extrapolated_busy,
        "kneighbors_by_ranking": by_ranking,
        "phases": phases,
    }


# -------------------------------------------------- the in-memory path (a child)
def run_inmemory_child(args: argparse.Namespace) -> dict[str, Any]:
    """Child side: fit, apply, kneighbors of a NumPy array; times and peak growth."""
    _warm_numba(args.p, args.n_neighbors)
    X = np.random.default_rng(SEED).standard_normal((args.n, args.p), dtype=np.float32)
    baseline = status_bytes("VmRSS")
    reset_peak()
    forest = gf.UnsupervisedForest(
        n_estimators=args.n_estimators,
        max_samples=args.max_samples,
        n_jobs=args.n_jobs,
        random_state=SEED,
    )
    phases = []

    def timed(name: str, fn) -> None:
        t = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t
        peak = status_bytes("VmHWM")
        reset_peak()
        growth = None if peak is None or baseline is None else peak - baseline
        phases.append({"phase": name, "seconds": seconds, "peak_growth_bytes": growth})

    timed("fit", lambda: forest.fit(X))
    timed("apply (all rows)", forest.apply)
    timed("kneighbors, all rows", lambda: forest.kneighbors(n_neighbors=args.n_neighbors))
    return {
        "n": args.n,
        "baseline_rss_bytes": baseline,
        "peak_rss_bytes": peak_rss_bytes(),
        "forest_nbytes": int(forest.nbytes_),
        "phases": phases,
    }


def run_inmemory(args: argparse.Namespace) -> dict[str, Any]:
    flags = {
        "child": "inmemory",
        "n": args.inmemory_n,
        "p": args.p,
        "n-estimators": args.n_estimators,
        "max-samples": args.max_samples,
        "n-neighbors": args.n_neighbors,
        "n-jobs": 2,
    }
    return spawn_child(__file__, flags, what="in-memory child")


# -------------------------------------------------------------------- output
def mb(n_bytes: float | None) -> str:
    return "-" if n_bytes is None else f"{n_bytes / MB:,.1f}"


COLUMNS = (
    ("path", 9),
    ("n", 11),
    ("phase", 34),
    ("seconds", 8),
    ("workers CPU s", 13),
    ("between workers MB", 18),
    ("(wire MB)", 9),
    ("to client MB", 12),
    ("client peak +MB", 15),
    ("max worker peak MB", 18),
    ("restarts", 8),
)


def table_row(*cells: str) -> str:
    return "  ".join(
        f"{c:<{w}}" if i in (0, 2) else f"{c:>{w}}"
        for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS, strict=True))
    )


def print_table(res_dask: dict[str, Any], res_mem: dict[str, Any] | None) -> None:
    header = table_row(*(name for name, _ in COLUMNS))
    print(header)
    print("-" * len(header))
    n = f"{res_dask['n']:,}"
    for r in res_dask["phases"]:
        wpeak = max((m["peak"] or 0) for m in r["workers"].values())
        print(
            table_row(
                "dask",
                n,
                r["phase"],
                f"{r['seconds']:.1f}",
                f"{r['workers_cpu_s']:.1f}",
                mb(r["between_workers_bytes"]),
                mb(r["between_workers_wire_bytes"]),
                mb(r["to_client_bytes"]),
                mb(r["client_peak_growth_bytes"]),
                mb(wpeak),
                f"{r['memory_restarts']}/{r['workers_removed']}",
            )
        )
    kn = res_dask["phases"][-1]
    for name, r in res_dask["kneighbors_by_ranking"].items():
        label = f"kneighbors ({name}), all rows EXTRAPOL."
        print(table_row("dask", n, label, f"{r['extrapolated_s']:.1f}", *["-"] * 7))
        label = "  same, workers kept busy EXTRAPOL."
        print(table_row("dask", n, label, f"{r['extrapolated_busy_s']:.1f}", *["-"] * 7))
    if res_mem is not None:
        for r in res_mem["phases"]:
            print(
                table_row(
                    "in-memory",
                    f"{res_mem['n']:,}",
                    r["phase"],
                    f"{r['seconds']:.1f}",
                    "-",
                    "-",
                    "-",
                    "-",
                    mb(r["peak_growth_bytes"]),
                    "-",
                    "-",
                )
            )
    print(
        f"\nkneighbors: the first rows touched {kn['query_chunks_touched']} of "
        f"{kn['query_chunks']} query chunks ({kn['rows_computed']:,} rows computed); "
        f"all rows EXTRAPOLATED as seconds / {kn['rows_computed']:,} x {res_dask['n']:,} "
        "(an upper bound: it charges the reference index, built from all rows, once per "
        "query chunk, and the idle time of workers that one query chunk cannot keep busy); "
        "'workers kept busy' divides the workers' CPU seconds instead of the wall time by "
        f"the {len(kn['workers'])} workers. "
        f"The workers stored {mb(kn['stored_bytes'])} MB of dist + ind as npy stacks."
    )
    for r in res_dask["phases"]:
        top = list(r["between_workers_by_task"].items())[:6]
        moved = ", ".join(f"{name} {mb(nbytes)}" for name, nbytes in top) or "nothing"
        print(
            f"{r['phase']}: moved between workers (MB, by task name): {moved}; "
            f"afterwards {r['x_chunks_on_several_workers']} of {res_dask['chunks']} chunks "
            "of X were held by more than one worker; X chunks per worker "
            + "/".join(str(c) for c in r["x_chunks_per_worker"])
        )
    print(
        "between workers MB: Dask's sizeof of the data workers fetched from each other "
        "(Worker.transfer_outgoing_bytes_total); (wire MB): the bytes those transfers wrote "
        "to the socket. To client: the rest of the counter (results gathered for the client)."
    )
    print(
        "restarts: workers restarted by their nanny for passing the memory limit / workers "
        "removed (any cause; their results in memory are recomputed), from the scheduler's events."
    )
    print(
        "client peak +MB: VmHWM of the client process (the client alone; with "
        "--scheduler-in-process also the scheduler; or the in-memory child) during the "
        "phase, minus its baseline RSS."
    )


def print_summary(res_dask: dict[str, Any], res_mem: dict[str, Any] | None) -> None:
    growth = res_dask["client_peak_growth_bytes"]
    x = res_dask["x_nbytes"]
    print("\nsummary (dask path)")
    print(f"  X on the workers:           {mb(x)} MB")
    print(f"  client baseline RSS:        {mb(res_dask['client_baseline_rss_bytes'])} MB")
    print(f"  client peak growth:         {mb(growth)} MB ({100 * growth / x:.1f} % of X)")
    kn = res_dask["phases"][-1]
    n_kn = len(res_dask["kneighbors_by_ranking"])
    before = max((r["client_peak_growth_bytes"] or 0) for r in res_dask["phases"][:-n_kn])
    print(
        f"    of which before kneighbors: {mb(before)} MB ({100 * before / x:.1f} % of X); "
        f"kneighbors stored {mb(kn['stored_bytes'])} MB of results from the workers"
    )
    print(f"  forest.nbytes_ (on client): {mb(res_dask['forest_nbytes'])} MB")
    by = res_dask["kneighbors_by_ranking"]
    if len(by) == 2:
        learned, prox = by["relevance"]["seconds"], by["proximity"]["seconds"]
        print(
            f"  kneighbors learned / proximity ranking: {learned:.1f}s / {prox:.1f}s "
            f"= {learned / prox:.2f}x (same forest, same query rows)"
        )
    restarts = sum(r["memory_restarts"] for r in res_dask["phases"])
    removed = sum(r["workers_removed"] for r in res_dask["phases"])
    print(f"  worker memory restarts:     {restarts} (workers removed: {removed})")
    for addr, peak in res_dask["worker_peak_rss_bytes"].items():
        spilled = res_dask["worker_spilled_bytes"][addr]
        print(f"  worker {addr}: peak RSS {mb(peak)} MB, spilled to disk {mb(spilled)} MB")
    if res_mem is not None:
        print("summary (in-memory path, child process)")
        print(f"  baseline RSS (X, numba):    {mb(res_mem['baseline_rss_bytes'])} MB")
        print(f"  peak RSS:                   {mb(res_mem['peak_rss_bytes'])} MB")
        print(f"  forest.nbytes_:             {mb(res_mem['forest_nbytes'])} MB")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-samples", type=int, default=100_000)
    parser.add_argument("--n-neighbors", type=int, default=20)
    parser.add_argument("--query-rows", type=int, default=200_000)
    parser.add_argument(
        "--distance",
        choices=("both", "auto", "proximity"),
        default="both",
        help="ranking of the kneighbors phase: the default (learned metric), proximity, "
        "or both one after the other on the same fitted forest (default)",
    )
    parser.add_argument("--memory-limit", default="6GiB", help="per worker")
    parser.add_argument(
        "--scheduler-in-process",
        action="store_true",
        help="LocalCluster (scheduler in this process) instead of SubprocessCluster",
    )
    parser.add_argument("--n-workers", type=int, default=2)
    parser.add_argument(
        "--apply-to",
        choices=("npy", "sum"),
        default="npy",
        help="write the training leaves with to_npy_stack, or sum them on the workers",
    )
    parser.add_argument(
        "--inmemory-n", type=int, default=1_000_000, help="in-memory path's n (0: skip)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: n=400,000, chunks of 50,000, 10 trees, max_samples=20,000, "
        "query rows 20,000, in-memory n=100,000 (flags given explicitly win)",
    )
    parser.add_argument("--child", choices=("inmemory",), help=argparse.SUPPRESS)
    parser.add_argument("--n-jobs", type=int, default=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:  # flags given explicitly win over the smoke-run settings
        for name, value in QUICK.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child is not None:
        report(run_inmemory_child(args))
        return 0

    print(
        f"python {platform.python_version()}, numpy {np.__version__}, geoforest "
        f"{getattr(gf, '__version__', '?')}, {os.cpu_count()} cpus"
    )
    print(
        f"n={args.n:,} p={args.p} chunk_rows={args.chunk_rows:,} "
        f"n_estimators={args.n_estimators} max_samples={args.max_samples:,} "
        f"n_neighbors={args.n_neighbors} query_rows={args.query_rows:,} "
        f"distance={args.distance}; "
        f"{args.n_workers} workers x 1 thread, memory_limit={args.memory_limit}; "
        f"in-memory n={args.inmemory_n:,} (n_jobs=2)",
        flush=True,
    )
    _warm_numba(args.p, args.n_neighbors)  # the client's own numba

    res_dask = run_dask(args)
    res_mem = None
    if args.inmemory_n > 0:
        print("in-memory path (child process) ...", flush=True)
        res_mem = run_inmemory(args)
    print()
    print_table(res_dask, res_mem)
    print_summary(res_dask, res_mem)
    if args.json:
        record = {
            "settings": {k: v for k, v in vars(args).items() if k not in ("child", "json")},
            "dask": res_dask,
            "inmemory": res_mem,
        }
        with open(args.json, "w") as fh:
            json.dump(record, fh, indent=1)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
