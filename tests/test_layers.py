"""The apps form layers, and every import points down (docs/architecture.md, "Layers").

common < accounts < reviews < memory < memory.receipts < memory.claims < memory.privacy
< skills < config: a module may import its own app and the apps below it, never one
above. `reviews` is queue infrastructure and knows no claims or skills; the bare
`memory` package (the label's owner and its migrations) needs none of its domains;
receipts know no claims, claims know nothing of deletion, consent or exports (they
read consent through the reader privacy hands them); `memory` never needs `skills`;
only `config` (settings, URLs, the demo, the dashboard) sees everything.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_import_cycles import import_graph, module_paths

LAYERS = (
    "common",
    "accounts",
    "reviews",
    "memory",
    "memory.receipts",
    "memory.claims",
    "memory.privacy",
    "skills",
    "config",
)


def _layer(module: str) -> int:
    """The layer of the longest prefix of `module` that names one (memory.claims.gate is
    memory.claims, memory.apps is memory)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return LAYERS.index(prefix)
    raise ValueError(f"{module} is in no layer")


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
    planted = {**graph, "reviews.services": graph["reviews.services"] | {"memory.claims.models"}}
    assert upward_imports(planted) == ["reviews.services imports memory.claims.models"]
    # Between two memory domains: receipts sit below claims.
    receipts = "memory.receipts.services.receipts"
    planted = {**graph, receipts: graph[receipts] | {"memory.claims.models"}}
    assert upward_imports(planted) == [f"{receipts} imports memory.claims.models"]
    assert _layer("memory.claims.gate") > _layer("memory.receipts") > _layer("memory.apps")


def _imports_of(root: str) -> dict[str, set[str]]:
    base = Path(__file__).resolve().parents[1]
    found: dict[str, set[str]] = {}
    for path in (base / root).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
        found[str(path.relative_to(base))] = names
    return found


def test_shared_fixtures_live_in_testing_which_neither_bench_nor_tests_owns():
    # The corpora, the fake platform and the bulk seeds are shared by the suite and the
    # benchmarks; they live in `testing`, which imports neither. Only the tests of the
    # benchmarks themselves import `bench`.
    testing = _imports_of("testing")
    assert [f for f, names in testing.items() if names & {"bench", "tests"}] == []
    bench = _imports_of("bench")
    assert [f for f, names in bench.items() if "tests" in names] == []
    tests = _imports_of("tests")
    assert (
        sorted(
            f
            for f, names in tests.items()
            if "bench" in names
            and not f.startswith("tests/bench/")
            and f != "tests/memory/test_deletion_bench.py"
        )
        == []
    )
    assert len(testing) >= 4 and len(tests) > 100  # the walk reads the real trees


# A room of a readable size (docs/architecture.md): a file that grows past this has
# grown a second responsibility and is split. Migrations are generated, not read.
MAX_LINES = 600


def test_no_source_file_is_over_600_lines():
    base = Path(__file__).resolve().parents[1]
    roots = ("accounts", "bench", "clients", "common", "config", "examples", "memory", "reviews")
    long = {
        str(path.relative_to(base)): lines
        for root in (*roots, "skills", "testing", "tests")
        for path in (base / root).rglob("*.py")
        if "migrations" not in path.parts
        and (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
