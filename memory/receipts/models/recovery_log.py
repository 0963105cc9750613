"""What recovery answered, and whether that was the right answer.

Recovery changes no checkpoint, receipt, claim or ledger row (docs/design.md,
principle 9); what it leaves behind is this log, append-only like the audit:
one row per answer, with the time from the run's trigger to the answer, so the
recovery figures of docs/reliability.md (answers by decision, p50/p95 latency,
correctness) are computed in PostgreSQL rather than kept in a cache that a
restart empties.

A verdict says what the answer should have been: an agent replaying its history
(the reference agent knows the right answer of every fault it injects) or a person
confirming or overturning an answer in the console. The latest verdict on an
answer counts.
"""

from __future__ import annotations

import pgtrigger
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant


@pgtrigger.register(
    pgtrigger.Protect(
        name="recovery_answer_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class RecoveryAnswerRecord(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    task_key = models.CharField(max_length=255)
    run_id = models.CharField(max_length=200, blank=True)
    # The asking token, like `Checkpoint.token_id`.
    token_id = models.BigIntegerField(null=True, blank=True)
    decision = models.CharField(max_length=20)
    reason = models.CharField(max_length=40)
    # The holding run asked again and was given its answer again.
    folded = models.BooleanField(default=False)
    # Seconds from the run's trigger (or, without one, from the request) to the answer.
    latency_seconds = models.FloatField()
    from_trigger = models.BooleanField(default=False)
    answered_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        indexes = [
            models.Index(fields=["tenant", "-answered_at"], name="recovery_answer_recent"),
            models.Index(fields=["tenant", "task_key"], name="recovery_answer_by_task"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(latency_seconds__gte=0), name="recovery_answer_latency_sign"
            )
        ]

    def __str__(self) -> str:
        return f"{self.task_key}: {self.decision}/{self.reason}"


class VerdictSource(models.TextChoices):
    # An agent replaying a run whose right answer it knows.
    REPLAY = "replay", "Replay"
    # A person who looked at the run.
    PERSON = "person", "Person"


@pgtrigger.register(
    pgtrigger.Protect(
        name="recovery_verdict_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class RecoveryVerdict(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    answer = models.ForeignKey(
        RecoveryAnswerRecord, on_delete=models.PROTECT, related_name="verdicts"
    )
    # What recovery should have answered; equal to the answer's decision confirms it.
    expected = models.CharField(max_length=20)
    source = models.CharField(max_length=8, choices=VerdictSource.choices)
    note = models.TextField(blank=True)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        indexes = [models.Index(fields=["answer", "-created_at"], name="recovery_verdict_latest")]

    def __str__(self) -> str:
        return f"{self.answer_id}: expected {self.expected} ({self.source})"
