"""The recovery lease: which run of a task is acting on its recovery answer, and until when."""

from __future__ import annotations

from datetime import datetime

from django.db import models

from accounts.models import Tenant


class RecoveryLease(models.Model):
    """One row per task key, locked while a recovery decision is made (docs/reliability.md,
    "One recovery at a time").

    A run that names itself when it asks (`run_id`) and is told to act (`fresh`,
    `resume`, `verify_only`) holds the lease until `expires_at` or until it
    releases it; every other run asking meanwhile is answered `in_progress`. The
    row stays after release or expiry as the lock of the next decision.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    task_key = models.CharField(max_length=255)
    # The token of the run that holds (or last held) the lease, like `Checkpoint.token_id`.
    token_id = models.BigIntegerField(null=True, blank=True)
    holder = models.CharField(max_length=200, blank=True)
    decision = models.CharField(max_length=20, blank=True)
    reason = models.CharField(max_length=40, blank=True)
    acquired_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(null=True, blank=True)
    # Further triggers of the holding run, answered with the holder's decision.
    folded_triggers = models.PositiveIntegerField(default=0)

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "task_key"], name="recovery_lease_unique"),
            models.CheckConstraint(
                condition=models.Q(holder="", expires_at__isnull=True)
                | (
                    ~models.Q(holder="")
                    & models.Q(acquired_at__isnull=False, expires_at__gt=models.F("acquired_at"))
                ),
                name="recovery_lease_held_has_expiry",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_key} held by {self.holder or 'nobody'}"

    def held_at(self, now: datetime) -> bool:
        return bool(
            self.holder
            and self.released_at is None
            and self.expires_at is not None
            and self.expires_at > now
        )
