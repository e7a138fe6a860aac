"""The shape of the repository: sizes, code that says why, public API outside the library."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _dev(name: str):
    spec = importlib.util.spec_from_file_location(f"dev_{name}", REPO / "dev" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layout = _dev("layout")

#: Code outside the library that must use only its public API.
CONSUMERS = ("geoforest_experiments", "benchmarks", "studies", "docs/site/examples")
#: Private attributes of other libraries that consumers may touch.
FOREIGN_PRIVATE = {"_getframe", "_exit", "_asdict", "_replace", "_fields", "_make"}


def test_modules_and_functions_are_small():
    assert layout.offenders() == []


def test_the_limits_hold_for_the_code_as_the_formatter_lays_it_out():
    """No '# fmt: skip' packing hides code from the size limits (issue 44).

    A copy of the library with every marker removed and ``ruff format`` applied
    keeps the limits; the few markers left each say why on the line above.
    """
    pytest.importorskip("ruff")
    assert layout.formatted_offenders() == []
    skips = layout.fmt_skips()
    assert len(skips) <= layout.MAX_FMT_SKIP, "\n".join(skips)
    for entry in skips:
        rel, line, _ = entry.split(":", 2)
        above = (REPO / rel).read_text().splitlines()[int(line) - 2].strip()
        assert above.startswith("#"), f"{entry}: say on the line above why it stays"


def test_library_code_keeps_no_history_or_timings():
    phrases = layout.history_phrases()
    assert len(phrases) <= layout.MAX_HISTORY_PHRASES, "\n".join(phrases)


def test_the_size_check_counts_code_lines_only():
    source = 'def f():\n    """Doc\n\n    string."""\n    # comment\n\n    x = 1\n    return x\n'
    tree = ast.parse(source)
    code = layout._code_lines(source)
    fn = tree.body[0]
    assert len([i for i in code if fn.lineno <= i <= fn.end_lineno]) == 3  # def, x =, return
    assert layout.HISTORY.search("2.7x faster per query")
    assert layout.HISTORY.search("see DESIGN 2.2")
    assert not layout.HISTORY.search("arc length measured from t = 2*pi")


def private_uses(path: Path) -> list[str]:
    """Private names of geoforest a file uses: imports of ``_x`` modules or names, ``obj._x``."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "geoforest":
                continue
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in parts) or any(n.startswith("_") for n in names):
                found.append(f"{path}:{node.lineno} from {node.module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "geoforest" and any(p.startswith("_") for p in parts):
                    found.append(f"{path}:{node.lineno} import {alias.name}")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if not name.startswith("_") or name.startswith("__") or name in FOREIGN_PRIVATE:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            found.append(f"{path}:{node.lineno} ._{name.lstrip('_')}")
    return found


@pytest.mark.parametrize("folder", CONSUMERS)
def test_experiments_benchmarks_and_studies_use_only_public_api(folder):
    files = sorted((REPO / folder).rglob("*.py"))
    assert files
    found = [use for path in files for use in private_uses(path)]
    assert found == [], "\n".join(found)


def test_the_private_name_check_finds_private_names(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from geoforest.cluster._spectral import x\n"
        "from geoforest.cluster import _helper\n"
        "import geoforest._engine.builder\n"
        "model._candidate(1)\n"
        "self._ok = 1\n"
        "from ._runner import fine\n"
    )
    assert len(private_uses(bad)) == 4


def test_import_writes_and_deletes_nothing(tmp_path):
    """``import geoforest`` and every public name touch no file of the installed package.

    The package is copied without its caches, as a fresh install would hold it,
    so a first import that wrote a stamp or cleared a cache would show.
    """
    import shutil

    site = tmp_path / "site"
    shutil.copytree(
        REPO / "geoforest", site / "geoforest", ignore=shutil.ignore_patterns("__pycache__")
    )

    def snapshot():
        return {
            p.relative_to(site).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in site.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        } | {p.relative_to(site).as_posix(): None for p in site.rglob("__pycache__/*.nb*")}

    before = snapshot()
    code = "import geoforest as gf\nfor name in gf.__all__:\n    getattr(gf, name)\n"
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=env)
    after = snapshot()
    assert after == before
    assert not list(site.rglob("*.stamp"))
