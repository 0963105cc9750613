"""What inspecting one package may cost: text lines, script size, syntax tree, wall time.

A package beyond the budget fails with ``scan_budget_exceeded`` wherever the
budget runs out, so hostile input costs seconds, never a worker.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from skills.package.errors import PackageError


@dataclass(frozen=True)
class ScanBudget:
    """What one package may cost to inspect, beyond the size limits.

    ``max_text_lines``: lines of text over all files (the secret scan's cost
    grows with lines). ``max_script_bytes``: a Python script parsed for its
    capabilities. ``max_ast_nodes`` / ``max_ast_depth``: its syntax tree.
    ``max_seconds``: wall time of the whole inspection.
    """

    max_text_lines: int = 20_000
    max_script_bytes: int = 256_000
    max_ast_nodes: int = 100_000
    max_ast_depth: int = 100
    max_seconds: float = 10.0


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def check(self, path: str | None = None) -> None:
        if time.monotonic() > self.at:
            raise budget_exceeded(
                f"Inspecting the package took longer than {self.seconds:g} seconds.", path
            )


def budget_exceeded(detail: str, path: str | None = None) -> PackageError:
    return PackageError(
        code="scan_budget_exceeded",
        detail=f"{detail} memdesk inspects every file before a version can be stored; "
        "split the skill or shrink the files and upload again.",
        path=path,
    )


def check_text_budget(texts: dict[str, str], *, budget: ScanBudget) -> None:
    lines = 0
    for path, text in texts.items():
        lines += text.count("\n") + 1
        if lines > budget.max_text_lines:
            raise budget_exceeded(
                f"The package holds more than {budget.max_text_lines} lines of text.", path
            )
