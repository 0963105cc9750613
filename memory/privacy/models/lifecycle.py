"""Memory lifecycle records: deletion requests, the tombstones they leave, consolidation runs."""

from __future__ import annotations

import uuid

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from common.transitions import StateMachine
from memory.claims.models.claims import Claim
from memory.claims.models.ledger import Subject


class DeletionScope(models.TextChoices):
    CLAIM = "claim", "One memory"
    SUBJECT = "subject", "Everything about a subject"
    # Named events and recall traces of a subject that no memory needs: those past
    # their retention period, or of a sensitive class whose consent was withdrawn.
    RECORDS = "records", "Records of a subject"


class DeletionCause(models.TextChoices):
    """Why a deletion was asked for, in the words the subject reads."""

    ASKED = "asked", "You or an editor asked"
    RETENTION = "retention", "Past the retention period"
    CONSENT_WITHDRAWN = "consent_withdrawn", "Consent withdrawn"


class DeletionStatus(models.TextChoices):
    PENDING = "pending"
    PROPAGATING = "propagating"
    VERIFYING = "verifying"
    # Erased, but a probe found a copy: an editor resolves it before it completes.
    NEEDS_REVIEW = "needs_review"
    COMPLETED = "completed"
    FAILED = "failed"


# The deletion state machine (docs/design.md), and the only place it is written down.
DELETION_TRANSITIONS: dict[str, frozenset[str]] = {
    DeletionStatus.PENDING: frozenset({DeletionStatus.PROPAGATING, DeletionStatus.FAILED}),
    DeletionStatus.PROPAGATING: frozenset({DeletionStatus.VERIFYING, DeletionStatus.FAILED}),
    DeletionStatus.VERIFYING: frozenset(
        {DeletionStatus.COMPLETED, DeletionStatus.NEEDS_REVIEW, DeletionStatus.FAILED}
    ),
    DeletionStatus.NEEDS_REVIEW: frozenset({DeletionStatus.COMPLETED}),
}
# The statuses a worker still takes a request in; `needs_review` waits for a person.
UNFINISHED_DELETION_STATUSES = (
    DeletionStatus.PENDING,
    DeletionStatus.PROPAGATING,
    DeletionStatus.VERIFYING,
)


# Each move audited as `deletion.<to>` by `deletion_move`, which adds the attempt.
DELETION_MACHINE = StateMachine.plain(label="deletion", table=DELETION_TRANSITIONS)


# Generated from the table: a finished deletion is never put back to work, raw SQL included.
@pgtrigger.register(DELETION_MACHINE.trigger("deletion_status_transition"))
class DeletionRequest(models.Model):
    """A request to forget one memory or everything about a subject, and its report.

    The row is the work: a worker takes it with a lease (`attempts` fences a
    worker whose lease ran out) and a sweep finds it again if a message is
    lost. The report holds counts, ids' digests and probe results, never the
    deleted content.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=16, choices=DeletionScope.choices)
    subject = models.ForeignKey(Subject, on_delete=models.PROTECT, related_name="deletions")
    claim = models.ForeignKey(
        Claim, null=True, blank=True, on_delete=models.PROTECT, related_name="deletions"
    )
    # The rows a `records` deletion names (ids only; empty for the other scopes).
    event_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    trace_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    cause = models.CharField(
        max_length=24, choices=DeletionCause.choices, default=DeletionCause.ASKED
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=DeletionStatus.choices, default=DeletionStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    error_code = models.CharField(max_length=100, blank=True)
    report = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=DeletionStatus.values), name="deletion_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(scope="subject", claim__isnull=True, event_ids=[], trace_ids=[])
                | models.Q(scope="claim", claim__isnull=False, event_ids=[], trace_ids=[])
                | models.Q(scope="records", claim__isnull=True),
                name="deletion_scope_matches_target",
            ),
            models.CheckConstraint(
                condition=models.Q(cause__in=DeletionCause.values), name="deletion_cause_valid"
            ),
            # Asking twice while the first request is still running returns it. Records
            # deletions name their rows; a sweep leaves out rows already named.
            models.UniqueConstraint(
                fields=["tenant", "subject", "claim"],
                condition=models.Q(status__in=["pending", "propagating", "verifying"])
                & ~models.Q(scope="records"),
                nulls_distinct=False,
                name="deletion_one_unfinished_per_target",
            ),
        ]
        indexes = [
            models.Index(
                fields=["lease_expires_at"],
                condition=models.Q(status__in=["pending", "propagating", "verifying"]),
                name="deletion_unfinished_lease",
            ),
            models.Index(fields=["tenant", "subject", "-created_at"]),
        ]

    def __str__(self) -> str:
        return f"deletion {self.id} ({self.status})"

    def version(self) -> str:
        """What a review decision compares: the status, and whether the report was clean."""
        return f"{self.status}:{self.report.get('clean')}"


class TombstoneTarget(models.TextChoices):
    CLAIM = "claim"
    EVENT = "event"
    RECALL_TRACE = "recall_trace"


class TombstoneAction(models.TextChoices):
    ERASED = "erased"
    REDACTED = "redacted"
    INVALIDATED = "invalidated"


@pgtrigger.register(
    pgtrigger.Protect(name="tombstone_append_only", operation=pgtrigger.Update | pgtrigger.Delete)
)
class Tombstone(models.Model):
    """What a deletion did to one row, by id and digest only, so it can be done again.

    After a backup restore, `reapply_tombstones` walks these rows and erases,
    redacts or invalidates their targets again. There is no content here.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    deletion = models.ForeignKey(
        DeletionRequest, on_delete=models.PROTECT, related_name="tombstones"
    )
    target_type = models.CharField(max_length=16, choices=TombstoneTarget.choices)
    target_id = models.UUIDField()
    action = models.CharField(max_length=16, choices=TombstoneAction.choices)
    # The digest the target already carried (claim value digest, event digest).
    digest = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "target_type", "target_id", "action"],
                name="tombstone_unique_per_target_action",
            ),
            models.CheckConstraint(
                condition=models.Q(target_type__in=TombstoneTarget.values),
                name="tombstone_target_type_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(action__in=TombstoneAction.values),
                name="tombstone_action_valid",
            ),
        ]
        indexes = [models.Index(fields=["tenant", "target_type", "action"])]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type}:{self.target_id}"


class ConsolidationTrigger(models.TextChoices):
    BEAT = "beat"
    COMMAND = "command"


class ConsolidationRun(models.Model):
    """One consolidation pass over a tenant and what it changed (ids and counts only)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=16, choices=ConsolidationTrigger.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    changes = models.JSONField(default=dict)

    class Meta:
        app_label = "memory"
        indexes = [models.Index(fields=["tenant", "-started_at"])]

    def __str__(self) -> str:
        return f"consolidation of {self.tenant_id} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def changed(self) -> int:
        return sum(self.changes.get("counts", {}).values())
