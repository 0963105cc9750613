"""Retention: claims older than their tenant's period are forgotten through the deletion pipeline.

A tenant's admins set periods per claim kind and sensitivity class
(`RetentionPolicy`). A sweep (beat, or `manage.py retention_sweep`) asks for a
deletion of each claim a policy reaches, so the same workers erase it,
propagate along lineage (its source statements in the ledger, recall traces
that returned it, idempotent replies, hot memory) and verify it with probes;
each deletion has its report, and the sweep's audit row names them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from memory.models import (
    Claim,
    ClaimKind,
    ClaimStatus,
    DeletionRequest,
    RetentionPolicy,
    Sensitivity,
)
from memory.services.deletion import deletion_request_create

# Claims asked for per tenant and sweep; the next sweep takes the rest.
SWEEP_LIMIT = 500


@dataclass
class RetentionSweep:
    tenant: Tenant
    deletions: list[DeletionRequest] = field(default_factory=list)
    # Policy id → claims it reached in this sweep.
    reached: dict[int, int] = field(default_factory=dict)


def retention_policy_set(
    *, tenant: Tenant, actor: Actor, kind: str, sensitivity: str, days: Any, user: Any = None
) -> RetentionPolicy:
    """Set the period for one kind and class ('' for any); a second call changes it."""
    errors: dict[str, list[str]] = {}
    if kind and kind not in ClaimKind.values:
        errors["kind"] = [f"One of {', '.join(ClaimKind.values)}, or empty for every kind."]
    if sensitivity and sensitivity not in Sensitivity.values:
        errors["sensitivity"] = [f"One of {', '.join(Sensitivity.values)}, or empty for any."]
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 36_500:
        errors["days"] = ["A whole number of days from 1 to 36500."]
    if errors:
        raise Problem("validation_error", "The retention period is not valid.", errors=errors)
    with transaction.atomic():
        policy, created = RetentionPolicy.objects.select_for_update().get_or_create(
            tenant=tenant,
            kind=kind,
            sensitivity=sensitivity,
            defaults={"days": days, "updated_by": user},
        )
        before = None if created else policy.days
        if not created:
            policy.days = days
            policy.updated_by = user
            policy.updated_at = timezone.now()
            policy.save(update_fields=["days", "updated_by", "updated_at"])
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="retention.set",
            target_type="retention_policy",
            target_id=policy.pk,
            data={"kind": kind, "sensitivity": sensitivity, "days": days, "before": before},
        )
    return policy


def retention_policy_remove(*, tenant: Tenant, actor: Actor, policy_id: Any) -> None:
    """Keep what the policy reached for good again (no policy, no expiry)."""
    with transaction.atomic():
        policy = (
            RetentionPolicy.objects.select_for_update().filter(tenant=tenant, pk=policy_id).first()
        )
        if policy is None:
            raise not_found("retention policy")
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="retention.removed",
            target_type="retention_policy",
            target_id=policy.pk,
            data={"kind": policy.kind, "sensitivity": policy.sensitivity, "days": policy.days},
        )
        policy.delete()


def _reach(policy: RetentionPolicy, now: datetime) -> Q:
    reach = Q(recorded_at__lt=now - timedelta(days=policy.days))
    if policy.kind:
        reach &= Q(kind=policy.kind)
    if policy.sensitivity:
        reach &= Q(sensitivity=policy.sensitivity)
    return reach


def retention_sweep(
    *, tenant: Tenant, actor: Actor, now: datetime | None = None, limit: int = SWEEP_LIMIT
) -> RetentionSweep:
    """Ask for the deletion of every claim of `tenant` past a period (up to `limit`)."""
    now = now or timezone.now()
    sweep = RetentionSweep(tenant=tenant)
    with transaction.atomic():
        policies = list(RetentionPolicy.objects.filter(tenant=tenant).order_by("days", "pk"))
        if not policies:
            return sweep
        seen: set[Any] = set()
        for policy in policies:
            claims = (
                Claim.objects.filter(_reach(policy, now), tenant=tenant)
                .exclude(status=ClaimStatus.ERASED)
                .exclude(pk__in=seen)
                .select_related("subject")
                .order_by("recorded_at", "id")[: max(limit - len(seen), 0)]
            )
            reached = 0
            for claim in claims:
                seen.add(claim.pk)
                reached += 1
                deletion, _ = deletion_request_create(
                    tenant=tenant, actor=actor, subject=claim.subject, claim=claim
                )
                sweep.deletions.append(deletion)
            sweep.reached[policy.pk] = reached
        if sweep.deletions:
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="retention.swept",
                target_type="tenant",
                target_id=tenant.pk,
                data={
                    "deletions": [str(d.pk) for d in sweep.deletions],
                    "reached": {str(pk): n for pk, n in sweep.reached.items()},
                },
            )
    return sweep


def retention_sweep_all(*, actor: Actor, now: datetime | None = None) -> list[RetentionSweep]:
    """One sweep per tenant that has a retention policy."""
    tenant_ids = RetentionPolicy.objects.values_list("tenant_id", flat=True).distinct()
    return [
        retention_sweep(tenant=tenant, actor=actor, now=now)
        for tenant in Tenant.objects.filter(pk__in=tenant_ids).order_by("pk")
    ]
