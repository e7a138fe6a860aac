"""Start-up: ``geoforest demo`` from an empty numba cache (cold) and again (warm).

What is measured
----------------
Each run is a fresh ``geoforest demo`` process (the README's main job: the
noisy helix at 0/10/100/1000 noise dimensions, N = 1,000, 100 trees) with
``NUMBA_CACHE_DIR`` pointing at a temporary folder:

1. **cold**: the folder is empty, so every numba kernel the demo needs is
   compiled (and written to the folder);
2. **warm**: the same folder again, so every kernel is loaded from it.

Each row reports the process's wall time and its peak resident memory
(``VmHWM``, read by the child as it exits), and the time of ``import geoforest``
alone.  The demo's own "URerF time" column shows where the rest goes.

Goal of the scale issue: under 60 s cold and under 10 s warm.

``--first-call`` measures instead what the cold-start bar (issues 32 and 45)
is stated in:
in fresh processes, each with its own empty ``NUMBA_CACHE_DIR``, a first
``UnsupervisedForest(n_estimators=20).fit(X).kneighbors(n_neighbors=10)`` on
1,000 x 10 N(0, 1) points against umap-learn's first ``UMAP().fit(X)`` on the
same points (umap-learn and pynndescent compile numba kernels too), the two
taking turns for ``--rounds`` rounds.  Each row gives the import, the first
call and their sum; the ratios are geoforest / umap-learn (the bar: 1.0 or
less, import and first call summed, on the machine that measures both;
issue 32's 0.5 would take compiling ahead of time, ``docs/benchmarks.md``).
Needs ``umap-learn`` (the ``experiments`` extra).

How to run
----------
From the repository root, on a quiet machine (compilation is single-threaded;
another job on the cores inflates the cold time most)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeats 2     # warm runs repeated
    python benchmarks/bench_startup.py --first-call --rounds 2
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# Runs the command line in the child, then prints the child's own peak RSS.
CHILD = """
import sys
from geoforest.cli import main
code = main(sys.argv[1:])
sys.path.insert(0, {here!r})
from _memory import peak_rss_bytes
print(f"PEAK_RSS_BYTES {{peak_rss_bytes()}}")
sys.exit(code)
"""


# A first call in a fresh process: import, then the call, each timed.
FIRST_CALL = """
import time
import numpy as np
X = np.random.default_rng(0).normal(size=(1000, 10))
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
{call}
t2 = time.perf_counter()
print(f"IMPORT_S {{t1 - t0}}")
print(f"CALL_S {{t2 - t1}}")
"""

FIRST_CALLS = {
    "geoforest": (
        "import geoforest as gf",
        "gf.UnsupervisedForest(n_estimators=20).fit(X).kneighbors(n_neighbors=10)",
    ),
    "umap-learn": ("import umap", "umap.UMAP().fit(X)"),
}


def first_calls(rounds: int) -> int:
    """Cold first calls of geoforest and umap-learn, taking turns; prints the table."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in FIRST_CALLS}
    for r in range(rounds):
        names = list(FIRST_CALLS) if r % 2 == 0 else list(FIRST_CALLS)[::-1]
        for name in names:
            imports, call = FIRST_CALLS[name]
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                code = FIRST_CALL.format(imports=imports, call=call)
                _, _, stdout = run([sys.executable, "-c", code], env)
            lines = stdout.splitlines()
            marked = (line for line in lines if line.startswith(("IMPORT_S", "CALL_S")))
            values = dict(line.split() for line in marked)
            times[name].append((float(values["IMPORT_S"]), float(values["CALL_S"])))
            print(f"round {r + 1}: {name:<11} import {times[name][-1][0]:6.1f} s  "
                  f"first call {times[name][-1][1]:6.1f} s", flush=True)  # fmt: skip
    print(f"\n{'cold, empty numba cache':<26}{'import s':>10}{'call s':>9}{'sum s':>8}")
    for name, rows in times.items():
        for imp, call in rows:
            print(f"{name:<26}{imp:>10.1f}{call:>9.1f}{imp + call:>8.1f}")
    gf_call = min(c for _, c in times["geoforest"])
    um_call = min(c for _, c in times["umap-learn"])
    gf_sum = min(i + c for i, c in times["geoforest"])
    um_sum = min(i + c for i, c in times["umap-learn"])
    print(f"geoforest / umap-learn (best of rounds): first call {gf_call / um_call:.2f}, "
          f"import + first call {gf_sum / um_sum:.2f}")  # fmt: skip
    return 0


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB, if the child reports it) and stdout of one child."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    peak_mb = float("nan")
    for line in proc.stdout.splitlines():
        if line.startswith("PEAK_RSS_BYTES "):
            peak_mb = int(line.split()[1]) / 1e6
    return wall, peak_mb, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="warm runs")
    parser.add_argument(
        "--first-call", action="store_true", help="cold first calls against umap-learn's"
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --first-call")
    args = parser.parse_args(argv)
    if args.first_call:
        return first_calls(args.rounds)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        here = os.path.dirname(os.path.abspath(__file__))
        demo = [
            sys.executable,
            "-c",
            CHILD.format(here=here),
            *("demo", "--no-progress", "--out", out),
        ]
        imp = [sys.executable, "-c", "import geoforest"]
        rows = []
        wall, _, _ = run(imp, env)
        rows.append(("import geoforest", wall, float("nan"), ""))
        wall, peak, stdout = run(demo, env)
        rows.append(("demo, cold cache", wall, peak, stdout))
        for r in range(args.repeats):
            wall, peak, stdout = run(demo, env)
            rows.append((f"demo, warm cache ({r + 1})", wall, peak, stdout))
    print(f"{'run':<26}{'wall s':>8}{'peak MB':>9}")
    for name, wall, peak, _ in rows:
        print(f"{name:<26}{wall:>8.1f}{peak:>9.0f}")
    for name, _, _, stdout in rows[1:]:
        print(f"\n--- {name}")
        print("\n".join(line for line in stdout.splitlines() if line.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
