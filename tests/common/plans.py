"""What PostgreSQL did to run a statement: the nodes of its executed plan."""

from __future__ import annotations

from typing import Any

from django.db import connection


def executed_plan_nodes(sql: str) -> list[dict[str, Any]]:
    """Every node of `sql`'s plan as EXPLAIN ANALYZE ran it (JSON), outermost first: the
    index each scan used and the rows and loops it read. Run a read-only statement only."""
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
        plan = cursor.fetchone()[0][0]["Plan"]

    def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node, *(n for child in node.get("Plans", []) for n in nodes(child))]

    return nodes(plan)
