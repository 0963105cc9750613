"""Seeded rows kept once per test process and put back in later tests (`TableSnapshot`).

Seeding the demo goes through the services (each claim through the write gate, two
deletions run to their reports) and takes seconds; the browser tests each start from it,
in tables flushed after every test. Copying the rows it left back takes a fraction of
that. They come back exactly (ids, sequences), loaded with triggers and foreign-key
checks off as `pg_dump --disable-triggers` restores them: the rows were consistent when
they were copied, and the append-only and transition triggers guard changes, not loads.
The same way, with triggers and checks off, `empty_tables` empties what a transactional
test left.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings
from django.db import connection, transaction

# Filled by migrations and the flush itself (content types and permissions come back
# after every flush), never by seeding.
INFRASTRUCTURE = frozenset({"django_migrations", "django_content_type", "auth_permission"})
# Cache keys are dropped only under a test process's own prefix (tests/conftest.py gives
# each pytest-xdist worker one), never a shared cache's.
TEST_CACHE_PREFIX = "memdesk-test-"


def _tables() -> list[str]:
    names = connection.introspection.django_table_names(only_existing=True, include_views=False)
    return sorted(set(names) - INFRASTRUCTURE)


@contextmanager
def _triggers_off() -> Iterator[Any]:
    """A cursor in a transaction that fires no trigger and checks no foreign key."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        yield cursor


def _row_counts(tables: list[str]) -> dict[str, int]:
    union = " UNION ALL ".join(
        f"SELECT '{table}', count(*) FROM {connection.ops.quote_name(table)}"  # noqa: S608
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(union)
        return dict(cursor.fetchall())


def usable() -> bool:
    """Whether a snapshot can be taken or put back here: a test process's own cache
    prefix (its keys can be dropped), and every table empty (nothing else to keep)."""
    prefix = str(settings.CACHES["default"].get("KEY_PREFIX", ""))
    return prefix.startswith(TEST_CACHE_PREFIX) and not any(_row_counts(_tables()).values())


@dataclass(frozen=True)
class TableSnapshot:
    rows: dict[str, bytes]  # table -> its rows in COPY's binary format
    sequences: list[tuple[str, int | None]]  # sequence -> last value (None: never used)

    @classmethod
    def take(cls) -> TableSnapshot:
        """Every row of every table that has rows, and the sequences of those tables."""
        filled = [table for table, n in _row_counts(_tables()).items() if n]
        rows: dict[str, bytes] = {}
        sequences: list[tuple[str, int | None]] = []
        with connection.cursor() as cursor:
            for table in filled:
                name = connection.ops.quote_name(table)
                with cursor.cursor.copy(f"COPY {name} TO STDOUT (FORMAT binary)") as copy:
                    rows[table] = b"".join(bytes(block) for block in copy)
                for sequence in connection.introspection.get_sequences(cursor, table):
                    cursor.execute(
                        "SELECT last_value FROM pg_sequences WHERE schemaname = current_schema()"
                        " AND sequencename = %s",
                        [sequence["name"]],
                    )
                    sequences.append((sequence["name"], cursor.fetchone()[0]))
        return cls(rows=rows, sequences=sequences)

    def restore(self) -> None:
        """Put the rows back into the (empty) tables, the sequences where they were, and
        drop this test process's cache keys: no throttle count or cached block of an
        earlier test meets rows with the same ids."""
        with _triggers_off() as cursor:
            for table, data in self.rows.items():
                name = connection.ops.quote_name(table)
                with cursor.cursor.copy(f"COPY {name} FROM STDIN (FORMAT binary)") as copy:
                    copy.write(data)
            for sequence, last in self.sequences:
                if last is None:
                    cursor.execute("SELECT setval(%s, 1, false)", [sequence])
                else:
                    cursor.execute("SELECT setval(%s, %s, true)", [sequence, last])
        prefix = settings.CACHES["default"]["KEY_PREFIX"]
        client = redis.Redis.from_url(str(settings.CACHES["default"]["LOCATION"]))
        try:
            keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()


def empty_tables() -> None:
    """Delete every row a test left, as `flush` would, in a few milliseconds.

    Django's `flush` truncates every table (about 0.2 s for this schema, most of it
    PostgreSQL making new files for each table and index) and then fills content types
    and permissions again. The tables a test leaves behind hold a few rows each, so
    deleting them is far cheaper; foreign-key checks and the append-only triggers are off
    for it, as for `restore`. Content types and permissions stay: the flush would put the
    same ones back.
    """
    statements = "; ".join(
        f"DELETE FROM {connection.ops.quote_name(table)}"  # noqa: S608
        for table in _tables()
    )
    with _triggers_off() as cursor:
        cursor.execute(statements)
