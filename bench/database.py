"""The configured database as a libpq connection string, for the benchmarks' own
connections beside Django's (a bare psycopg connection, LangGraph's store)."""

from __future__ import annotations

from django.db import connection
from psycopg.conninfo import make_conninfo


def conninfo() -> str:
    """Django's default database (the throwaway one while a benchmark runs), as libpq
    reads it; empty settings are left to libpq's defaults."""
    settings = connection.settings_dict
    return make_conninfo(
        dbname=settings["NAME"],
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
    )
