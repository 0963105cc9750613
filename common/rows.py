"""Model instances from rows of hand-written SQL, for the few reads on every request.

Compiling a one-row ORM query costs more than running it (about 0.5 ms of Python
against 0.3 ms for the round trip): the lookups each agent call makes (its token,
its subject) and the rows a recall returns are read with fixed SQL instead, and
turned into ordinary model instances here, converted exactly as the ORM would
(jsonb arrives as text and is parsed by the field).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import psycopg
from django.db import connection, models

M = TypeVar("M", bound=models.Model)


class RowReader(Generic[M]):
    """Reads `fields` of `model` (all its columns by default) from a row, in that order.

    `columns` is the select list for the table under `alias`; `width` how many values
    of a row are this model's, so one row may hold two models side by side.
    """

    def __init__(
        self, model: type[M], *, alias: str, fields: Sequence[models.Field[Any, Any]] = ()
    ) -> None:
        self.model = model
        self.fields = list(fields or model._meta.concrete_fields)
        self.width = len(self.fields)
        self.columns = ", ".join(f'{alias}."{f.column}"' for f in self.fields)
        self._attnames = [f.attname for f in self.fields]
        self._converters = [
            (position, f) for position, f in enumerate(self.fields) if hasattr(f, "from_db_value")
        ]

    def build(self, row: Sequence[Any], start: int = 0) -> M:
        """The instance the values `row[start:start + width]` describe, as loaded from the
        database (not new, not dirty)."""
        values = list(row[start : start + self.width])
        for position, f in self._converters:
            values[position] = f.from_db_value(values[position], None, connection)
        return self.model.from_db(connection.alias, self._attnames, values)

    def one(self, sql: str, params: Sequence[Any]) -> M | None:
        """The instance the first row of `sql` describes, or None when it finds none."""
        row = fetch_one(sql, params)
        return None if row is None else self.build(row)

    def all(self, sql: str, params: Sequence[Any]) -> list[M]:
        """The instances every row of `sql` describes, in its order."""
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [self.build(row) for row in cursor.fetchall()]


def fetch_one(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    """The first row of fixed SQL `sql`, run on the request's connection, or None."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row


Statement = tuple[str, Sequence[Any]]


def fetch_together(*statements: Statement) -> list[list[tuple[Any, ...]]]:
    """The rows of each statement, in order, all sent to PostgreSQL in one round trip.

    A page's reads that do not depend on one another would otherwise each wait for the
    database in turn, and on a busy machine the wait costs more than the statement
    (0.5-1 ms against 0.1-0.3 ms, measured). Django's psycopg connection binds values on
    the client, so one query may carry several statements; their results come back one
    after another.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            ";\n".join(sql for sql, _ in statements),
            [value for _, values in statements for value in values],
        )
        results = [cursor.fetchall()]
        while cursor.nextset():
            results.append(cursor.fetchall())
    return results


def fetch_bound(
    sql: str, params: Sequence[Any] | dict[str, Any], *, binary: bool = False
) -> list[tuple[Any, ...]]:
    """The rows of `sql`, its values bound by PostgreSQL instead of spliced into the text.

    Django's cursors bind on the client: every call sends the whole statement with its
    values written out (a recall's ranking statement carries a subject's claim ids and
    scores, 15 KB of text) for the server to parse. Bound on the server, the values
    travel apart from the text, arrays as arrays (measured on the recall: 1 ms of about
    9 saved); `binary` asks for binary results too (bytea as bytes rather than hex).
    Nothing is prepared, as with Django's own statements (preparing measured no faster
    here, and PgBouncer in transaction mode cannot keep them). Runs on the request's
    connection and transaction, logged like Django's own statements when queries are
    logged (tests' query counts, the debug log).
    """
    connection.ensure_connection()
    started = time.monotonic()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, binary=binary)
        rows = cursor.fetchall()
    if connection.queries_logged:
        with psycopg.ClientCursor(connection.connection) as client:
            logged = client.mogrify(sql, params)
        connection.queries_log.append({"sql": logged, "time": f"{time.monotonic() - started:.3f}"})
    return rows
