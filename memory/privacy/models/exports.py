"""A person's "download my data": one export of everything memdesk holds about their subjects.

Small exports are answered at once and never stored. A large one is a row a
worker fills (progress as rows done of rows total) and keeps in PostgreSQL
until `expires_at`; the content is the JSON document, as text.
"""

from __future__ import annotations

import uuid

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models.functions import Now

from accounts.models import Tenant
from common.transitions import StateMachine
from memory.privacy.models.lifecycle import DeletionRequest


class ExportStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    READY = "ready"
    FAILED = "failed"
    # Past its retention; the content is gone, the row says when it was made.
    EXPIRED = "expired"
    # A deletion of one of its subjects took the content with it.
    ERASED = "erased"


_E = ExportStatus
# The export state machine, and the only place it is written down.
EXPORT_TRANSITIONS: dict[str, frozenset[str]] = {
    _E.PENDING: frozenset({_E.RUNNING, _E.FAILED, _E.EXPIRED, _E.ERASED}),
    # running → pending: a worker whose lease ran out gives the export back.
    _E.RUNNING: frozenset({_E.PENDING, _E.READY, _E.FAILED, _E.EXPIRED, _E.ERASED}),
    _E.READY: frozenset({_E.EXPIRED, _E.ERASED}),
    _E.FAILED: frozenset({_E.EXPIRED, _E.ERASED}),
}
UNFINISHED_EXPORT_STATUSES = (_E.PENDING, _E.RUNNING)
# Statuses in which an export may hold content (or will, once its worker is done).
CONTENT_EXPORT_STATUSES = (_E.PENDING, _E.RUNNING, _E.READY, _E.FAILED)


EXPORT_MACHINE = StateMachine.plain(label="export", table=EXPORT_TRANSITIONS)


# Generated from the table, like every state machine's guard.
@pgtrigger.register(EXPORT_MACHINE.trigger("export_status_transition"))
class DataExport(models.Model):
    """Everything memdesk holds about one person's subjects, as one JSON document.

    The row is the work: a worker takes it with a lease (`attempts` fences a
    worker whose lease ran out) and a sweep finds it again if a message is lost.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # The subjects it covers, fixed when asked: the deletion trigger below finds
    # the exports a deletion reaches by these ids.
    subject_ids = ArrayField(models.BigIntegerField(), default=list)
    subject_keys = ArrayField(models.CharField(max_length=255), default=list)
    status = models.CharField(
        max_length=16, choices=ExportStatus.choices, default=ExportStatus.PENDING
    )
    rows_done = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    error_code = models.CharField(max_length=100, blank=True)
    # The JSON document exactly as it is downloaded; empty unless ready.
    content = models.TextField(blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)
    digest = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()

    class Meta:
        app_label = "memory"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=ExportStatus.values), name="export_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(content="") | models.Q(status="ready"),
                name="export_content_only_when_ready",
            ),
            # Asking again while one is being made returns it.
            models.UniqueConstraint(
                fields=["tenant", "requested_by"],
                condition=models.Q(status__in=["pending", "running"]),
                name="export_one_unfinished_per_person",
            ),
        ]
        indexes = [
            models.Index(fields=["tenant", "requested_by", "-created_at"]),
            models.Index(
                fields=["expires_at"],
                condition=models.Q(status__in=["pending", "running", "ready", "failed"]),
                name="export_live_expiry",
            ),
            GinIndex(fields=["subject_ids"], name="export_subject_ids"),
        ]

    def __str__(self) -> str:
        return f"export {self.id} ({self.status})"


# Forgetting reaches exports: any deletion about a subject (asked, propagated,
# verified) erases every export covering it, in the deletion's own transaction.
# A worker finishing an export writes it only while the export is unfinished,
# so an export read before the erasure committed can never land after it.
pgtrigger.Trigger(
    name="deletion_erases_exports",
    when=pgtrigger.After,
    operation=pgtrigger.Insert | pgtrigger.Update,
    # The table name and statuses are constants of this module, never input.
    func=f"""
        IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
            UPDATE {DataExport._meta.db_table}
               SET status = 'erased', content = '', size_bytes = 0, digest = '',
                   lease_expires_at = NULL
             WHERE tenant_id = NEW.tenant_id
               AND subject_ids @> ARRAY[NEW.subject_id]::bigint[]
               AND status IN ({", ".join(f"'{s}'" for s in CONTENT_EXPORT_STATUSES)});
        END IF;
        RETURN NULL;
    """,  # noqa: S608
).register(DeletionRequest)  # type: ignore[arg-type]  # pgtrigger's hint says an instance; it takes the model class
