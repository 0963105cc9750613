"""What an end user may see: the claims about the subjects linked to them, and the
export of everything memdesk holds about those subjects."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from accounts.models import AuditEvent, Tenant
from accounts.selectors import owned_subject_keys
from memory.claims.models import Claim, ClaimSource, ClaimStatus, Event, Subject
from memory.privacy.models import Consent, DataExport, DeletionRequest
from memory.privacy.plain import export_report
from memory.privacy.selectors.export_activity import (
    activity_rows_total,
    activity_sections,
    row_chunks,
)


def me_subjects(*, tenant: Tenant, user: Any) -> QuerySet[Subject]:
    """The subjects of the tenant linked to `user` that memdesk has heard of."""
    owned = Q(pk__in=[])
    for key in owned_subject_keys(tenant=tenant, user=user):
        kind, _, ref = key.partition(":")
        owned |= Q(kind=kind, ref=ref)
    return Subject.objects.filter(owned, tenant=tenant).order_by("kind", "ref")


def me_memories(
    *, tenant: Tenant, user: Any, subject_key: str | None = None, status: str | None = None
) -> QuerySet[Claim]:
    """Claims about the user's subjects, every status but erased, with their sources."""
    subjects = me_subjects(tenant=tenant, user=user)
    if subject_key:
        kind, _, ref = subject_key.partition(":")
        subjects = subjects.filter(kind=kind, ref=ref)
    claims = (
        Claim.objects.filter(tenant=tenant, subject__in=subjects)
        .exclude(status=ClaimStatus.ERASED)
        .select_related("subject")
        .prefetch_related(
            Prefetch(
                "sources",
                queryset=ClaimSource.objects.select_related("event").order_by("added_at", "id"),
            )
        )
    )
    if status:
        claims = claims.filter(status=status)
    return claims


def me_memory_get(*, tenant: Tenant, user: Any, claim_id: Any) -> Claim | None:
    return me_memories(tenant=tenant, user=user).filter(pk=claim_id).first()


# -- "download my data" ---------------------------------------------------------------------

EXPORT_FORMAT = "memdesk-export/1"


def me_exports(*, tenant: Tenant, user: Any) -> QuerySet[DataExport]:
    """The person's own exports, newest first. Nobody else's: another user's is not found."""
    return DataExport.objects.filter(tenant=tenant, requested_by=user).order_by("-created_at")


def me_export_get(*, tenant: Tenant, user: Any, export_id: Any) -> DataExport | None:
    return me_exports(tenant=tenant, user=user).filter(pk=export_id).first()


def _claims(tenant: Tenant, subject_ids: list[int]) -> QuerySet[Claim]:
    return (
        Claim.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .exclude(status=ClaimStatus.ERASED)
        .select_related("subject")
        .order_by("recorded_at", "id")
    )


def _events(tenant: Tenant, subject_ids: list[int]) -> QuerySet[Event]:
    return (
        Event.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .select_related("subject")
        .order_by("recorded_at", "id")
    )


def _deletions(tenant: Tenant, subject_ids: list[int]) -> QuerySet[DeletionRequest]:
    return (
        DeletionRequest.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .select_related("subject")
        .order_by("created_at", "id")
    )


def export_rows_total(*, tenant: Tenant, subject_ids: list[int]) -> int:
    """How many rows an export of these subjects writes: claims, events, deletions, and
    what was done with them (`export_activity`)."""
    return (
        _claims(tenant, subject_ids).count()
        + _events(tenant, subject_ids).count()
        + _deletions(tenant, subject_ids).count()
        + activity_rows_total(tenant=tenant, subject_ids=subject_ids)
    )


