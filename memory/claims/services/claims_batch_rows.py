"""A batch's rows written one statement per table: its claims, their sources, the review
items it opens and its audit rows, each sent as one JSON array that PostgreSQL unpacks."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection

from accounts.models import AuditEvent, Tenant
from memory.claims import gate
from memory.claims.models import Claim, ClaimSource, Event
from memory.claims.search import searchable_text
from memory.claims.services.claim_inputs import SourceInput
from reviews.models import ReviewItem


class AuditRow(NamedTuple):
    """The columns of the row `audit_record` writes, in `insert_audit`'s order."""

    tenant_id: int
    actor_kind: str
    actor_id: Any
    actor_label: str
    verb: str
    target_type: str
    target_id: str
    reason: str
    data: dict[str, Any]


# Rows are written with INSERT … SELECT FROM jsonb_array_elements(one JSON array
# of rows): one statement and one parameter whatever the batch size, nothing
# compiled or quoted per value in Python. A column is (name, the expression that
# reads it from the row `r`, with {0} for its position in the row).
_TEXT = "r->>{0}"


_JSONB = "r->{0}"


_JSONB_OR_NULL = "NULLIF(r->{0}, 'null'::jsonb)"  # JSONField stores None as SQL NULL


_TEXT_ARRAY = "ARRAY(SELECT jsonb_array_elements_text(r->{0}))"


_UUID_ARRAY = "ARRAY(SELECT jsonb_array_elements_text(r->{0})::uuid)"


def _typed(sql_type: str) -> str:
    return f"(r->>{{0}})::{sql_type}"


def _insert(
    *,
    table: str,
    columns: list[tuple[str, str]],
    rows: list[tuple[Any, ...]],
    returning: str = "",
) -> list[tuple[Any, ...]]:
    if not rows:
        return []
    names = ", ".join(name for name, _ in columns)
    values = ", ".join(expression.format(i) for i, (_, expression) in enumerate(columns))
    sql = (
        f"INSERT INTO {table} ({names}) SELECT {values} "  # noqa: S608 - names from model metadata
        "FROM jsonb_array_elements(%s::jsonb) AS r"
    )
    if returning:
        sql += f" RETURNING {returning}"
    # str() writes UUIDs and datetimes as PostgreSQL reads them (microseconds kept).
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, default=str)])
        return cursor.fetchall() if returning else []


def insert_claims(claims: list[Claim]) -> None:
    """The claims `claim_row(…, with_search_vector=False)` built, with the full-text vector
    `SearchVector(Value(document), config="english")` computes, for claims with n-grams
    (content withheld by the gate has neither)."""
    rows = [
        (
            c.id,
            c.tenant_id,
            c.subject_id,
            c.kind,
            c.predicate,
            c.scope,
            c.scope_key,
            c.scope_size,
            c.value,
            c.text,
            c.authority,
            c.basis,
            c.valid_from,
            c.valid_to,
            c.available_at,
            c.refresh_after,
            c.expires_at,
            c.status,
            c.revision,
            c.supersedes_id,
            c.conflicts_with,
            c.gate_decision,
            c.gate_reasons,
            c.screen,
            c.agent,
            c.token_id,
            c.value_digest,
            c.sensitivity,
            c.consent_classes,
            searchable_text(predicate=c.predicate, text=c.text, value=c.value)
            if not gate.withholds_content(c.gate_reasons)
            else None,
            c.ngrams,
            c.use_count,
            c.updated_at,
        )
        for c in claims
    ]
    _insert(
        table=Claim._meta.db_table,
        columns=[
            ("id", _typed("uuid")),
            ("tenant_id", _typed("bigint")),
            ("subject_id", _typed("bigint")),
            ("kind", _TEXT),
            ("predicate", _TEXT),
            ("scope", _JSONB),
            ("scope_key", _TEXT),
            ("scope_size", _typed("integer")),
            ("value", _JSONB_OR_NULL),
            ("text", _TEXT),
            ("authority", _TEXT),
            ("basis", _TEXT),
            ("valid_from", _typed("timestamptz")),
            ("valid_to", _typed("timestamptz")),
            ("available_at", _typed("timestamptz")),
            ("refresh_after", _typed("timestamptz")),
            ("expires_at", _typed("timestamptz")),
            ("status", _TEXT),
            ("revision", _typed("integer")),
            ("supersedes_id", _typed("uuid")),
            ("conflicts_with", _UUID_ARRAY),
            ("gate_decision", _TEXT),
            ("gate_reasons", _TEXT_ARRAY),
            ("screen", _JSONB),
            ("agent", _TEXT),
            ("token_id", _typed("bigint")),
            ("value_digest", _TEXT),
            ("sensitivity", _TEXT),
            ("consent_classes", _TEXT_ARRAY),
            # What SearchVector(Value(document), config="english") compiles to.
            (
                "search_vector",
                "CASE WHEN r->>{0} IS NULL THEN NULL "
                "ELSE to_tsvector('english'::regconfig, COALESCE(r->>{0}, '')) END",
            ),
            ("ngrams", _TEXT_ARRAY),
            ("use_count", _typed("integer")),
            ("updated_at", _typed("timestamptz")),
        ],
        rows=rows,
    )


