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

How to run
----------
From the repository root, on a quiet machine (compilation is single-threaded;
another job on the cores inflates the cold time most)::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeats 2     # warm runs repeated
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
    args = parser.parse_args(argv)
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