def _at(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _claim_rows(tenant: Tenant, claims: list[Claim]) -> list[dict[str, Any]]:
    ids = [claim.pk for claim in claims]
    sources: dict[Any, list[dict[str, Any]]] = {claim_id: [] for claim_id in ids}
    for source in (
        ClaimSource.objects.filter(tenant=tenant, claim_id__in=ids)
        .select_related("event")
        .order_by("added_at", "id")
    ):
        sources[source.claim_id].append(
            {
                "event": str(source.event_id) if source.event_id else None,
                "event_kind": source.event.kind if source.event is not None else None,
                "uri": source.uri,
                "observed_at": _at(source.observed_at),
                "digest": source.digest,
            }
        )
    history: dict[str, list[dict[str, Any]]] = {str(claim_id): [] for claim_id in ids}
    for entry in AuditEvent.objects.filter(
        tenant=tenant, target_type="claim", target_id__in=list(history)
    ).order_by("at", "id"):
        history[entry.target_id].append(
            {
                "at": _at(entry.at),
                "verb": entry.verb,
                "actor": {"kind": entry.actor_kind, "label": entry.actor_label},
                "reason": entry.reason,
            }
        )
    return [
        {
            "id": str(claim.pk),
            "subject": claim.subject.key,
            "kind": claim.kind,
            "predicate": claim.predicate,
            "scope": claim.scope,
            "value": claim.value,
            "text": claim.text,
            "status": claim.status,
            "authority": claim.authority,
            "basis": claim.basis,
            "revision": claim.revision,
            "supersedes": str(claim.supersedes_id) if claim.supersedes_id else None,
            "valid_from": _at(claim.valid_from),
            "valid_to": _at(claim.valid_to),
            "available_at": _at(claim.available_at),
            "recorded_at": _at(claim.recorded_at),
            "refresh_after": _at(claim.refresh_after),
            "expires_at": _at(claim.expires_at),
            "gate": {"decision": claim.gate_decision, "reasons": list(claim.gate_reasons)},
            "agent": claim.agent,
            "last_used_at": _at(claim.last_used_at),
            "use_count": claim.use_count,
            "sources": sources[claim.pk],
            "history": history[str(claim.pk)],
        }
        for claim in claims
    ]


def _event_rows(events: list[Event]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(event.pk),
            "subject": event.subject.key,
            "kind": event.kind,
            "run_id": event.run_id,
            "agent": event.agent,
            "text": event.text,
            "body": event.body,
            "source_uri": event.source_uri,
            "observed_at": _at(event.observed_at),
            "recorded_at": _at(event.recorded_at),
            "digest": event.digest,
            "sensitivity": event.sensitivity,
            "redacted": event.redacted_at is not None,
        }
        for event in events
    ]


def _deletion_rows(deletions: list[DeletionRequest]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(deletion.pk),
            "scope": deletion.scope,
            "cause": deletion.cause,
            "subject": deletion.subject.key,
            "claim": str(deletion.claim_id) if deletion.claim_id else None,
            "events": [str(pk) for pk in deletion.event_ids],
            "recall_traces": [str(pk) for pk in deletion.trace_ids],
            "status": deletion.status,
            "created_at": _at(deletion.created_at),
            "finished_at": _at(deletion.finished_at),
            "report": export_report(deletion.report),
        }
        for deletion in deletions
    ]


def export_sections(
    *, tenant: Tenant, subject_ids: list[int], chunk_rows: int
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The export's rows as (section, rows) chunks of at most `chunk_rows`, in document order,
    so a worker can report progress between them. Erased claims hold nothing and are left
    out; redacted events stay, empty, with `redacted: true`. Then the recalls, uses,
    review decisions and audit rows about them."""
    for claims in row_chunks(_claims(tenant, subject_ids), chunk_rows):
        yield "claims", _claim_rows(tenant, claims)
    for events in row_chunks(_events(tenant, subject_ids), chunk_rows):
        yield "events", _event_rows(events)
    for deletions in row_chunks(_deletions(tenant, subject_ids), chunk_rows):
        yield "deletions", _deletion_rows(deletions)
    yield from activity_sections(tenant=tenant, subject_ids=subject_ids, chunk_rows=chunk_rows)


def export_header(
    *,
    tenant: Tenant,
    user: Any,
    subject_ids: list[int],
    subject_keys: list[str],
    generated_at: datetime,
) -> dict[str, Any]:
    """The document's head: who and what it is about, and the consents its subjects gave
    or withdrew (a few rows per subject)."""
    consents = (
        Consent.objects.filter(tenant=tenant, subject_id__in=subject_ids)
        .select_related("subject")
        .order_by("subject_id", "sensitivity")
    )
    return {
        "format": EXPORT_FORMAT,
        "generated_at": generated_at.isoformat(),
        "tenant": tenant.slug,
        "user": user.get_username(),
        "subjects": subject_keys,
        "consents": [
            {
                "subject": consent.subject.key,
                "sensitivity": consent.sensitivity,
                "granted": consent.granted,
                "changed_at": _at(consent.changed_at),
            }
            for consent in consents
        ],
    }
