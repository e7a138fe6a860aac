"""Imports point one way (ARCHITECTURE.md): the library imports none of the code
around it, no module of the library imports itself back through others, the
Dask paths (``geoforest/forest/_dask/``) import none of the estimators, and the
clustering families (``cluster``, ``llpd``, ``diffusion``) stand side by side on
the graph layer (``geoforest/graph/``): none imports a private module of another,
and the graph layer imports none of them."""

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


def library_graph(root: Path) -> dict[str, set[str]]:
    """Module -> library modules it imports (relative imports resolved, at any
    depth of its code; ``from pkg import name`` counts ``pkg.name`` when that is a
    module, else ``pkg``)."""
    paths = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for me, path in paths.items():
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {known(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                full = (
                    node.module
                    if node.level == 0
                    else ".".join(p for p in (base, node.module) if p)
                )
                for alias in node.names:
                    sub = f"{full}.{alias.name}"
                    targets.add(sub if sub in paths else known(full))
        graph[me] = {t for t in targets if t is not None and t != me}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_no_import_circles_in_the_library():
    graph = library_graph(REPO / "geoforest")
    assert "geoforest.forest._dask" in graph["geoforest.forest._base"]
    assert import_cycles(graph) == []


def test_the_dask_paths_import_no_estimator():
    graph = library_graph(REPO / "geoforest")
    estimators = {
        f"geoforest.forest.{m}"
        for m in ("_base", "_search", "_supervised", "_unsupervised", "_random_projection",
                  "_neighbors", "_merge")
    }  # fmt: skip
    dask_modules = [m for m in graph if m.startswith("geoforest.forest._dask")]
    assert len(dask_modules) == 5  # __init__, _fit, _neighbors, _queries, _ranked
    assert {m: graph[m] & estimators for m in dask_modules} == {m: set() for m in dask_modules}


#: The clustering families, side by side on the graph layer.
FAMILIES = ("cluster", "llpd", "diffusion")


def family_of(module: str) -> str | None:
    """``cluster``, ``llpd`` or ``diffusion`` for a module of that family, else None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FAMILIES else None


def crossings(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the layering of the families and the graph layer.

    A family may import its own modules, the graph layer through its public
    door (``geoforest.graph``, ``geoforest.graph.kernels``: never a private
    ``geoforest.graph._x``) and the layers below (``_engine``, ``_validation``,
    ``_jit``, ``_limits``, ``_progress``, ``proximity``, ``forest``, ...), nothing
    of another family (not even its public names: what two families share
    belongs in the graph layer).  The graph layer imports no family at all, and
    reads the forests through their public package only.
    """
    found = []
    for me, targets in sorted(graph.items()):
        mine = family_of(me)
        in_graph = me == "geoforest.graph" or me.startswith("geoforest.graph.")
        for target in sorted(targets):
            theirs = family_of(target)
            if mine is not None and target.startswith("geoforest.graph._"):
                found.append(f"{me} ({mine}) imports {target} (private to the graph layer)")
            if in_graph and target.startswith("geoforest.forest._"):
                found.append(f"{me} (graph layer) imports {target} (private to the forests)")
            if theirs is None:
                continue
            if in_graph:
                found.append(f"{me} (graph layer) imports {target}")
            elif mine is not None and theirs != mine:
                found.append(f"{me} ({mine}) imports {target} ({theirs})")
    return found


def test_families_import_the_graph_layer_not_each_other():
    graph = library_graph(REPO / "geoforest")
    assert {"geoforest.graph._spectral", "geoforest.graph._kdtree"} <= set(graph)
    assert "geoforest.graph" in graph["geoforest.llpd._clustering"]
    assert "geoforest.graph.kernels" in graph["geoforest.llpd._dendrogram"]
    found = crossings(graph)
    assert found == [], "\n".join(found)


def test_the_family_check_finds_crossings(tmp_path):
    pkg = tmp_path / "geoforest"
    for sub in ("graph", "cluster", "llpd"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "graph" / "_spectral.py").write_text("def f():\n    from ..llpd import _x\n")
    (pkg / "llpd" / "_x.py").write_text("from ..cluster._choice import g\nfrom ..graph import f\n")
    (pkg / "llpd" / "_y.py").write_text("import geoforest.cluster\n")
    (pkg / "cluster" / "_choice.py").write_text("from ..graph._spectral import f\n")
    (pkg / "cluster" / "_ok.py").write_text("from . import _choice\nfrom .._jit import njit\n")
    assert crossings(library_graph(pkg)) == [
        "geoforest.cluster._choice (cluster) imports geoforest.graph._spectral (private to the "
        "graph layer)",
        "geoforest.graph._spectral (graph layer) imports geoforest.llpd._x",
        "geoforest.llpd._x (llpd) imports geoforest.cluster._choice (cluster)",
        "geoforest.llpd._y (llpd) imports geoforest.cluster (cluster)",
    ]


def test_the_circle_check_finds_a_circle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "geoforest"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import g\n")
    (pkg / "c.py").write_text("from . import a\n")
    assert import_cycles(library_graph(pkg)) == [["geoforest.a", "geoforest.sub.b"]]


def metric_string_branches(root: Path) -> list[str]:
    """Comparisons of a ``metric`` (name or attribute) with a string, in the families.

    A family asks its geometry (``geoforest.graph``) what it needs; a branch on
    the metric's name is a place where the seam is bypassed.
    """
    found = []
    for family in FAMILIES:
        for path in sorted((root / family).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                named = any(getattr(s, "attr", getattr(s, "id", None)) == "metric" for s in sides)
                strings = any(
                    isinstance(s, ast.Constant)
                    and isinstance(s.value, str)
                    or isinstance(s, ast.Tuple | ast.Set | ast.List)
                    for s in sides
                )
                if named and strings:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_the_families_branch_on_the_metric_name_at_most_three_times():
    found = metric_string_branches(REPO / "geoforest")
    assert len(found) <= 3, "\n".join(found)


def test_the_branch_count_sees_comparisons_with_strings(tmp_path):
    pkg = tmp_path / "geoforest"
    for sub in FAMILIES:
        (pkg / sub).mkdir(parents=True)
    (pkg / "llpd" / "m.py").write_text(
        "if est.metric == 'forest':\n    pass\nok = metric in ('a', 'b')\nno = metric is None\n"
    )
    assert metric_string_branches(pkg) == ["geoforest/llpd/m.py:1", "geoforest/llpd/m.py:3"]
