"""Checkpoint lifetimes: the tenant's default expiry, and the sweep of expired checkpoints.

Every checkpoint expires (docs/receipts.md, "Checkpoints expire"): a task that
stopped saving must not be resumed from a stale stage weeks later. Recovery
already answers `fresh` / `checkpoint_expired` for one past its expiry; the
sweep deletes it so nothing else reads it either.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from memory.receipts.models.checkpoint_defaults import CheckpointDefaults
from memory.receipts.models.receipts import Checkpoint

MAX_CHECKPOINT_TTL_SECONDS = 365 * 86_400


def checkpoint_ttl(*, tenant: Tenant) -> int:
    """Seconds a checkpoint of `tenant` saved without `expires_at` lives."""
    own = (
        CheckpointDefaults.objects.filter(tenant=tenant)
        .values_list("ttl_seconds", flat=True)
        .first()
    )
    return own or settings.CHECKPOINT_DEFAULT_TTL_SECONDS


def checkpoint_ttl_set(*, tenant: Tenant, actor: Actor, ttl_seconds: int) -> CheckpointDefaults:
    """Set `tenant`'s default checkpoint lifetime; checkpoints already saved keep theirs."""
    if not 1 <= ttl_seconds <= MAX_CHECKPOINT_TTL_SECONDS:
        raise Problem(
            "validation_error",
            "A checkpoint lifetime is between one second and a year.",
            errors={"ttl_seconds": [f"Between 1 and {MAX_CHECKPOINT_TTL_SECONDS}."]},
        )
    with transaction.atomic():
        previous = checkpoint_ttl(tenant=tenant)
        defaults, _ = CheckpointDefaults.objects.update_or_create(
            tenant=tenant, defaults={"ttl_seconds": ttl_seconds, "updated_at": timezone.now()}
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="checkpoint.ttl_set",
            target_type="tenant",
            target_id=tenant.pk,
            data={"ttl_seconds": ttl_seconds, "previous": previous},
        )
    return defaults


def checkpoints_sweep_expired(*, actor: Actor, now: datetime | None = None) -> int:
    """Delete every checkpoint past its expiry; one audit row per tenant that lost some.

    Safe to run twice: a second run finds nothing left to delete. A save racing
    the sweep either renews the row first (and it is kept) or comes after the
    delete and makes a new one.
    """
    now = now or timezone.now()
    with transaction.atomic():
        expired = Checkpoint.objects.select_for_update(skip_locked=True).filter(expires_at__lte=now)
        ids = list(expired.values_list("pk", flat=True))
        if not ids:
            return 0
        doomed = Checkpoint.objects.filter(pk__in=ids)
        per_tenant = dict(doomed.values_list("tenant").annotate(n=Count("id")))
        tenants = Tenant.objects.in_bulk(list(per_tenant))
        doomed.delete()
        for tenant_id, count in per_tenant.items():
            audit_record(
                tenant=tenants[tenant_id],
                actor=actor,
                verb="checkpoint.expired_swept",
                target_type="tenant",
                target_id=tenant_id,
                data={"checkpoints": count, "expired_by": now.isoformat()},
            )
    return len(ids)
