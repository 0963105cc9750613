"""What a subject agreed to be remembered, and how long a tenant keeps memories."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from memory.claims.models.ledger import Sensitivity, Subject

# The classes a subject may consent to: everything the sensitivity rules keep
# only with consent (memory/claims/sensitivity.py orders them).
CONSENT_CHOICES = [
    (value, label)
    for value, label in Sensitivity.choices
    if value not in (Sensitivity.NORMAL, Sensitivity.PERSONAL)
]


class Consent(models.Model):
    """Whether a subject lets memdesk keep memories of one sensitive class.

    One row per subject and class, changed in place by the consent service;
    every grant and withdrawal writes an audit row (and a withdrawal its
    deletions) in the same transaction. No row means no consent.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="consents")
    sensitivity = models.CharField(max_length=32, choices=CONSENT_CHOICES)
    granted = models.BooleanField(default=False)
    changed_at = models.DateTimeField(db_default=Now())
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "subject", "sensitivity"], name="consent_one_per_class"
            ),
            models.CheckConstraint(
                condition=models.Q(sensitivity__in=[value for value, _ in CONSENT_CHOICES]),
                name="consent_sensitivity_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id}:{self.sensitivity}={'yes' if self.granted else 'no'}"


class RetainedRecord(models.TextChoices):
    """What a retention period reaches."""

    CLAIM = "claim", "Memories (claims)"
    EVENT = "event", "Ledger events no memory cites"
    RECALL_TRACE = "recall_trace", "Recall traces"


class RetentionPolicy(models.Model):
    """Records of a tenant older than `days` are forgotten through the deletion pipeline.

    `record` says which: claims (by claim kind), ledger events no live claim
    cites (by event kind), or recall traces. Empty `kind` or `sensitivity`
    means every kind or class; traces have neither. A row that several
    policies reach is forgotten by the shortest.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    record = models.CharField(
        max_length=16, choices=RetainedRecord.choices, default=RetainedRecord.CLAIM
    )
    # A claim kind for claims, the agent's event kind for events (validated by the service).
    kind = models.CharField(max_length=64, blank=True)
    sensitivity = models.CharField(max_length=32, choices=Sensitivity.choices, blank=True)
    days = models.PositiveIntegerField()
    updated_at = models.DateTimeField(db_default=Now())
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "record", "kind", "sensitivity"],
                name="retention_one_per_record_kind_and_class",
            ),
            models.CheckConstraint(condition=models.Q(days__gte=1), name="retention_days_positive"),
            models.CheckConstraint(
                condition=models.Q(record__in=RetainedRecord.values), name="retention_record_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(record="recall_trace") | models.Q(kind="", sensitivity=""),
                name="retention_traces_have_no_kind_or_class",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.record} {self.kind or 'any'}/{self.sensitivity or 'any'}: {self.days} d"
