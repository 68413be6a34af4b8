"""The engine's modules import each other without a cycle, and the rooms never import the table.

Read from the sources (every import a module runs, at its top or inside a function; those
under ``if TYPE_CHECKING:`` only name types): the graph of the engine's modules must be
acyclic, and no module but the package's ``__init__`` may import ``controller.engine.table``
at all, not even for a type — a room is a set of functions over
:class:`~controller.engine.state.TableState`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import controller.engine

ENGINE = Path(controller.engine.__file__).resolve().parent
PACKAGE = "controller.engine"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """The engine modules ``path`` imports when it runs, and those it names for types only."""
    runtime: set[str] = set()
    typing: set[str] = set()

    def visit(node: ast.AST, types_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for inner in child.body:
                    visit_one(inner, True)
                for inner in child.orelse:
                    visit_one(inner, types_only)
                continue
            visit_one(child, types_only)

    def visit_one(node: ast.AST, types_only: bool) -> None:
        found: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == PACKAGE:
                found = [f"{PACKAGE}.{a.name}" for a in node.names]
            elif node.module.startswith(PACKAGE + "."):
                found = [node.module]
        elif isinstance(node, ast.Import):
            found = [a.name for a in node.names if a.name.startswith(PACKAGE + ".")]
        (typing if types_only else runtime).update(found)
        visit(node, types_only)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return runtime, typing


def _graph() -> dict[str, tuple[set[str], set[str]]]:
    return {
        f"{PACKAGE}.{p.stem}": _imports(p)
        for p in sorted(ENGINE.glob("*.py"))
        if p.stem != "__init__"
    }


def test_the_graph_is_read() -> None:
    graph = _graph()
    assert f"{PACKAGE}.state" in graph[f"{PACKAGE}.deal"][0]
    assert f"{PACKAGE}.deal" in graph[f"{PACKAGE}.irregular"][0]
    assert len(graph) >= 15


def test_the_engine_modules_import_each_other_without_a_cycle() -> None:
    graph = {name: runtime for name, (runtime, _types) in _graph().items()}
    done: set[str] = set()
    path: list[str] = []

    def walk(name: str) -> None:
        if name in done:
            return
        assert name not in path, "an import cycle: " + " -> ".join(
            [*path[path.index(name) :], name]
        )
        path.append(name)
        for needed in sorted(graph.get(name, ())):
            walk(needed)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        walk(name)


def test_no_room_imports_the_table() -> None:
    importers = sorted(
        name for name, (runtime, types) in _graph().items() if f"{PACKAGE}.table" in runtime | types
    )
    assert importers == []