class SourceRow(NamedTuple):
    """The columns of a `ClaimSource` row `source_rows` builds, in `insert_sources`'s order."""

    tenant_id: int
    claim_id: Any
    event_id: Any
    uri: str
    observed_at: datetime | None
    digest: str


def batch_source_rows(
    *, tenant: Tenant, claim_id: Any, sources: list[Event | SourceInput]
) -> list[SourceRow]:
    """The rows `source_rows` would build for `sources` (no model instance: the batch only
    inserts them)."""
    return [
        SourceRow(tenant.pk, claim_id, source.id, "", source.observed_at, source.digest)
        if isinstance(source, Event)
        else SourceRow(tenant.pk, claim_id, None, source.uri, source.observed_at, source.digest)
        for source in sources
    ]


def insert_sources(rows: list[SourceRow]) -> None:
    _insert(
        table=ClaimSource._meta.db_table,
        columns=[
            ("tenant_id", _typed("bigint")),
            ("claim_id", _typed("uuid")),
            ("event_id", _typed("uuid")),
            ("uri", _TEXT),
            ("observed_at", _typed("timestamptz")),
            ("digest", _TEXT),
        ],
        rows=list(rows),
    )


def open_reviews(*, tenant: Tenant, rows: dict[int, ReviewItem]) -> dict[int, ReviewItem]:
    """`review_open` for new claims (which have no item yet), with the ids the rows got."""
    inserted = _insert(
        table=ReviewItem._meta.db_table,
        columns=[
            ("tenant_id", _typed("bigint")),
            ("queue", _TEXT),
            ("target_type", _TEXT),
            ("target_id", _TEXT),
            ("target_version", _TEXT),
            ("status", _TEXT),
            ("priority", _typed("smallint")),
            ("subject_key", _TEXT),
            ("topic", _TEXT),
            ("agent_label", _TEXT),
            ("reason_codes", _TEXT_ARRAY),
        ],
        rows=[
            (
                tenant.pk,
                r.queue,
                r.target_type,
                r.target_id,
                r.target_version,
                r.status,
                r.priority,
                r.subject_key,
                r.topic,
                r.agent_label,
                r.reason_codes,
            )
            for r in rows.values()
        ],
        returning="id, target_id",
    )
    ids = {target: pk for pk, target in inserted}
    for row in rows.values():
        row.pk = ids[row.target_id]
    return rows


def insert_audit(rows: list[AuditRow]) -> None:
    _insert(
        table=AuditEvent._meta.db_table,
        columns=[
            ("tenant_id", _typed("bigint")),
            ("actor_kind", _TEXT),
            ("actor_id", _TEXT),
            ("actor_label", _TEXT),
            ("verb", _TEXT),
            ("target_type", _TEXT),
            ("target_id", _TEXT),
            ("reason", _TEXT),
            ("data", _JSONB),
        ],
        rows=list(rows),
    )
