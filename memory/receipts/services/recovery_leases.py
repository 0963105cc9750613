"""Recovery leases: one run at a time acts on a task's recovery answer.

Two triggers of one task asking at once would both be told `resume` and both act.
The lease is a row per task key in PostgreSQL, locked while the decision is made;
the run that is told to act holds it (holder, expiry), a concurrent run is told
`in_progress`, and a second trigger of the holding run is folded into the first
(docs/reliability.md, "One recovery at a time").
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.fingerprints import identifier_forms
from common.problems import not_found
from memory.receipts.models.leases import RecoveryLease
from memory.receipts.selectors.receipts import reach

DEFAULT_LEASE_SECONDS = 900
MAX_LEASE_SECONDS = 86_400


def lease_held(
    *, tenant: Tenant, actor: Actor, task_key: str, now: datetime
) -> RecoveryLease | None:
    """The lease on `task_key` held now by a run `actor` reaches; reads only.

    A lease held by a token `actor` does not reach is answered as none, like its
    checkpoint: another identity learns nothing of the task.
    """
    lease = RecoveryLease.objects.filter(
        reach(actor), tenant=tenant, task_key__in=identifier_forms(task_key)
    ).first()
    return lease if lease is not None and lease.held_at(now) else None


def lease_locked(*, tenant: Tenant, task_key: str) -> RecoveryLease:
    """The lease row of `task_key`, made if missing, locked until the transaction ends.

    Call inside `transaction.atomic()`. Two deciders racing on a new key both try
    to insert; the loser waits on the unique index, then locks the winner's row
    once the winner has committed its decision.
    """
    forms = identifier_forms(task_key)
    locked = RecoveryLease.objects.select_for_update()
    lease = locked.filter(tenant=tenant, task_key__in=forms).first()
    if lease is not None:
        return lease
    try:
        with transaction.atomic():
            RecoveryLease.objects.create(tenant=tenant, task_key=task_key)
    except IntegrityError:
        pass
    return locked.get(tenant=tenant, task_key__in=forms)


def lease_visible(lease: RecoveryLease, actor: Actor) -> bool:
    return RecoveryLease.objects.filter(reach(actor), pk=lease.pk).exists()


def lease_fold(*, lease: RecoveryLease) -> RecoveryLease:
    """Count one more trigger of the holding run; it gets the holder's answer again."""
    lease.folded_triggers += 1
    lease.save(update_fields=["folded_triggers"])
    return lease


def lease_take(
    *,
    lease: RecoveryLease,
    actor: Actor,
    run_id: str,
    decision: str,
    reason: str,
    seconds: int,
    now: datetime,
) -> RecoveryLease:
    """Give the locked `lease` to `run_id` for `seconds`, with the answer it acts on."""
    lease.token_id = actor.token_id
    lease.holder = run_id
    lease.decision = decision
    lease.reason = reason
    lease.acquired_at = now
    lease.expires_at = now + timedelta(seconds=seconds)
    lease.released_at = None
    lease.folded_triggers = 0
    lease.save()
    audit_record(
        tenant=lease.tenant,
        actor=actor,
        verb="recovery.lease_taken",
        target_type="recovery_lease",
        target_id=lease.pk,
        data={
            "task_key": lease.task_key,
            "run_id": run_id,
            "decision": decision,
            "reason": reason,
            "expires_at": lease.expires_at.isoformat(),
        },
    )
    return lease


def recovery_lease_release(
    *, tenant: Tenant, actor: Actor, task_key: str, run_id: str
) -> RecoveryLease:
    """End `run_id`'s lease on `task_key` before it expires, so the next trigger may decide.

    Only the holding run releases it; a lease held by another run, expired,
    already released or unknown is `404 not_found` and changes nothing.
    """
    now = timezone.now()
    with transaction.atomic():
        lease = (
            RecoveryLease.objects.select_for_update()
            .filter(reach(actor), tenant=tenant, task_key__in=identifier_forms(task_key))
            .first()
        )
        if lease is None or not lease.held_at(now) or lease.holder != run_id:
            raise not_found("recovery lease")
        lease.released_at = now
        lease.save(update_fields=["released_at"])
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="recovery.lease_released",
            target_type="recovery_lease",
            target_id=lease.pk,
            data={"task_key": lease.task_key, "run_id": run_id},
        )
    return lease
