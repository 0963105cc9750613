from __future__ import annotations

import uuid

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant


class ReceiptState(models.TextChoices):
    PLANNED = "planned"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"
    REJECTED = "rejected"
    OUTCOME_UNKNOWN = "outcome_unknown"
    RECONCILING = "reconciling"
    SAFE_TO_RETRY = "safe_to_retry"
    MANUAL_REVIEW = "manual_review"


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
        max_length=16, choices=ReceiptState.choices, default=ReceiptState.PLANNED
    )
    external_id = models.CharField(max_length=255, blank=True)
    error_code = models.CharField(max_length=100, blank=True)
    reconciler = models.JSONField(default=dict)
    run_id = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
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
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "idempotency_key"], name="receipt_idempotency_key_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=ReceiptState.values), name="receipt_state_valid"
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


@pgtrigger.register(
    pgtrigger.Protect(
        name="receipt_transition_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class ReceiptTransition(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    receipt = models.ForeignKey(Receipt, on_delete=models.CASCADE, related_name="transitions")
    from_state = models.CharField(max_length=16, choices=ReceiptState.choices, blank=True)
    to_state = models.CharField(max_length=16, choices=ReceiptState.choices)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        indexes = [models.Index(fields=["receipt", "at"])]

    def __str__(self) -> str:
        return f"{self.receipt_id}: {self.from_state} → {self.to_state}"


class Checkpoint(models.Model):
    """Where a scheduled task stood when it last saved; read by the recovery decision."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    task_key = models.CharField(max_length=255)
    run_id = models.CharField(max_length=200, blank=True)
    input_fingerprint = models.CharField(max_length=200)
    stage = models.CharField(max_length=100)
    stage_complete = models.BooleanField(default=False)
    retry_count = models.PositiveIntegerField(default=0)
    max_retries = models.PositiveIntegerField(default=3)
    allowed_next_stages = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    effects = ArrayField(models.UUIDField(), default=list, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "task_key"], name="checkpoint_unique_task")
        ]

    def __str__(self) -> str:
        return f"{self.task_key} @ {self.stage}"
