from __future__ import annotations

import uuid

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant


class Subject(models.Model):
    """Who or what memories are about, named `kind:ref` (user:alice, project:crm)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    ref = models.CharField(max_length=200)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "kind", "ref"], name="subject_unique_ref")
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.ref}"


class Sensitivity(models.TextChoices):
    """How careful memdesk is with a piece of content (see memory/sensitivity.py).

    `normal` is the class of nothing special. Every class after `personal` is
    kept only with the subject's consent for it; `sensitive` is the class an
    agent names when it knows the content is sensitive but not how.
    """

    NORMAL = "normal", "None"
    PERSONAL = "personal", "Personal"
    SENSITIVE = "sensitive", "Sensitive (other)"
    HEALTH = "health", "Health"
    FINANCE = "finance", "Finance"
    CREDENTIALS_ADJACENT = "credentials_adjacent", "Credentials-adjacent"
    LOCATION = "location", "Precise location"
    MINORS = "minors", "Minors"


@pgtrigger.register(
    pgtrigger.Protect(name="event_no_delete", operation=pgtrigger.Delete),
    # The ledger is append-only; the one permitted change is erasure, which
    # redacts the content once and keeps the row as a tombstone.
    pgtrigger.Protect(
        name="event_only_redaction",
        operation=pgtrigger.Update,
        condition=pgtrigger.Q(new__redacted_at__isnull=True)
        | pgtrigger.Q(old__redacted_at__isnull=False),
    ),
)
class Event(models.Model):
    """One observation or action in the ledger."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="events")
    run_id = models.CharField(max_length=200, blank=True)
    agent = models.CharField(max_length=100, blank=True)
    kind = models.CharField(max_length=64)
    text = models.TextField(blank=True)
    body = models.JSONField(default=dict, blank=True)
    source_uri = models.CharField(max_length=1000, blank=True)
    observed_at = models.DateTimeField()
    recorded_at = models.DateTimeField(db_default=Now())
    digest = models.CharField(max_length=80)
    sensitivity = models.CharField(
        max_length=32, choices=Sensitivity.choices, default=Sensitivity.NORMAL
    )
    # Claims that were injected into the context that produced this event; a
    # candidate sourced only from such events is the agent quoting itself.
    echo_of = ArrayField(models.UUIDField(), default=list, blank=True)
    token_id = models.BigIntegerField(null=True, blank=True)
    redacted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "subject", "-recorded_at"]),
            models.Index(fields=["tenant", "run_id"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"
