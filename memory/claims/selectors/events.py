"""Reads of the ledger's events by their fields (the protocol list); search by words and
runs lives in ledger_search.py."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from accounts.models import Tenant
from memory.claims.models import Event


def events_list(
    *,
    tenant: Tenant,
    allowed_subjects: frozenset[str] | None,
    subject: str = "",
    run_id: str = "",
    stage: str = "",
    kind: str = "",
    idempotency_key: str = "",
) -> QuerySet[Event]:
    """The tenant's events the caller may see that match every filter given, never a
    redacted one (its words are gone; a filter on them would only find the tombstone)."""
    events = Event.objects.filter(tenant=tenant, redacted_at__isnull=True).select_related("subject")
    if allowed_subjects is not None:
        reachable = Q(pk__in=[])
        for key in allowed_subjects:
            subject_kind, _, ref = key.partition(":")
            reachable |= Q(subject__kind=subject_kind, subject__ref=ref)
        events = events.filter(reachable)
    if subject:
        subject_kind, _, ref = subject.partition(":")
        events = events.filter(subject__kind=subject_kind, subject__ref=ref)
    filters = {
        "run_id": run_id,
        "stage": stage,
        "kind": kind,
        "idempotency_key": idempotency_key,
    }
    return events.filter(**{name: value for name, value in filters.items() if value})
