"""Search every row of every table for a string: a full dump, without pg_dump."""

from __future__ import annotations

from django.db import connection


def tables_containing(needle: str) -> dict[str, int]:
    found: dict[str, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
        tables = [row[0] for row in cursor.fetchall()]
        for table in tables:
            cursor.execute(
                f'SELECT count(*) FROM "{table}" AS t WHERE t::text LIKE %s',  # noqa: S608
                [f"%{needle}%"],
            )
            count = cursor.fetchone()[0]
            if count:
                found[table] = count
    return found
