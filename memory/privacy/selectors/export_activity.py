"""The export's record of what was done with the person's memories: the recalls and
hot-memory reads about their subjects, the uses agents reported of their claims, the
review decisions (and reviewers' notes) on their claims, and the audit rows about their
claims, subjects and deletions.

Every row is found through the person's subjects, never by a name that merely looks
alike. Identifiers inside a row's free-form data (an audit row's `data`, a decision's
`payload`) that name a claim, event, trace or deletion of another subject are left out:
the document holds nothing of anyone else's (docs/privacy.md, "Download my data").
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from accounts.models import AuditEvent, Tenant
from memory.claims.models import Claim, Event, RecallTrace, RecallUse
from memory.privacy.models import DeletionRequest
from reviews.models import Decision

ACTIVITY_SECTIONS = ("recall_traces", "recall_uses", "review_decisions", "audit")


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _claim_ids_as_text(tenant: Tenant, subject_ids: list[int]) -> QuerySet[Any]:
    """Every claim of the subjects, erased ones too (their audit rows are about the person),
    as the text audit rows and review items name them by."""
    return (
        Claim.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .annotate(text_id=Cast("id", CharField()))
        .values("text_id")
    )


def _traces(tenant: Tenant, subject_ids: list[int]) -> QuerySet[RecallTrace]:
    return RecallTrace.objects.filter(tenant=tenant, subject_id__in=subject_ids).order_by(
        "created_at", "id"
    )


def _uses(tenant: Tenant, subject_ids: list[int]) -> QuerySet[RecallUse]:
    return RecallUse.objects.filter(tenant=tenant, claim__subject_id__in=subject_ids).order_by(
        "reported_at", "id"
    )


def _decisions(tenant: Tenant, subject_ids: list[int]) -> QuerySet[Decision]:
    return (
        Decision.objects.filter(
            tenant=tenant,
            item__target_type="claim",
            item__target_id__in=_claim_ids_as_text(tenant, subject_ids),
        )
        .select_related("item")
        .order_by("at", "id")
    )


def _audit(tenant: Tenant, subject_ids: list[int]) -> QuerySet[AuditEvent]:
    deletions = (
        DeletionRequest.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .annotate(text_id=Cast("id", CharField()))
        .values("text_id")
    )
    about = (
        Q(target_type="claim", target_id__in=_claim_ids_as_text(tenant, subject_ids))
        | Q(target_type="subject", target_id__in=[str(pk) for pk in subject_ids])
        | Q(target_type="deletion", target_id__in=deletions)
    )
    return AuditEvent.objects.filter(about, tenant=tenant).order_by("at", "id")


def activity_rows_total(*, tenant: Tenant, subject_ids: list[int]) -> int:
    return (
        _traces(tenant, subject_ids).count()
        + _uses(tenant, subject_ids).count()
        + _decisions(tenant, subject_ids).count()
        + _audit(tenant, subject_ids).count()
    )


def _uuids_in(value: Any) -> set[uuid.UUID]:
    found: set[uuid.UUID] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _uuids_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _uuids_in(item)
    elif isinstance(value, str) and len(value) == 36:
        with contextlib.suppress(ValueError):  # a 36-character string that is no id
            found.add(uuid.UUID(value))
    return found


def _foreign_ids(tenant: Tenant, subject_ids: list[int], values: Iterable[Any]) -> set[str]:
    """The identifiers in `values` of claims, events, traces or deletions that exist in the
    tenant and belong to no subject of the person: what the export leaves out."""
    named: set[uuid.UUID] = set()
    for value in values:
        named |= _uuids_in(value)
    if not named:
        return set()
    # A trace without a subject (one asked about a subject memdesk never heard of) is
    # nobody's here: excluding by subject counts it foreign too.
    tables: tuple[QuerySet[Any], ...] = (
        Claim.objects.all(),
        Event.objects.all(),
        RecallTrace.objects.all(),
        DeletionRequest.objects.all(),
    )
    foreign: set[str] = set()
    for rows in tables:
        found = rows.filter(tenant=tenant, pk__in=named).exclude(subject_id__in=subject_ids)
        foreign |= {str(pk) for pk in found.values_list("pk", flat=True)}
    return foreign


def _without(value: Any, foreign: set[str]) -> Any:
    """`value` with every identifier in `foreign` taken out (null in a field, gone from a list)."""
    if isinstance(value, dict):
        return {key: _without(item, foreign) for key, item in value.items()}
    if isinstance(value, list):
        return [
            _without(item, foreign)
            for item in value
            if not (isinstance(item, str) and item in foreign)
        ]
    if isinstance(value, str) and value in foreign:
        return None
    return value


def _trace_rows(traces: list[RecallTrace]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(trace.pk),
            "kind": trace.kind,
            "subject": trace.subject_key,
            "query": trace.query,
            "filters": trace.filters,
            "excluded": trace.excluded,
            "chosen": [str(claim_id) for claim_id in trace.chosen],
            "budget_chars": trace.budget_chars,
            "used_chars": trace.used_chars,
            "created_at": _at(trace.created_at),
            "redacted": trace.redacted_at is not None,
        }
        for trace in traces
    ]


def _use_rows(uses: list[RecallUse]) -> list[dict[str, Any]]:
    return [
        {
            "trace": str(use.trace_id),
            "claim": str(use.claim_id),
            "position": use.position,
            "cited": use.cited,
            "harmful": use.harmful,
            "run_id": use.run_id,
            "task_id": use.task_id,
            "reported_at": _at(use.reported_at),
        }
        for use in uses
    ]


def _decision_rows(
    tenant: Tenant, subject_ids: list[int], decisions: list[Decision]
) -> list[dict[str, Any]]:
    foreign = _foreign_ids(tenant, subject_ids, [decision.payload for decision in decisions])
    return [
        {
            "id": decision.pk,
            "review_item": decision.item_id,
            "queue": decision.item.queue,
            "claim": decision.item.target_id,
            "verdict": decision.verdict,
            "reason_code": decision.reason_code,
            "note": decision.note,
            "payload": _without(decision.payload, foreign),
            "actor": {"kind": decision.actor_kind, "label": decision.actor_label},
            "at": _at(decision.at),
            "scrubbed": decision.scrubbed_at is not None,
        }
        for decision in decisions
    ]


def _audit_rows(
    tenant: Tenant, subject_ids: list[int], rows: list[AuditEvent]
) -> list[dict[str, Any]]:
    foreign = _foreign_ids(tenant, subject_ids, [row.data for row in rows])
    return [
        {
            "at": _at(row.at),
            "verb": row.verb,
            "target_type": row.target_type,
            "target_id": row.target_id,
            "actor": {"kind": row.actor_kind, "label": row.actor_label},
            "reason": row.reason,
            "data": _without(row.data, foreign),
        }
        for row in rows
    ]


def row_chunks(rows: QuerySet[Any], size: int) -> Iterator[list[Any]]:
    """The rows of `rows` in lists of at most `size`, read `size` at a time."""
    batch: list[Any] = []
    for row in rows.iterator(chunk_size=size):
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def activity_sections(
    *, tenant: Tenant, subject_ids: list[int], chunk_rows: int
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The activity sections' rows as (section, rows) chunks of at most `chunk_rows`."""
    for traces in row_chunks(_traces(tenant, subject_ids), chunk_rows):
        yield "recall_traces", _trace_rows(traces)
    for uses in row_chunks(_uses(tenant, subject_ids), chunk_rows):
        yield "recall_uses", _use_rows(uses)
    for decisions in row_chunks(_decisions(tenant, subject_ids), chunk_rows):
        yield "review_decisions", _decision_rows(tenant, subject_ids, decisions)
    for rows in row_chunks(_audit(tenant, subject_ids), chunk_rows):
        yield "audit", _audit_rows(tenant, subject_ids, rows)
