from __future__ import annotations

import uuid
from datetime import UTC

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant
from common.append_only import Rewrite, only_rewrites
from common.transitions import StateMachine
from memory.receipts.models.platforms import Platform
from memory.receipts.models.runs import Run


class ReceiptState(models.TextChoices):
    PLANNED = "planned"
    # The operation's policy wants a person to approve the intent before the call.
    AWAITING_APPROVAL = "awaiting_approval"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"
    REJECTED = "rejected"
    OUTCOME_UNKNOWN = "outcome_unknown"
    RECONCILING = "reconciling"
    SAFE_TO_RETRY = "safe_to_retry"
    MANUAL_REVIEW = "manual_review"


class ReceiptKind(models.TextChoices):
    """An effect the agent makes, or the compensation that undoes one (`compensates`)."""

    EFFECT = "effect"
    COMPENSATION = "compensation"


class TransitionRole(models.TextChoices):
    """Who may move a receipt: the agent making the call, memdesk's workers, or an editor."""

    AGENT = "agent"
    WORKER = "worker"
    EDITOR = "editor"


_S = ReceiptState
_R = TransitionRole

# The receipt state machine (docs/design.md), and the only place it is
# written down: from-state → {to-state: roles allowed to make that move}.
# Services, the API's `allowed` lists, metrics and the tests all read this.
RECEIPT_TRANSITIONS: dict[str, dict[str, frozenset[str]]] = {
    _S.PLANNED: {
        _S.SUBMITTED: frozenset({_R.AGENT}),
        # Planned under a policy that says `approval_required`: memdesk holds it for a
        # person (docs/receipts.md), so the agent's own moves stay as they were.
        _S.AWAITING_APPROVAL: frozenset({_R.WORKER}),
    },
    # A person other than the token's owner approves the intent (back to `planned`,
    # so the agent may submit) or turns it down.
    _S.AWAITING_APPROVAL: {
        _S.PLANNED: frozenset({_R.EDITOR}),
        _S.REJECTED: frozenset({_R.EDITOR}),
    },
    _S.SUBMITTED: {
        _S.SUCCEEDED: frozenset({_R.AGENT}),
        _S.REJECTED: frozenset({_R.AGENT}),
        # The agent reports a transport failure, or the submit-lease sweep
        # notices that it never reported back at all.
        _S.OUTCOME_UNKNOWN: frozenset({_R.AGENT, _R.WORKER}),
    },
    _S.OUTCOME_UNKNOWN: {_S.RECONCILING: frozenset({_R.WORKER})},
    _S.RECONCILING: {
        _S.SUCCEEDED: frozenset({_R.WORKER}),
        _S.SAFE_TO_RETRY: frozenset({_R.WORKER}),
        _S.MANUAL_REVIEW: frozenset({_R.WORKER}),
    },
    _S.MANUAL_REVIEW: {
        _S.SUCCEEDED: frozenset({_R.EDITOR}),
        _S.SAFE_TO_RETRY: frozenset({_R.EDITOR}),
        _S.REJECTED: frozenset({_R.EDITOR}),
    },
}

# Where nothing moves any more: the outside world's answer is settled.
TERMINAL_RECEIPT_STATES = frozenset(_S.values) - frozenset(RECEIPT_TRANSITIONS)
# An effect in one of these may or may not have happened; only a read can tell.
UNVERIFIED_RECEIPT_STATES = frozenset({_S.SUBMITTED, _S.OUTCOME_UNKNOWN, _S.RECONCILING})


# Receipts keep their own append-only record of moves (`ReceiptTransition`, written by
# `receipt_move`), so the machine writes no audit rows of its own.
RECEIPT_MACHINE = StateMachine(
    label="receipt",
    moves=RECEIPT_TRANSITIONS,
    column="state",
    gated_role=_R.EDITOR,
    states=tuple(_S.values),
)


