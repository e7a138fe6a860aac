"""The README's code runs, and prints what it says.

Each ```python block of README.md runs alone, in a fresh Python process, as a
reader who copies only that block would run it: it must import what it uses
and make its own data.  A line ``print(...)  # -> TEXT`` states what it
prints: the test compares, in order, every line the block prints on stdout
with those ``TEXT``s (warnings and progress bars go to stderr).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
#: Seconds one block may take (a cold numba cache compiles the kernels it uses).
TIMEOUT = 900


def test_readme_has_code():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("i", range(len(BLOCKS)), ids=lambda i: f"block{i}")
def test_readme_block_runs_alone_and_prints_what_it_says(i, tmp_path):
    pytest.importorskip("sklearn")
    block = BLOCKS[i]
    expected = [m.strip() for m in re.findall(r"#\s*->\s*(.*)$", block, re.M)]
    run = subprocess.run(
        [sys.executable, "-c", block],
        cwd=tmp_path,  # whatever a block writes stays out of the repository
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, f"README block {i} fails on its own:\n{run.stderr[-3000:]}"
    printed = [line.strip() for line in run.stdout.splitlines() if line.strip()]
    assert printed == expected, f"README block {i}: printed {printed}, says {expected}"


def test_the_graph_snippets_keep_the_distances():
    """Every ``kneighbors_graph`` in the README passes ``mode="distance"``.

    The default, ``mode="connectivity"``, puts 1 on every edge; fed to UMAP or
    HDBSCAN such a graph loses how near each neighbour is (issue 53).
    """
    calls = re.findall(r"kneighbors_graph\(([^)]*)\)", "\n".join(BLOCKS))
    assert calls and all('mode="distance"' in args for args in calls)


def test_the_compile_time_is_one_figure_everywhere():
    """The compile notice, the README and the install page give the same cold-start figure."""
    from geoforest._first_use import NOTICE

    seconds = re.search(r"about (\d+) s", NOTICE)[1]
    said = f"about {seconds} s of it compiling"
    for page in (README, README.parent / "docs" / "site" / "install.rst"):
        assert said in " ".join(page.read_text().split()), f"{page.name} does not say {said!r}"
