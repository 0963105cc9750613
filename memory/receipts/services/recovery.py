"""Checkpoints, and the answer to "what do I do now?" after a crash or re-trigger.

The decision is a pure function of the checkpoint and the receipts it names
(docs/design.md, "State machines"): asking it any number of times changes no
checkpoint, receipt or ledger row, so an agent may ask on every start without
fear. Each answer is logged (services/recovery_log.py), append-only, for the
recovery figures; that log is all that asking leaves. A run that names itself
takes the task's recovery lease when it is sent to act, so a concurrent trigger
is told `in_progress` instead of a second `resume` (services/recovery_leases.py).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import IntegrityError, models, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from common.screen import find_secrets_in_strings
from memory.receipts.models.leases import RecoveryLease
from memory.receipts.models.receipts import (
    UNVERIFIED_RECEIPT_STATES,
    Checkpoint,
    Receipt,
    ReceiptKind,
    ReceiptState,
)
from memory.receipts.selectors.platforms import operations_compensated_on_failure
from memory.receipts.selectors.receipts import (
    checkpoint_get,
    checkpoint_stored,
    pending_compensations,
    reach,
    receipts_by_ids,
)
from memory.receipts.services.checkpoints import checkpoint_ttl
from memory.receipts.services.recovery_leases import (
    DEFAULT_LEASE_SECONDS,
    lease_fold,
    lease_held,
    lease_locked,
    lease_take,
    lease_visible,
)
from memory.receipts.services.recovery_log import recovery_answer_log
from memory.receipts.services.runs import run_named

logger = logging.getLogger(__name__)


class RecoveryDecision(models.TextChoices):
    # Another run of the task holds the recovery lease and is acting on its answer.
    IN_PROGRESS = "in_progress"
    # The task may resume, but not before the checkpoint's `resume_after`.
    WAIT = "wait"
    FRESH = "fresh"
    RESUME = "resume"
    VERIFY_ONLY = "verify_only"
    NO_OP = "no_op"
    ESCALATE = "escalate"
    # An effect failed, its operation's policy says to compensate, and the compensation
    # is planned: run it (the answer's `compensations`) instead of asking a person.
    COMPENSATE = "compensate"


class RecoveryReason(models.TextChoices):
    LEASE_HELD = "lease_held"
    NO_CHECKPOINT = "no_checkpoint"
    CHECKPOINT_EXPIRED = "checkpoint_expired"
    INPUT_CHANGED = "input_changed"
    EFFECT_IN_MANUAL_REVIEW = "effect_in_manual_review"
    EFFECT_UNVERIFIED = "effect_unverified"
    ALREADY_VERIFIED = "already_verified"
    # The stage is done and verified but the checkpoint names stages still to
    # run: a crash between two stages must not end the task as a no-op.
    NEXT_STAGE = "next_stage"
    RETRY_BUDGET_EXHAUSTED = "retry_budget_exhausted"
    INCOMPLETE_STAGE = "incomplete_stage"
    RESUME_AFTER = "resume_after"
    COMPENSATION_PLANNED = "compensation_planned"


# Every answer recovery can give, in the order the rules are tried.
RECOVERY_OUTCOMES: tuple[tuple[str, str], ...] = (
    (RecoveryDecision.IN_PROGRESS, RecoveryReason.LEASE_HELD),
    (RecoveryDecision.FRESH, RecoveryReason.NO_CHECKPOINT),
    (RecoveryDecision.FRESH, RecoveryReason.CHECKPOINT_EXPIRED),
    (RecoveryDecision.FRESH, RecoveryReason.INPUT_CHANGED),
    # Tried where an escalation would be answered (manual review, retries spent).
    (RecoveryDecision.COMPENSATE, RecoveryReason.COMPENSATION_PLANNED),
    (RecoveryDecision.ESCALATE, RecoveryReason.EFFECT_IN_MANUAL_REVIEW),
    (RecoveryDecision.VERIFY_ONLY, RecoveryReason.EFFECT_UNVERIFIED),
    (RecoveryDecision.NO_OP, RecoveryReason.ALREADY_VERIFIED),
    (RecoveryDecision.WAIT, RecoveryReason.RESUME_AFTER),
    (RecoveryDecision.RESUME, RecoveryReason.NEXT_STAGE),
    (RecoveryDecision.ESCALATE, RecoveryReason.RETRY_BUDGET_EXHAUSTED),
    (RecoveryDecision.RESUME, RecoveryReason.INCOMPLETE_STAGE),
)


# The answers that send a run to act: the run that asked with its `run_id` holds the
# task's lease while it does. `no_op` and `escalate` leave nothing to do.
LEASED_DECISIONS = frozenset(
    {
        RecoveryDecision.FRESH,
        RecoveryDecision.RESUME,
        RecoveryDecision.VERIFY_ONLY,
        RecoveryDecision.COMPENSATE,
    }
)

# The effects an escalation is about, by its reason: what failed and may be undone.
_FAILED_EFFECT_STATES: dict[str, frozenset[str]] = {
    RecoveryReason.EFFECT_IN_MANUAL_REVIEW: frozenset({ReceiptState.MANUAL_REVIEW}),
    # Retries spent: whatever the stage already changed outside is what to undo.
    RecoveryReason.RETRY_BUDGET_EXHAUSTED: frozenset(
        {ReceiptState.SUCCEEDED, ReceiptState.MANUAL_REVIEW}
    ),
}


@dataclass(frozen=True)
class RecoveryAnswer:
    decision: str
    reason: str
    checkpoint: Checkpoint | None
    effects: list[Receipt]
    # The lease the answer was given under: the asker's own, or (`in_progress`) another run's.
    lease: RecoveryLease | None = None
    # A second trigger of the run that holds the lease, given that run's answer again.
    folded: bool = False
    # The answer's row in recovery's log, for a verdict on it (`recovery_verdict_record`).
    answer_id: int | None = None
    # With `compensate`: the planned compensations to run, oldest first.
    compensations: list[Receipt] = dataclasses.field(default_factory=list)


def recovery_rule(
    *,
    checkpoint: Checkpoint | None,
    effects: Sequence[Receipt],
    input_fingerprint: str,
    now: datetime,
) -> tuple[str, str]:
    """The decision and its reason; the first rule that applies wins."""
    if checkpoint is None:
        return RecoveryDecision.FRESH, RecoveryReason.NO_CHECKPOINT
    if checkpoint.expires_at <= now:
        return RecoveryDecision.FRESH, RecoveryReason.CHECKPOINT_EXPIRED
    if checkpoint.input_fingerprint != input_fingerprint:
        return RecoveryDecision.FRESH, RecoveryReason.INPUT_CHANGED
    states = {effect.state for effect in effects}
    if ReceiptState.MANUAL_REVIEW in states:
        return RecoveryDecision.ESCALATE, RecoveryReason.EFFECT_IN_MANUAL_REVIEW
    if states & UNVERIFIED_RECEIPT_STATES:
        return RecoveryDecision.VERIFY_ONLY, RecoveryReason.EFFECT_UNVERIFIED
    waiting = checkpoint.resume_after is not None and now < checkpoint.resume_after
    if checkpoint.stage_complete and states <= {ReceiptState.SUCCEEDED}:
        if not checkpoint.allowed_next_stages:
            return RecoveryDecision.NO_OP, RecoveryReason.ALREADY_VERIFIED
        if waiting:
            return RecoveryDecision.WAIT, RecoveryReason.RESUME_AFTER
        return RecoveryDecision.RESUME, RecoveryReason.NEXT_STAGE
    if checkpoint.retry_count >= checkpoint.max_retries:
        return RecoveryDecision.ESCALATE, RecoveryReason.RETRY_BUDGET_EXHAUSTED
    if waiting:
        return RecoveryDecision.WAIT, RecoveryReason.RESUME_AFTER
    return RecoveryDecision.RESUME, RecoveryReason.INCOMPLETE_STAGE


def recovery_decide(
    *,
    tenant: Tenant,
    actor: Actor,
    task_key: str,
    input_fingerprint: str,
    run_id: str = "",
    lease_seconds: int = DEFAULT_LEASE_SECONDS,
    triggered_at: datetime | None = None,
    now: datetime | None = None,
) -> RecoveryAnswer:
    """What a restarted agent should do for `task_key`; logs the answer (services/recovery_log.py).

    Without `run_id` it only reads: the answer, or `in_progress` while another
    run holds the task's lease. With `run_id` the decision is made under the
    task's lease row: an answer that sends the run to act (`LEASED_DECISIONS`)
    gives it the lease for `lease_seconds`; a concurrent run is answered
    `in_progress`; the holding run asking again is folded (its answer again).

    `triggered_at` is when the agent's run was triggered: the decision's latency
    is counted from it (from trigger to a safe next step); without it,
    from when memdesk started deciding. A checkpoint `actor` does not reach is
    answered as no checkpoint, exactly like another tenant's.
    """
    started = time.perf_counter()
    now = now or timezone.now()
    if run_id:
        answer = _decide_under_lease(
            tenant=tenant,
            actor=actor,
            task_key=task_key,
            input_fingerprint=input_fingerprint,
            run_id=run_id,
            lease_seconds=lease_seconds,
            now=now,
        )
    else:
        held = lease_held(tenant=tenant, actor=actor, task_key=task_key, now=now)
        answer = _answer(
            tenant=tenant,
            actor=actor,
            task_key=task_key,
            input_fingerprint=input_fingerprint,
            now=now,
            held=held,
        )
    decided = time.perf_counter() - started
    logged = recovery_answer_log(
        tenant=tenant,
        actor=actor,
        task_key=task_key,
        run_id=run_id,
        decision=answer.decision,
        reason=answer.reason,
        folded=answer.folded,
        decided_seconds=decided,
        since_trigger_seconds=(now - triggered_at).total_seconds() + decided
        if triggered_at
        else None,
    )
    return dataclasses.replace(answer, answer_id=logged.pk)


def _answer(
    *,
    tenant: Tenant,
    actor: Actor,
    task_key: str,
    input_fingerprint: str,
    now: datetime,
    held: RecoveryLease | None,
) -> RecoveryAnswer:
    checkpoint = checkpoint_get(tenant=tenant, actor=actor, task_key=task_key)
    effects = receipts_by_ids(tenant=tenant, receipt_ids=checkpoint.effects) if checkpoint else []
    if held is not None:
        return RecoveryAnswer(
            decision=RecoveryDecision.IN_PROGRESS,
            reason=RecoveryReason.LEASE_HELD,
            checkpoint=checkpoint,
            effects=effects,
            lease=held,
        )
    decision, reason = recovery_rule(
        checkpoint=checkpoint, effects=effects, input_fingerprint=input_fingerprint, now=now
    )
    compensations: list[Receipt] = []
    if decision == RecoveryDecision.ESCALATE:
        compensations = _compensations_due(tenant=tenant, effects=effects, reason=reason)
        if compensations:
            decision, reason = RecoveryDecision.COMPENSATE, RecoveryReason.COMPENSATION_PLANNED
    return RecoveryAnswer(
        decision=decision,
        reason=reason,
        checkpoint=checkpoint,
        effects=effects,
        compensations=compensations,
    )


def _compensations_due(*, tenant: Tenant, effects: Sequence[Receipt], reason: str) -> list[Receipt]:
    """The planned compensations of the failed effects whose policy says to compensate.

    Effects of other operations are left as they are. If one whose policy says to
    compensate has no compensation planned, a person still has to look (`escalate`).
    """
    failed = [
        effect
        for effect in effects
        if effect.kind == ReceiptKind.EFFECT
        and effect.state in _FAILED_EFFECT_STATES.get(reason, frozenset())
    ]
    compensated = operations_compensated_on_failure(
        tenant=tenant, operations={effect.operation for effect in failed}
    )
    undo = [effect for effect in failed if effect.operation in compensated]
    if not undo:
        return []
    planned = pending_compensations(tenant=tenant, effect_ids=[effect.pk for effect in undo])
    covered = {compensation.compensates_id for compensation in planned}
    if any(effect.pk not in covered for effect in undo):
        return []
    return planned


def _decide_under_lease(
    *,
    tenant: Tenant,
    actor: Actor,
    task_key: str,
    input_fingerprint: str,
    run_id: str,
    lease_seconds: int,
    now: datetime,
) -> RecoveryAnswer:
    _refuse_secrets({"run_id": [run_id]})
    with transaction.atomic():
        lease = lease_locked(tenant=tenant, task_key=task_key)
        visible = lease_visible(lease, actor)
        if visible and lease.held_at(now) and lease.holder == run_id:
            answer = _answer(
                tenant=tenant,
                actor=actor,
                task_key=task_key,
                input_fingerprint=input_fingerprint,
                now=now,
                held=None,
            )
            return dataclasses.replace(
                answer,
                decision=lease.decision,
                reason=lease.reason,
                lease=lease_fold(lease=lease),
                folded=True,
            )
        answer = _answer(
            tenant=tenant,
            actor=actor,
            task_key=task_key,
            input_fingerprint=input_fingerprint,
            now=now,
            held=lease if visible and lease.held_at(now) else None,
        )
        if answer.decision not in LEASED_DECISIONS or lease.held_at(now):
            # Nothing to act on, or a lease of a token `actor` does not reach: that
            # run acts on a task this token cannot see or save; no lease is given.
            return answer
        taken = lease_take(
            lease=lease,
            actor=actor,
            run_id=run_id,
            decision=answer.decision,
            reason=answer.reason,
            seconds=lease_seconds,
            now=now,
        )
        return dataclasses.replace(answer, lease=taken)


def _refuse_secrets(fields: dict[str, list[str]]) -> None:
    errors: dict[str, list[str]] = {}
    for name, strings in fields.items():
        findings = find_secrets_in_strings(strings)
        if findings:
            errors[name] = [
                f"Looks like a credential ({', '.join(sorted({f.kind for f in findings}))})."
            ]
    if errors:
        raise Problem(
            "secret_detected",
            "The checkpoint contains what looks like a credential. Nothing was stored; "
            "memdesk never stores secrets.",
            errors=errors,
        )


def _checkpoint_written(
    *, tenant: Tenant, actor: Actor, task_key: str, fields: dict[str, Any]
) -> tuple[Checkpoint, bool]:
    """Replace the checkpoint of `task_key` with `fields`, or make it, owned by `actor`'s
    token; `not_found` if it belongs to a token `actor` does not reach."""
    # Once a deletion replaced the key by its digest, the task's checkpoint is
    # still the one row saved under it (and keeps the digest).
    stored = checkpoint_stored(tenant=tenant, task_key=task_key, lock=True)
    if stored is None:
        try:
            with transaction.atomic():
                made = Checkpoint.objects.create(
                    tenant=tenant,
                    task_key=task_key,
                    token_id=actor.token_id,
                    created_at=fields["updated_at"],
                    **fields,
                )
            return made, True
        except IntegrityError:
            # Another save of the same key won the race; judge it as already there.
            stored = checkpoint_stored(tenant=tenant, task_key=task_key, lock=True)
            if stored is None:
                raise
    # A replacement keeps the first saver as owner, also when an operator saves it.
    if not Checkpoint.objects.filter(reach(actor), pk=stored.pk).exists():
        raise not_found("checkpoint")
    for name, value in fields.items():
        setattr(stored, name, value)
    stored.save(update_fields=list(fields))
    return stored, False


def checkpoint_save(
    *,
    tenant: Tenant,
    actor: Actor,
    task_key: str,
    input_fingerprint: str,
    stage: str,
    run_id: str = "",
    stage_complete: bool = False,
    retry_count: int = 0,
    max_retries: int = 3,
    allowed_next_stages: Iterable[str] = (),
    effects: Iterable[UUID | str] = (),
    expires_at: datetime | None = None,
    resume_after: datetime | None = None,
    run: UUID | str | None = None,
) -> tuple[Checkpoint, bool]:
    """Create or replace the checkpoint of `task_key`. Effects must be receipts `actor` reaches.

    Without `expires_at` the checkpoint lives the tenant's default lifetime from now
    (`checkpoint_ttl`); `resume_after`, when given, must come before the expiry.

    The checkpoint belongs to the token that first saved it. Another token that
    does not hold `receipts:operate` gets 404 `not_found`, as for a checkpoint of
    another tenant: it can neither replace it nor learn that it exists.
    """
    allowed_next_stages = list(allowed_next_stages)
    _refuse_secrets(
        {
            "task_key": [task_key],
            "input_fingerprint": [input_fingerprint],
            "stage": [stage],
            "run_id": [run_id],
            "allowed_next_stages": allowed_next_stages,
        }
    )
    registered, run_id = run_named(tenant=tenant, actor=actor, run=run, run_id=run_id)
    effect_ids = list(dict.fromkeys(UUID(str(effect)) for effect in effects))
    known = set(
        Receipt.objects.filter(reach(actor), tenant=tenant, pk__in=effect_ids).values_list(
            "pk", flat=True
        )
    )
    missing = [str(effect) for effect in effect_ids if effect not in known]
    if missing:
        raise Problem(
            "unknown_effect",
            "Every effect must be a receipt of yours; write the receipt before the call.",
            errors={"effects": [f"No receipt {effect}." for effect in missing]},
        )
    now = timezone.now()
    if expires_at is None:
        expires_at = now + timedelta(seconds=checkpoint_ttl(tenant=tenant))
    if resume_after is not None and resume_after >= expires_at:
        raise Problem(
            "validation_error",
            "A checkpoint cannot ask to resume after it expires.",
            errors={"resume_after": ["Must be before expires_at."]},
        )
    fields = {
        "run_id": run_id,
        "registered_run": registered,
        "input_fingerprint": input_fingerprint,
        "stage": stage,
        "stage_complete": stage_complete,
        "retry_count": retry_count,
        "max_retries": max_retries,
        "allowed_next_stages": list(allowed_next_stages),
        "effects": effect_ids,
        "expires_at": expires_at,
        "resume_after": resume_after,
        "updated_at": now,
    }
    with transaction.atomic():
        checkpoint, created = _checkpoint_written(
            tenant=tenant, actor=actor, task_key=task_key, fields=fields
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="checkpoint.saved",
            target_type="checkpoint",
            target_id=checkpoint.pk,
            data={
                "task_key": task_key,
                "run_id": run_id,
                "stage": stage,
                "stage_complete": stage_complete,
                "retry_count": retry_count,
            },
        )
    return checkpoint, created
