"""What the retention page and the dashboard show: periods, what they reach, last sweeps.

`retention_reach` is also what the sweep deletes: the page's "past it now" and
the next sweep count the same rows.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from accounts.models import AuditEvent, Tenant
from memory.claims.models import Claim, ClaimSource, ClaimStatus, Event, RecallTrace
from memory.privacy.models import DeletionRequest, RetainedRecord, RetentionPolicy


def retention_reach(policy: RetentionPolicy, *, now: datetime) -> QuerySet[Any]:
    """The rows of the policy's tenant past its period that still hold content: claims
    not yet erased; unredacted events no claim that is not erased cites (an event a
    live memory rests on goes with that memory); unredacted recall traces."""
    cutoff = now - timedelta(days=policy.days)
    if policy.record == RetainedRecord.RECALL_TRACE:
        return RecallTrace.objects.filter(
            tenant_id=policy.tenant_id, created_at__lt=cutoff, redacted_at__isnull=True
        )
    if policy.record == RetainedRecord.EVENT:
        events = Event.objects.filter(
            tenant_id=policy.tenant_id, recorded_at__lt=cutoff, redacted_at__isnull=True
        ).exclude(
            Exists(
                ClaimSource.objects.filter(event_id=OuterRef("pk")).exclude(
                    claim__status=ClaimStatus.ERASED
                )
            )
        )
        if policy.kind:
            events = events.filter(kind=policy.kind)
        if policy.sensitivity:
            events = events.filter(sensitivity=policy.sensitivity)
        return events
    claims = Claim.objects.filter(tenant_id=policy.tenant_id, recorded_at__lt=cutoff).exclude(
        status=ClaimStatus.ERASED
    )
    if policy.kind:
        claims = claims.filter(kind=policy.kind)
    if policy.sensitivity:
        claims = claims.filter(sensitivity=policy.sensitivity)
    return claims


def retention_overview(*, tenant: Tenant, sweeps: int = 5) -> dict[str, Any]:
    """The tenant's periods with how many rows each reaches now, and the last sweeps
    with their deletions' statuses and what they counted."""
    now = timezone.now()
    policies = list(RetentionPolicy.objects.filter(tenant=tenant).order_by("record", "days", "pk"))
    for policy in policies:
        policy.due = retention_reach(policy, now=now).count()  # type: ignore[attr-defined]
    recent = list(
        AuditEvent.objects.filter(tenant=tenant, verb="retention.swept").order_by("-id")[:sweeps]
    )
    ids = {d for row in recent for d in row.data.get("deletions", [])}
    statuses = {
        str(pk): status
        for pk, status in DeletionRequest.objects.filter(
            tenant=tenant, pk__in=list(ids)
        ).values_list("pk", "status")
    }
    return {
        "policies": policies,
        "sweeps": [
            {
                "at": row.at,
                "counts": row.data.get("counts", {}),
                "deletions": [
                    {"id": d, "status": statuses.get(d, "unknown")}
                    for d in row.data.get("deletions", [])
                ],
            }
            for row in recent
        ],
    }
