"""Recall traces not yet written: the durable half of a recall's record.

A recall inserts its trace here, in its own transaction, as one small row that
touches nothing else; a worker writes the trace (and bumps the chosen claims' use
counts) from it and deletes the row. A lost message only delays that: beat's sweep
drains rows older than a few seconds, and a deletion drains its tenant's rows
before it plans, so a pending trace is always found and redacted like a written one.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant


class PendingTrace(models.Model):
    # The trace's own id: the row it becomes has the same primary key.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # The trace as `memory.claims.services.recall._trace` builds it.
    trace = models.JSONField()
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        indexes = [models.Index(fields=["created_at"], name="pending_trace_age")]

    def __str__(self) -> str:
        return f"pending trace {self.id}"
