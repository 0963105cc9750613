"""The apps form layers, and every import points down (docs/architecture.md, "Layers").

common < accounts < reviews < memory < skills < config: a module may import its own
app and the apps below it, never one above. `reviews` is queue infrastructure and
knows no claims or skills; `memory` never needs `skills`; only `config` (settings,
URLs, the demo, the dashboard) sees everything.
"""

from __future__ import annotations

from tests.test_import_cycles import import_graph, module_paths

LAYERS = ("common", "accounts", "reviews", "memory", "skills", "config")


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".", 1)[0])


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} imports {other}"
        for module, imported in graph.items()
        for other in imported
        if _layer(other) > _layer(module)
    )


def test_every_import_points_down_the_layers():
    assert upward_imports(import_graph(module_paths())) == []


def test_the_check_would_see_an_upward_import():
    graph = import_graph(module_paths())
    assert set(module_paths()) and all(name.split(".")[0] in LAYERS for name in graph)
    planted = {**graph, "reviews.services": graph["reviews.services"] | {"memory.models"}}
    assert upward_imports(planted) == ["reviews.services imports memory.models"]
