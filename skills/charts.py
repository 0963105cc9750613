"""What the version page draws: the matrix rows with their cases, and the cost curve.

Pure layout from selector results; the template only places the numbers.
The cost charts are common.charts' inline SVG, which needs neither script nor
inline style under the console's Content-Security-Policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.charts import column_chart, percent
from skills.models import EvaluationCase, EvaluationCheck
from skills.selectors import CostPoint, EvaluationMatrix, MatrixCell


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
    """Versions left to right: a chart of tokens per case and one of the pass rate (one
    unit each), and the rows of the table with every figure."""
    if not points:
        return {"points": []}
    columns = [f"v{point.number}" for point in points]
    return {
        "points": [
            {
                "number": point.number,
                "current": point.number == current,
                "cases": point.cases,
                "pass_percent": point.pass_rate * 100,
                "mean_tokens": point.mean_tokens,
                "mean_seconds": point.mean_seconds,
                "mean_tool_calls": point.mean_tool_calls,
            }
            for point in points
        ],
        "tokens_chart": column_chart(
            title="Mean tokens per case, by version",
            points=[(c, round(p.mean_tokens)) for c, p in zip(columns, points, strict=True)],
            axis="tokens per case",
            across="version",
        ),
        "pass_chart": column_chart(
            title="Pass rate, by version",
            points=[(c, p.pass_rate) for c, p in zip(columns, points, strict=True)],
            axis="share of cases passed",
            across="version",
            fmt=percent,
            top=1,
        ),
    }
