"""The library imports none of the code around it (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: Packages beside the library that use it and that it must never import.
AROUND = ("geoforest_experiments", "benchmarks", "studies", "dev", "tests")


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every absolute import in a file, at any depth of its code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def test_no_library_module_imports_the_experiments_or_other_code_around_it():
    files = sorted((REPO / "geoforest").rglob("*.py"))
    assert len(files) > 50
    found = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in files
        for line, module in imported_modules(path)
        if module.split(".")[0] in AROUND
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "import geoforest_experiments\n",
        "def f():\n    from geoforest_experiments.cli import add_experiment_command\n",
        "try:\n    import geoforest_experiments.cli as c\nexcept ImportError:\n    pass\n",
        "import importlib\nimportlib.import_module('geoforest_experiments.cli')\n",
    ],
)
def test_the_import_check_sees_imports_anywhere_in_a_module(tmp_path, source):
    path = tmp_path / "m.py"
    path.write_text(source)
    assert [m.split(".")[0] for _, m in imported_modules(path)][-1] == "geoforest_experiments"