def allowed_receipt_targets(state: str, role: str | None) -> list[str]:
    """The states `role` may move a receipt in `state` to, in state-machine order; a
    caller with no role (`transition_role` found none) may make no move."""
    return RECEIPT_MACHINE.targets(state, role) if role else []


# Generated from the table, so no UPDATE (raw SQL included) can make a move no role may
# make. A settlement by hand (out of `manual_review`) passes only while `receipt_move`
# makes it for an editor (`common.transitions.role_gated`); which of the agent and the
# worker makes the other moves is checked by `receipt_move`.
@pgtrigger.register(RECEIPT_MACHINE.trigger("receipt_state_transition"))
class Receipt(models.Model):
    """An external side effect, written before the call and settled by evidence."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    operation = models.CharField(max_length=200)
    target = models.CharField(max_length=1000)
    intent = models.JSONField(default=dict)
    intent_fingerprint = models.CharField(max_length=80)
    idempotency_key = models.CharField(max_length=255)
    state = models.CharField(
        max_length=20, choices=ReceiptState.choices, default=ReceiptState.PLANNED
    )
    external_id = models.CharField(max_length=255, blank=True)
    error_code = models.CharField(max_length=100, blank=True)
    reconciler = models.JSONField(default=dict)
    # The registered platform an http lookup reads from; the reconciler
    # re-checks the lookup against it (and its address policy) on every read.
    platform = models.ForeignKey(
        Platform, null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    run_id = models.CharField(max_length=200, blank=True)
    # The registered run (`POST /runs`) the effect belongs to, when the agent named one.
    registered_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    # The version of the rules the effect was planned under; part of a derived key.
    policy_version = models.CharField(max_length=100, blank=True, db_default="")
    kind = models.CharField(
        max_length=16,
        choices=ReceiptKind.choices,
        default=ReceiptKind.EFFECT,
        db_default=ReceiptKind.EFFECT,
    )
    # The effect receipt a compensation undoes; planned before it runs, settled like any.
    compensates = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.RESTRICT, related_name="compensations"
    )
    agent = models.CharField(max_length=100, blank=True)
    # The agent token that planned it: its owner (see selectors/receipts.py). Null
    # when a person or memdesk planned it; then only operators and editors see it.
    token_id = models.BigIntegerField(null=True, blank=True)
    # When the agent said it was about to call out; an outside system's key
    # retention window is counted from here.
    submitted_at = models.DateTimeField(null=True, blank=True)
    # While `submitted`, the agent promises to report back before this; a
    # sweep turns a receipt whose promise lapsed into `outcome_unknown`.
    submit_lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Reconciliation work claim: a worker holds it until the lease ends;
    # `reconcile_attempts` fences writes from a worker whose lease lapsed.
    reconcile_attempts = models.PositiveIntegerField(default=0)
    reconcile_lease_expires_at = models.DateTimeField(null=True, blank=True)
    next_reconcile_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "idempotency_key"], name="receipt_idempotency_key_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=ReceiptState.values), name="receipt_state_valid"
            ),
            # A compensation always names the effect it undoes, and only it does.
            models.CheckConstraint(
                condition=models.Q(kind=ReceiptKind.EFFECT, compensates__isnull=True)
                | models.Q(kind=ReceiptKind.COMPENSATION, compensates__isnull=False),
                name="receipt_compensation_names_effect",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "state", "-created_at"]),
            models.Index(
                fields=["next_reconcile_at"],
                condition=models.Q(state__in=["outcome_unknown", "reconciling"]),
                name="receipt_reconcile_due",
            ),
            models.Index(
                fields=["submit_lease_expires_at"],
                condition=models.Q(state="submitted"),
                name="receipt_submit_lease",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.idempotency_key} ({self.state})"

    def version(self) -> str:
        """State and last change, so a review decision can tell the receipt moved since."""
        changed = self.updated_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        return f"{self.state}:{changed}"


# What a deletion may take out of a receipt transition (`memory.privacy.held_content` scrubs these).
RECEIPT_TRANSITION_SCRUB = Rewrite(stamp="scrubbed_at", clears=("reason", "evidence"))


@pgtrigger.register(
    pgtrigger.Protect(name="receipt_transition_no_delete", operation=pgtrigger.Delete),
    # Append-only; the one permitted change is a deletion scrubbing the words of
    # erased content out of `reason` and `evidence`, once, stamping `scrubbed_at`.
    only_rewrites(name="receipt_transition_only_scrub", rewrites=[RECEIPT_TRANSITION_SCRUB]),
)
class ReceiptTransition(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="transitions")
    from_state = models.CharField(max_length=20, choices=ReceiptState.choices, blank=True)
    to_state = models.CharField(max_length=20, choices=ReceiptState.choices)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(db_default=Now())
    scrubbed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "memory"
        indexes = [
            models.Index(fields=["receipt", "at"]),
            # Reconciliation outcomes are counted on every metrics scrape.
            models.Index(
                fields=["to_state"],
                condition=models.Q(from_state="reconciling"),
                name="receipt_transition_reconciled",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.receipt_id}: {self.from_state} → {self.to_state}"


class ReadOutcome(models.TextChoices):
    """What one reconciliation read of the outside system showed."""

    FOUND = "found"
    ABSENT = "absent"
    UNDETERMINED = "undetermined"
    NEEDS_PERSON = "needs_person"


@pgtrigger.register(
    pgtrigger.Protect(
        name="reconciliation_read_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class ReconciliationRead(models.Model):
    """One read a reconciler made for a receipt, kept as evidence whatever it showed.

    Failed reads change no state, so they are not receipt transitions; they are
    recorded here so the receipt's timeline shows every look at the outside world.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="reads")
    attempt = models.PositiveIntegerField()
    adapter = models.CharField(max_length=32)
    outcome = models.CharField(max_length=16, choices=ReadOutcome.choices)
    error_code = models.CharField(max_length=100, blank=True)
    external_id = models.CharField(max_length=255, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    worker = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        indexes = [models.Index(fields=["receipt", "at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(outcome__in=ReadOutcome.values),
                name="reconciliation_read_outcome_valid",
            )
        ]

    def __str__(self) -> str:
        return f"{self.receipt_id} read #{self.attempt}: {self.outcome}"


class Checkpoint(models.Model):
    """Where a scheduled task stood when it last saved; read by the recovery decision."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    task_key = models.CharField(max_length=255)
    # The agent token that first saved it, like `Receipt.token_id`: only that
    # token (or one holding `receipts:operate`) sees, replaces or recovers it.
    token_id = models.BigIntegerField(null=True, blank=True)
    run_id = models.CharField(max_length=200, blank=True)
    registered_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.RESTRICT, related_name="+"
    )
    input_fingerprint = models.CharField(max_length=200)
    stage = models.CharField(max_length=100)
    stage_complete = models.BooleanField(default=False)
    retry_count = models.PositiveIntegerField(default=0)
    max_retries = models.PositiveIntegerField(default=3)
    allowed_next_stages = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    effects = ArrayField(models.UUIDField(), default=list, blank=True)
    # Every checkpoint expires (the tenant's default when the agent names none);
    # recovery ignores an expired one and a periodic sweep deletes it.
    expires_at = models.DateTimeField()
    # The earliest time the task may resume (a back-off); recovery answers `wait` before.
    resume_after = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "task_key"], name="checkpoint_unique_task"),
            models.CheckConstraint(
                condition=models.Q(resume_after__isnull=True)
                | models.Q(resume_after__lt=models.F("expires_at")),
                name="checkpoint_resume_before_expiry",
            ),
        ]
        indexes = [models.Index(fields=["expires_at"], name="checkpoint_expiry")]

    def __str__(self) -> str:
        return f"{self.task_key} @ {self.stage}"
