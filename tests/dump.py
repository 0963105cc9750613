"""Search every row of every table for a string: in the test's own connection
(`tables_containing`), or in a real `pg_dump` of the database."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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


def _pg_dump_for_server() -> str:
    """A pg_dump at least as new as the server (it refuses older): the system's, or the
    one shipped with the embedded PostgreSQL `make test` starts."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        server_major = int(cursor.fetchone()[0]) // 10000
    candidates = [shutil.which("pg_dump")]
    try:
        import pgserver
    except ImportError:
        pass
    else:
        candidates.append(str(Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_dump"))
    for candidate in filter(None, candidates):
        if not Path(candidate).exists():
            continue
        version = subprocess.run(
            [candidate, "--version"], check=True, capture_output=True, text=True
        ).stdout
        if int(version.split()[-1].split(".")[0]) >= server_major:
            return candidate
    raise AssertionError(f"no pg_dump for PostgreSQL {server_major} on this machine")


def pg_dump_lines_containing(needle: str) -> list[str]:
    """Run `pg_dump` on the test database (committed rows only: use it from a
    transactional test) and return the dump's lines holding `needle`, ignoring case."""
    db = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": str(db.get("PASSWORD") or "")}
    command = [_pg_dump_for_server(), "--no-owner", "--dbname", str(db["NAME"])]
    for flag, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if db.get(key):
            command += [flag, str(db[key])]
    dump = subprocess.run(
        command, env=env, check=True, capture_output=True, text=True, timeout=120
    ).stdout
    assert "PostgreSQL database dump complete" in dump
    folded = needle.lower()
    return [line for line in dump.splitlines() if folded in line.lower()]
