"""The layers of docs/architecture.md, checked against the code's own imports.

Every package of ``paimon_sql`` (``procedures/`` and ``systables/`` included, installed as
``paimon_sql.procedures`` and ``paimon_sql.systables``) has a layer. A module may import its own
package and the packages of lower layers, never a higher one, so no two packages import each other.
Between modules there is no cycle at all. Function-level imports and imports under ``if
TYPE_CHECKING:`` (annotations) count like any other: a lower layer names what it needs of a higher
one as a protocol of its own (docs/architecture.md). A function-level import is allowed only where it
keeps Spark out of a light entry point (:data:`LAZY`), never to dodge a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"paimon_sql": ROOT / "paimon_sql", "paimon_sql.procedures": ROOT / "procedures",
           "paimon_sql.systables": ROOT / "systables"}

# lowest first: a package imports only its own and lower layers (docs/architecture.md, "Layers")
LAYERS: List[Tuple[str, ...]] = [
    ("exceptions",),
    ("data",),
    ("options",),
    ("io",),
    ("manifest",),
    ("index",),
    ("format",),
    ("schema", "function"),
    ("snapshot", "consumer"),
    ("mergetree",),
    ("store",),
    ("read",),
    ("write",),
    ("compact",),
    ("commit",),
    ("maintenance",),
    ("tag",),
    ("iceberg",),
    ("table",),
    ("catalog",),
    ("spark",),
    ("systables",),
    ("procedures",),
    ("sql",),
    ("access",),
    ("session",),
    ("cli",),
    ("server",),
]
# ``paimon_sql/__init__.py`` holds ``__version__`` (read by the server) and ``connect``, which
# imports the session when called: the root package counts as the lowest layer, with that one lazy import.
ROOT_PACKAGE = "paimon_sql"
# function-level imports that keep Spark (and the session) out of a light entry point until needed
LAZY: Set[Tuple[str, str]] = {
    ("paimon_sql", "paimon_sql.session"),  # ``import paimon_sql`` works without Spark
    ("paimon_sql.cli", "paimon_sql.session"),  # ``paimon-sql --help`` and argument errors start no Spark
    ("paimon_sql.cli", "paimon_sql.sql.materialized_table"),
    ("paimon_sql.server.main", "paimon_sql.session"),  # likewise ``paimon-sql-server --help``
    ("paimon_sql.server.main", "paimon_sql.server.service"),
    ("paimon_sql.server.main", "paimon_sql.sql.materialized_table"),
}


def modules() -> Dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if parts and parts[0] in ("procedures", "systables") and package == "paimon_sql":
                continue  # only reachable under their own names
            found[".".join([package, *parts])] = path
    return found


MODULES = modules()


def _type_checking_nodes(tree: ast.AST) -> Set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for n in ast.walk(node))
    return out


def _targets(module: str, node: ast.AST) -> Iterator[str]:
    """The project modules an import statement loads (``from pkg import mod`` names the module)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            keep = len(parts) - node.level + (1 if MODULES[module].name == "__init__.py" else 0)
            base = ".".join(parts[:keep] + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            yield name


def imports() -> Dict[str, Dict[str, bool]]:
    """module -> {imported module: whether the import is at function level}; imports under ``if
    TYPE_CHECKING:`` at the top of a module are top-level ones."""
    graph: Dict[str, Dict[str, bool]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        top = {id(n) for n in tree.body} | _type_checking_nodes(tree)
        edges = graph.setdefault(module, {})
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, node):
                    edges[target] = edges.get(target, True) and id(node) not in top
    return graph


GRAPH = imports()


def package_of(module: str) -> str:
    return module.split(".")[1] if module != ROOT_PACKAGE else ROOT_PACKAGE


def layer_of(module: str) -> int:
    if module == ROOT_PACKAGE:
        return -1
    package = package_of(module)
    for i, names in enumerate(LAYERS):
        if package in names:
            return i
    raise AssertionError(f"package {package} ({module}) has no layer: add it to LAYERS and docs/architecture.md")


def test_every_package_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_import_reaches_a_higher_layer():
    bad = [f"{m} imports {t}" for m, edges in GRAPH.items() for t in edges
           if package_of(m) != package_of(t) and layer_of(t) >= layer_of(m) and (m, t) not in LAZY]
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(bad))


def test_function_level_imports_are_only_the_lazy_entry_points():
    found = {(m, t) for m, edges in GRAPH.items() for t, late in edges.items() if late}
    assert found <= LAZY, "function-level imports (move them to the top of the module):\n" + \
        "\n".join(f"{m} -> {t}" for m, t in sorted(found - LAZY))


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_annotation_imports_are_counted():
    """``schema_change`` is imported by ``store.catalog_environment`` for annotations only."""
    assert GRAPH["paimon_sql.store.catalog_environment"].get("paimon_sql.schema.schema_change") is False


def test_no_cycle_between_modules():
    assert _cycles({m: set(edges) for m, edges in GRAPH.items()}) == []


def test_no_cycle_between_packages():
    packages: Dict[str, Set[str]] = {}
    for m, edges in GRAPH.items():
        packages.setdefault(package_of(m), set()).update(package_of(t) for t in edges if package_of(t) != package_of(m))
    assert _cycles(packages) == []


@pytest.mark.parametrize("module, target", [
    ("paimon_sql.schema.table_schema", "paimon_sql.table.format_table"),
    ("paimon_sql.read.scan", "paimon_sql.compact.merge_tree_compact"),
])
def test_the_check_sees_an_import_against_the_layers(module, target, monkeypatch):
    """The checks can fail: an import of a higher layer, added to the graph, is reported."""
    monkeypatch.setitem(GRAPH, module, {**GRAPH[module], target: False})
    with pytest.raises(AssertionError, match=target.replace(".", r"\.")):
        test_no_import_reaches_a_higher_layer()


def test_the_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_below_spark_never_imports_pyspark():
    """The table format works on Arrow alone (an executor task, a script without Spark)."""
    spark = layer_of("paimon_sql.spark")
    bad = []
    for module, path in MODULES.items():
        if layer_of(module) < spark:
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                bad += [f"{module} imports {n}" for n in names if n.split(".")[0] == "pyspark"]
    assert not bad


def test_every_package_is_installed():
    """A new package is in pyproject.toml's list, or a wheel (a user's install) would lack it."""
    import tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {m for m, path in MODULES.items() if path.name == "__init__.py"}
    assert found == listed
