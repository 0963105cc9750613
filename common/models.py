from __future__ import annotations

from django.db import models
from django.db.models.functions import Now


class IdempotencyState(models.TextChoices):
    IN_PROGRESS = "in_progress"
    COMPLETE = "complete"


class IdempotencyRecord(models.Model):
    """A creating POST seen under an `Idempotency-Key`, and the answer it got.

    `tenant_id` is a plain column: common must not depend on accounts, and the
    column still lets the table be partitioned by tenant like every other.
    """

    tenant_id = models.BigIntegerField()
    principal = models.CharField(max_length=64, help_text="agent:<token id> or user:<user id>")
    key = models.CharField(max_length=255)
    request_fingerprint = models.CharField(max_length=80)
    state = models.CharField(max_length=16, choices=IdempotencyState.choices)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_body = models.JSONField(null=True)
    response_headers = models.JSONField(default=dict)
    started_at = models.DateTimeField(db_default=Now())
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant_id", "principal", "key"], name="idempotency_key_unique"
            )
        ]
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.principal} {self.key} ({self.state})"
