"""No two memdesk modules import each other, directly or round a loop (docs/architecture.md).

Every import counts, including one inside a function: moving an import into a
function only hides a cycle from Python, not from the reader. Tasks are enqueued
by name, so services never import the tasks that call them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("accounts", "common", "config", "memory", "reviews", "skills")


def module_paths() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        graph[name] = {other for other in imported if other in modules and other != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_round_a_loop():
    assert cycles(import_graph(module_paths())) == []


def test_the_check_sees_the_real_imports_and_would_see_a_loop():
    graph = import_graph(module_paths())
    # Read from the files, including an import made inside a function.
    assert "memory.claims.services.claims" in graph["memory.claims.services.corrections"]
    assert "memory.claims.decisions" in graph["memory.claims.apps"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_another_modules_private_names():
    # A leading underscore says "only this module uses it"; a name another module needs
    # is part of its owner's interface and is named as such.
    modules = module_paths()
    private = sorted(
        f"{name} imports {node.module}.{alias.name}"
        for name, path in modules.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module in modules
        for alias in node.names
        if alias.name.startswith("_")
    )
    assert private == []
