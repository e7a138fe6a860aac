"""The README's code runs, and prints what it says.

Each ```python block of README.md runs in order in one namespace (later
blocks use earlier names).  A line ``print(...)  # -> TEXT`` states what it
prints: the test compares, in order, every printed line of the block with
those ``TEXT``s.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_code():
    assert len(BLOCKS) >= 5


def test_readme_blocks_run_and_print_what_they_say():
    pytest.importorskip("sklearn")
    namespace: dict = {}
    for i, block in enumerate(BLOCKS):
        expected = [m.strip() for m in re.findall(r"#\s*->\s*(.*)$", block, re.M)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a README reader sees them; the test checks output
            exec(compile(block, f"README block {i}", "exec"), namespace)
        printed = [line.strip() for line in out.getvalue().splitlines() if line.strip()]
        assert printed == expected, f"README block {i}: printed {printed}, says {expected}"
