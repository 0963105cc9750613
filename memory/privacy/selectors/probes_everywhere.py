"""The generic deletion probe: every text, varchar, array and JSON column of every table
of memdesk's apps (read from information_schema), searched for the deleted words, so
a copy in a table nobody registered is still found. `probes.py` runs it last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import connection

from accounts.models import Tenant
from memory.privacy.held_content import QUOTED_CONTENT
from memory.privacy.terms import quotable_terms, word_regex


def probe_result(
    name: str, query: str, result: dict[str, Any], clean: bool, *, per_word: int | None = None
) -> dict[str, Any]:
    if per_word is not None:
        query = f"{query}, for each of {per_word} distinctive words (digests in the report)"
    return {"name": name, "query": query, "result": result, "clean": clean}


# The apps whose tables memdesk writes; every text and JSON column of each is scanned.
MEMDESK_APPS = ("accounts", "common", "memory", "reviews", "skills")


# Column types that can hold a person's words (arrays of text, not of uuids).
_TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb")


_TEXT_ARRAYS = ("_text", "_varchar", "_bpchar")


# Columns memdesk fills with digests of what it hashed, never with the words.
_DIGEST_SUFFIXES = ("digest", "fingerprint")


# Columns that hold memdesk's own words, never anyone's content: a deletion report
# (digests and probe descriptions), the gate's and reviewers' reason codes, and the
# derived n-gram index (its own probe).
NOT_CONTENT = frozenset(
    {
        ("memory_deletionrequest", "report"),
        ("memory_claim", "ngrams"),
        ("memory_claim", "gate_reasons"),
        ("reviews_reviewitem", "reason_codes"),
    }
)


GENERIC_PROBE_ROWS = 20


@dataclass(frozen=True)
class ContentTable:
    name: str
    pk: str
    tenant_scoped: bool
    columns: tuple[str, ...]


def content_tables() -> list[ContentTable]:
    """Every table of memdesk's apps with the columns that can hold text, read from
    the database's catalogue so a column added by any migration is included.
    Columns whose values memdesk picks from a fixed set (choices) are left out."""
    models_by_table: dict[str, Any] = {}
    for model in apps.get_models(include_auto_created=True):
        if model._meta.app_label in MEMDESK_APPS and not model._meta.proxy:
            models_by_table.setdefault(model._meta.db_table, model)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = ANY(%s) "
            "ORDER BY table_name, ordinal_position",
            [sorted(models_by_table)],
        )
        catalogue = cursor.fetchall()
    columns: dict[str, list[str]] = {}
    has_tenant: set[str] = set()
    for table, column, data_type, udt_name in catalogue:
        if column == "tenant_id":
            has_tenant.add(table)
        texty = data_type in _TEXT_TYPES or (data_type == "ARRAY" and udt_name in _TEXT_ARRAYS)
        if not texty or (table, column) in NOT_CONTENT or column.endswith(_DIGEST_SUFFIXES):
            continue
        field = next(
            (f for f in models_by_table[table]._meta.concrete_fields if f.column == column), None
        )
        if field is not None and field.choices:
            continue
        columns.setdefault(table, []).append(column)
    return [
        ContentTable(
            name=table,
            pk=models_by_table[table]._meta.pk.column,
            tenant_scoped=table in has_tenant,
            columns=tuple(table_columns),
        )
        for table, table_columns in sorted(columns.items())
    ]


def probe_everywhere(*, tenant: Tenant, terms: list[str]) -> dict[str, Any]:
    """Every text and JSON column of every memdesk table, searched for every word."""
    tables = content_tables()
    findings: list[dict[str, str | bool]] = []
    scanned_columns = sum(len(table.columns) for table in tables)
    registered: dict[str, set[str]] = {}
    for quoted in QUOTED_CONTENT:
        registered.setdefault(quoted.table, set()).update(quoted.columns)
    words = quotable_terms(terms)
    if words:
        regex = word_regex(words)
        with connection.cursor() as cursor:
            for table in tables:
                hits = ", ".join(f"{c}::text ~* %s" for c in table.columns)
                # One match per row over its columns joined by a newline, which no word
                # holds and which bounds a word as the column's start or end would: the
                # same rows as testing each column, at one regex run per row.
                columns = ", ".join(f"{c}::text" for c in table.columns)
                tenant_filter = "tenant_id = %s AND " if table.tenant_scoped else ""
                cursor.execute(
                    f"SELECT {table.pk}::text, {hits} FROM {table.name} "  # noqa: S608
                    f"WHERE {tenant_filter}concat_ws(E'\\n', {columns}) ~* %s LIMIT %s",
                    [
                        *([regex] * len(table.columns)),
                        *([tenant.pk] if table.tenant_scoped else []),
                        regex,
                        GENERIC_PROBE_ROWS,
                    ],
                )
                for row_id, *matched in cursor.fetchall():
                    findings.extend(
                        {
                            "table": table.name,
                            "column": column,
                            "row": row_id,
                            "scrubbed_by_deletions": column in registered.get(table.name, ()),
                        }
                        for column, hit in zip(table.columns, matched, strict=True)
                        if hit
                    )
    return probe_result(
        "everywhere",
        "for every table of memdesk's apps and each of its text, varchar, array and JSON "  # noqa: S608
        "columns (from information_schema; digests and uuids left out): SELECT id FROM "
        ":table WHERE tenant_id = :tenant AND :column::text ~* :word_as_a_whole_word LIMIT "
        + str(GENERIC_PROBE_ROWS),
        {"tables": len(tables), "columns": scanned_columns, "findings": findings},
        not findings,
        per_word=len(words),
    )
