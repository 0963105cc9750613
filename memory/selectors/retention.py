"""What the retention page and the dashboard show: periods, what they reach, last sweeps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from accounts.models import AuditEvent, Tenant
from memory.models import Claim, ClaimStatus, DeletionRequest, RetentionPolicy


def retention_overview(*, tenant: Tenant, sweeps: int = 5) -> dict[str, Any]:
    """The tenant's periods with how many claims each reaches now, and the last sweeps
    with their deletions' statuses."""
    now = timezone.now()
    policies = list(RetentionPolicy.objects.filter(tenant=tenant).order_by("days", "pk"))
    for policy in policies:
        reach = Q(recorded_at__lt=now - timedelta(days=policy.days))
        if policy.kind:
            reach &= Q(kind=policy.kind)
        if policy.sensitivity:
            reach &= Q(sensitivity=policy.sensitivity)
        policy.due = (  # type: ignore[attr-defined]
            Claim.objects.filter(reach, tenant=tenant).exclude(status=ClaimStatus.ERASED).count()
        )
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
                "deletions": [
                    {"id": d, "status": statuses.get(d, "unknown")}
                    for d in row.data.get("deletions", [])
                ],
            }
            for row in recent
        ],
    }
