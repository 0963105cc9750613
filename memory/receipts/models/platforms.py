"""The outside systems an admin allowed memdesk to read from, per tenant.

Agents never choose which hosts memdesk contacts: a receipt's lookup must
fall under a registered platform's base URL, and the platform decides
whether private networks may be read at all.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant

PLATFORM_NAME_PATTERN = r"^[a-z0-9](?:[a-z0-9._-]{0,62})$"
# What a registered lookup template must contain: absence is only ever proven
# for the receipt's own key, never for whatever a URL without it answers.
KEY_NAME = "idempotency_key"
KEY_PLACEHOLDER = f"{{{KEY_NAME}}}"


class AbsenceProof(models.TextChoices):
    """How a platform proves that a write never happened, as its admin registered it."""

    # A negative answer proves nothing: every unsettled outcome goes to a person.
    NONE = "none", "None: a person decides"
    # GET the registered lookup for the key; `404` means the key was never written.
    STATUS_LOOKUP = "status_lookup", "Lookup by key: 404 means never written"
    # GET the registered search for the key; `[]` means never written, and a hit
    # must carry the receipt's intent to count as its effect.
    SEARCH_BY_KEY = "search_by_key", "Search by key: [] means never written"


class Platform(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64)
    # Normalised (see memory.receipts.reconcilers.urls): lower-case host, no default
    # port, a path ending in `/`, so prefix matching compares like with like.
    base_url = models.CharField(max_length=1000)
    # Loopback, private, link-local and other internal addresses may be read
    # only for a platform registered with this set.
    allow_private = models.BooleanField(default=False)
    # The admin's word on what a negative answer means; an agent's receipt
    # never decides it (docs/receipts.md, "Proof of absence").
    absence_proof = models.CharField(
        max_length=16, choices=AbsenceProof.choices, default=AbsenceProof.NONE
    )
    # Path and query under `base_url` whose answer proves absence, with the
    # receipt's key in it; only a read of exactly this lookup can prove absence.
    lookup_template = models.CharField(max_length=2000, blank=True)
    # How long the platform remembers an idempotency key after the write:
    # past it, not finding the key proves nothing.
    key_retention_seconds = models.PositiveIntegerField(null=True, blank=True)
    # How long after submission a negative answer may still be the platform
    # not having caught up with the write (eventual consistency).
    consistency_delay_seconds = models.PositiveIntegerField(default=0)
    created_by_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    created_by_id = models.CharField(max_length=64, blank=True)
    created_by_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    # Negative controls of the verifier (docs/reconciliation.md, "Verifier controls"):
    # a key the platform never saw and, optionally, one it holds. A periodic task
    # reads both; a wrong answer marks the platform's verifier unhealthy, and while
    # it is, no read of this platform makes a receipt `safe_to_retry`.
    control_absent_key = models.CharField(max_length=255, blank=True)
    control_present_key = models.CharField(max_length=255, blank=True)
    controls_checked_at = models.DateTimeField(null=True, blank=True)
    verifier_unhealthy_since = models.DateTimeField(null=True, blank=True)
    verifier_unhealthy_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="platform_name_unique"),
            models.CheckConstraint(
                condition=models.Q(verifier_unhealthy_since__isnull=True)
                | ~models.Q(verifier_unhealthy_reason=""),
                name="platform_unhealthy_says_why",
            ),
            models.CheckConstraint(
                condition=models.Q(control_present_key="")
                | ~models.Q(control_present_key=models.F("control_absent_key")),
                name="platform_controls_differ",
            ),
            models.CheckConstraint(
                condition=models.Q(name__regex=PLATFORM_NAME_PATTERN), name="platform_name_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(base_url__regex=r"^https?://[^/@\s]+/(.*/)?$"),
                name="platform_base_url_normalised",
            ),
            models.CheckConstraint(
                condition=models.Q(absence_proof__in=AbsenceProof.values),
                name="platform_absence_proof_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(lookup_template="")
                | models.Q(lookup_template__contains=KEY_PLACEHOLDER),
                name="platform_lookup_template_has_key",
            ),
            # A proof holds only for a lookup by key and only while the key is remembered
            # (NULL spelled out: a CHECK passes when its comparison is unknown).
            models.CheckConstraint(
                condition=models.Q(absence_proof=AbsenceProof.NONE)
                | (
                    ~models.Q(lookup_template="")
                    & models.Q(key_retention_seconds__isnull=False, key_retention_seconds__gt=0)
                ),
                name="platform_absence_proof_complete",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.base_url})"


EVIDENCE_FIELD_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"


class OperationPolicy(models.Model):
    """What an agent's `succeeded` must carry for one operation on a platform.

    Registered by admins with the platform the operation writes to. Without a
    policy an agent's word is taken (and counted as an unverified completion
    when it brings no external id and no evidence); with one, a report that
    lacks what the policy names is refused, and a policy asking for a verifying
    read lets only the platform's answer to memdesk's own read settle it.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    platform = models.ForeignKey(Platform, on_delete=models.CASCADE, related_name="policies")
    # One policy per operation name in a tenant: a receipt names its operation,
    # not always a platform (a manual reconciler has none), and an agent must
    # not escape the policy by choosing another reconciler.
    operation = models.CharField(max_length=200)
    require_external_id = models.BooleanField(default=False)
    evidence_fields = ArrayField(models.CharField(max_length=64), default=list, blank=True, size=32)
    require_verifying_read = models.BooleanField(default=False)
    # A person other than the planning token's owner approves each receipt's
    # intent before the agent may submit it (docs/receipts.md, "Approvals").
    approval_required = models.BooleanField(default=False)
    # When the effect fails (manual review, retries spent) and a compensation is planned,
    # recovery answers `compensate` instead of `escalate` (docs/protocol.md).
    compensate_on_failure = models.BooleanField(default=False, db_default=False)
    created_by_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    created_by_id = models.CharField(max_length=64, blank=True)
    created_by_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "operation"], name="operation_policy_unique"),
            models.CheckConstraint(
                condition=models.Q(require_external_id=True)
                | models.Q(require_verifying_read=True)
                | models.Q(approval_required=True)
                | models.Q(compensate_on_failure=True)
                | ~models.Q(evidence_fields=[]),
                name="operation_policy_requires_something",
            ),
            models.CheckConstraint(
                condition=~models.Q(operation=""), name="operation_policy_operation_named"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} on {self.platform_id}"

    def requirements(self) -> list[str]:
        """What `succeeded` needs, as the names a refusal lists when they are missing."""
        needed = ["external_id"] if self.require_external_id else []
        needed += [f"evidence.{name}" for name in self.evidence_fields]
        if self.require_verifying_read:
            needed.append("verifying_read")
        if self.approval_required:
            needed.append("approval")
        return needed
