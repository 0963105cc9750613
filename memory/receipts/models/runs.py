from __future__ import annotations

import uuid

from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant


class Run(models.Model):
    """A snapshot of what one run of an agent started from (docs/protocol.md, "Runs").

    Written once, when the run starts: the digest of its inputs (memdesk never
    needs the inputs themselves), an optional summary the agent has redacted,
    the policy version and the versions of its sources. Receipts and checkpoints
    that name it (`run`) are its effects and its progress, so a later run can
    tell whether it is the same one.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # The agent's own name for the run, the `run_id` its events, receipts and
    # checkpoints carry; one snapshot per name in a tenant.
    run_id = models.CharField(max_length=200)
    # The agent token that registered it: like receipts, only it (or a token
    # holding `receipts:operate`) sees it or names it.
    token_id = models.BigIntegerField(null=True, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    input_digest = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    policy_version = models.CharField(max_length=100, blank=True)
    source_versions = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "run_id"], name="run_unique_name"),
            models.CheckConstraint(condition=~models.Q(run_id=""), name="run_named"),
        ]

    def __str__(self) -> str:
        return self.run_id
