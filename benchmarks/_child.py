"""Run a benchmark workload in a child process and read back its result.

Each workload runs in a fresh interpreter so that its peak memory (``VmHWM``)
and its numba state are its own.  The child prints one line
``BENCH_RESULT {json}``; :func:`spawn_child` finds it (also after progress
output that ended without a newline) and adds the child's wall time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

RESULT_MARKER = "BENCH_RESULT "


def report(result: dict[str, Any]) -> None:
    """Child side: print the result line the parent looks for."""
    print(RESULT_MARKER + json.dumps(result), flush=True)


def spawn_child(
    script: str,
    flags: dict[str, Any],
    *,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    what: str = "child",
) -> dict[str, Any]:
    """Run ``python script --flag value ...`` and return its result (with ``wall_s``).

    ``flags`` maps flag names (without ``--``) to values; ``None`` values are
    left out.
    """
    cmd = [python, os.path.abspath(script)]
    for name, value in flags.items():
        if value is not None:
            cmd += [f"--{name}", str(value)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed with exit code {proc.returncode}")
    for line in proc.stdout.splitlines():
        if RESULT_MARKER in line:
            result: dict[str, Any] = json.loads(line.split(RESULT_MARKER, 1)[1])
            result["wall_s"] = wall
            return result
    raise RuntimeError(f"{what} printed no result:\n{proc.stdout}")
