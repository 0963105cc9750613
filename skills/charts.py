"""What the version page draws: the matrix rows with their cases, and the cost curve.

Pure layout from selector results; the template only places the numbers.
The chart is inline SVG with plain attributes, so it needs neither script
nor inline style under the console's Content-Security-Policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skills.models import EvaluationCase, EvaluationCheck
from skills.selectors import CostPoint, EvaluationMatrix, MatrixCell

WIDTH, HEIGHT = 480, 180
LEFT, RIGHT, TOP, BOTTOM = 30, 460, 16, 150


@dataclass(frozen=True)
class MatrixRow:
    cell: MatrixCell
    cases: list[EvaluationCase]

    @property
    def doubts(self) -> list[str]:
        return [doubt.replace("_", " ") for doubt in self.cell.doubts]

    @property
    def passed_cases(self) -> int:
        return sum(1 for case in self.cases if case.passed)

    @property
    def failed_checks(self) -> list[str]:
        return [
            check.label.lower()
            for check in EvaluationCheck
            if any(not getattr(case, check.value) for case in self.cases)
        ]

    @property
    def mean_tokens(self) -> float:
        return sum(c.cost_tokens for c in self.cases) / len(self.cases) if self.cases else 0.0

    @property
    def mean_seconds(self) -> float:
        return sum(c.cost_seconds for c in self.cases) / len(self.cases) if self.cases else 0.0


def matrix_rows(matrix: EvaluationMatrix) -> list[MatrixRow]:
    # The runs come with their cases prefetched (selectors.evaluation_matrix).
    return [
        MatrixRow(cell=cell, cases=list(cell.run.cases.all()) if cell.run else [])
        for cell in matrix.cells
    ]


def cost_chart(points: list[CostPoint], *, current: int) -> dict[str, Any]:
    """Versions left to right; tokens per case (scaled to the largest) and pass rate."""
    if not points:
        return {"points": []}
    top_tokens = max(point.mean_tokens for point in points) or 1.0
    step = (RIGHT - LEFT) / max(len(points) - 1, 1)
    drawn = []
    for index, point in enumerate(points):
        x = LEFT + step * index if len(points) > 1 else (LEFT + RIGHT) / 2
        drawn.append(
            {
                "number": point.number,
                "current": point.number == current,
                "x": round(x, 1),
                "token_y": round(BOTTOM - (BOTTOM - TOP) * point.mean_tokens / top_tokens, 1),
                "pass_y": round(BOTTOM - (BOTTOM - TOP) * point.pass_rate, 1),
                "cases": point.cases,
                "pass_percent": point.pass_rate * 100,
                "mean_tokens": point.mean_tokens,
                "mean_seconds": point.mean_seconds,
                "mean_tool_calls": point.mean_tool_calls,
            }
        )
    return {
        "points": drawn,
        "width": WIDTH,
        "height": HEIGHT,
        "base": BOTTOM,
        "right": RIGHT,
        "label_y": BOTTOM + 20,
        "token_line": " ".join(f"{p['x']},{p['token_y']}" for p in drawn),
        "pass_line": " ".join(f"{p['x']},{p['pass_y']}" for p in drawn),
    }
