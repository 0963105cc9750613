"""A tenant's default checkpoint lifetime, for saves that name no expiry."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant


class CheckpointDefaults(models.Model):
    """How long a tenant's checkpoints live when the agent gives no `expires_at`.

    Without a row, the installation's `CHECKPOINT_DEFAULT_TTL_SECONDS` applies
    (docs/receipts.md, "Checkpoints expire").
    """

    tenant = models.OneToOneField(
        Tenant, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    ttl_seconds = models.PositiveIntegerField()
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ttl_seconds__gte=1), name="checkpoint_ttl_positive"
            )
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id}: {self.ttl_seconds} s"
