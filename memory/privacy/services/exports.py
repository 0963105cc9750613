"""Writes for "download my data": ask for an export, let a worker produce it, expire it.

A small export is built while the person waits and never stored
(`export_document`). A large one is a `DataExport` row: asked for here,
produced by a lifecycle worker in chunks (progress as rows done of rows
total), kept in PostgreSQL until `EXPORT_RETENTION_HOURS` pass, then emptied
by beat. A deletion of one of its subjects erases it (the trigger beside the
model), and a worker writes the finished document only while the export is
still its unfinished work, so no export outlives a deletion of what it holds.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from memory.privacy.models import EXPORT_MACHINE, DataExport, ExportStatus
from memory.privacy.models.exports import CONTENT_EXPORT_STATUSES, UNFINISHED_EXPORT_STATUSES
from memory.privacy.selectors.export_activity import ACTIVITY_SECTIONS
from memory.privacy.selectors.me import (
    export_header,
    export_rows_total,
    export_sections,
    me_subjects,
)

logger = logging.getLogger(__name__)

SECTIONS = ("claims", "events", "deletions", *ACTIVITY_SECTIONS)


def _dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)


@dataclass(frozen=True)
class ExportScope:
    """Whose data an export holds: the person's subjects that memdesk has heard of."""

    subject_ids: list[int]
    subject_keys: list[str]


def export_scope(*, tenant: Tenant, user: Any) -> ExportScope:
    subjects = list(me_subjects(tenant=tenant, user=user))
    return ExportScope(
        subject_ids=[subject.pk for subject in subjects],
        subject_keys=[subject.key for subject in subjects],
    )


def export_document(*, tenant: Tenant, user: Any, scope: ExportScope) -> str:
    """The whole export as JSON text, built at once (the small path)."""
    document: dict[str, Any] = {
        **export_header(
            tenant=tenant,
            user=user,
            subject_ids=scope.subject_ids,
            subject_keys=scope.subject_keys,
            generated_at=timezone.now(),
        ),
        **{section: [] for section in SECTIONS},
    }
    for section, rows in export_sections(
        tenant=tenant, subject_ids=scope.subject_ids, chunk_rows=settings.EXPORT_CHUNK_ROWS
    ):
        document[section].extend(rows)
    document["counts"] = {section: len(document[section]) for section in SECTIONS}
    return _dumps(document)


def export_is_small(*, tenant: Tenant, scope: ExportScope) -> bool:
    total = export_rows_total(tenant=tenant, subject_ids=scope.subject_ids)
    return total <= settings.EXPORT_INLINE_MAX_ROWS


def export_enqueue(*, export_id: UUID | str) -> None:
    # By name: the tasks module imports this one, never the other way round.
    current_app.signature(
        "memory.export_run", args=[str(export_id)], queue=settings.LIFECYCLE_QUEUE
    ).apply_async()


def export_request(
    *, tenant: Tenant, actor: Actor, user: Any, scope: ExportScope
) -> tuple[DataExport, bool]:
    """Ask a worker for an export of the person's subjects. Returns it and whether it is new:
    asking again while one is being made returns that one."""
    with transaction.atomic():
        unfinished = DataExport.objects.filter(
            tenant=tenant, requested_by=user, status__in=UNFINISHED_EXPORT_STATUSES
        ).first()
        if unfinished is not None:
            return unfinished, False
        try:
            with transaction.atomic():
                export = DataExport.objects.create(
                    tenant=tenant,
                    requested_by=user,
                    subject_ids=scope.subject_ids,
                    subject_keys=scope.subject_keys,
                    rows_total=export_rows_total(tenant=tenant, subject_ids=scope.subject_ids),
                    expires_at=timezone.now() + timedelta(hours=settings.EXPORT_RETENTION_HOURS),
                )
        except IntegrityError:
            return (
                DataExport.objects.get(
                    tenant=tenant, requested_by=user, status__in=UNFINISHED_EXPORT_STATUSES
                ),
                False,
            )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="export.requested",
            target_type="export",
            target_id=export.pk,
            data={"subjects": scope.subject_ids, "rows_total": export.rows_total},
        )
        # robust: the row is committed whatever happens to the broker; the sweep
        # finds a pending export again if this message is lost.
        transaction.on_commit(lambda: export_enqueue(export_id=export.pk), robust=True)
    return export, True


def _guard(export: DataExport, to: str) -> None:
    EXPORT_MACHINE.check(export.status, to, noun=f"An export in {export.status}")


@dataclass(frozen=True)
class ExportLease:
    export_id: UUID
    attempts: int


def _claim(export_id: UUID | str, now: datetime) -> ExportLease | None:
    with transaction.atomic():
        export = (
            DataExport.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=ExportStatus.PENDING)
                | Q(status=ExportStatus.RUNNING, lease_expires_at__lt=now),
                pk=export_id,
                expires_at__gt=now,
            )
            .first()
        )
        if export is None:
            return None
        if export.attempts >= settings.EXPORT_MAX_ATTEMPTS:
            _finish(export, ExportStatus.FAILED, now=now, error_code="too_many_attempts")
            return None
        if export.status != ExportStatus.RUNNING:
            _guard(export, ExportStatus.RUNNING)
        export.status = ExportStatus.RUNNING
        export.attempts += 1
        export.rows_done = 0
        export.lease_expires_at = now + timedelta(seconds=settings.EXPORT_LEASE_SECONDS)
        export.started_at = export.started_at or now
        export.save(
            update_fields=["status", "attempts", "rows_done", "lease_expires_at", "started_at"]
        )
    return ExportLease(export_id=export.pk, attempts=export.attempts)


def _held(lease: ExportLease) -> QuerySet[DataExport]:
    """The export, still this lease's running work; a deletion or a later worker ends it."""
    return DataExport.objects.filter(
        pk=lease.export_id, attempts=lease.attempts, status=ExportStatus.RUNNING
    )


def _finish(export: DataExport, to: str, *, now: datetime, error_code: str = "") -> None:
    _guard(export, to)
    export.status = to
    export.error_code = error_code
    export.finished_at = now
    export.lease_expires_at = None
    export.save(
        update_fields=[
            "status",
            "error_code",
            "finished_at",
            "lease_expires_at",
            "content",
            "size_bytes",
            "digest",
            "rows_done",
            "rows_total",
        ]
    )
    audit_record(
        tenant=export.tenant,
        actor=Actor.system("export worker"),
        verb=f"export.{to}",
        target_type="export",
        target_id=export.pk,
        reason=error_code,
        data={"rows": export.rows_done, "bytes": export.size_bytes},
    )


def export_run(*, export_id: UUID | str) -> DataExport | None:
    """One worker pass: take the export, write its rows chunk by chunk with progress, and
    store the document. None if another worker holds it, it is finished, or a deletion
    erased it meanwhile. Safe to run twice."""
    now = timezone.now()
    lease = _claim(export_id, now)
    if lease is None:
        return None
    export = DataExport.objects.select_related("tenant", "requested_by").get(pk=lease.export_id)
    tenant, user = export.tenant, export.requested_by
    document: dict[str, Any] = {
        **export_header(
            tenant=tenant,
            user=user,
            subject_ids=list(export.subject_ids),
            subject_keys=list(export.subject_keys),
            generated_at=now,
        ),
        **{section: [] for section in SECTIONS},
    }
    done = 0
    for section, rows in export_sections(
        tenant=tenant, subject_ids=list(export.subject_ids), chunk_rows=settings.EXPORT_CHUNK_ROWS
    ):
        document[section].extend(rows)
        done += len(rows)
        lease_until = timezone.now() + timedelta(seconds=settings.EXPORT_LEASE_SECONDS)
        if not _held(lease).update(rows_done=done, lease_expires_at=lease_until):
            logger.info("export given up", extra={"export": str(export.pk)})
            return None
    document["counts"] = {section: len(document[section]) for section in SECTIONS}
    content = _dumps(document)
    encoded = content.encode()
    with transaction.atomic():
        # Locked, so a deletion asked now waits for this commit and then erases it.
        locked = _held(lease).select_for_update().select_related("tenant").first()
        if locked is None:
            return None
        export = locked
        export.content = content
        export.size_bytes = len(encoded)
        export.digest = "sha256:" + hashlib.sha256(encoded).hexdigest()
        export.rows_done = done
        export.rows_total = done
        _finish(export, ExportStatus.READY, now=timezone.now())
    return export


def exports_dispatch_due(*, now: datetime | None = None) -> int:
    """Beat's safety net: wake a worker for every unfinished export without a live lease."""
    now = now or timezone.now()
    due = DataExport.objects.filter(
        Q(status=ExportStatus.PENDING) | Q(status=ExportStatus.RUNNING, lease_expires_at__lt=now),
        expires_at__gt=now,
    ).values_list("pk", flat=True)
    sent = 0
    for export_id in due:
        export_enqueue(export_id=export_id)
        sent += 1
    return sent


def exports_expire(*, now: datetime | None = None) -> int:
    """Empty every export past its retention (its row stays, saying it expired); returns
    how many."""
    now = now or timezone.now()
    with transaction.atomic():
        expired = list(
            DataExport.objects.select_for_update(skip_locked=True)
            .filter(status__in=CONTENT_EXPORT_STATUSES, expires_at__lte=now)
            .select_related("tenant")
        )
        for export in expired:
            export.content = ""
            export.size_bytes = 0
            export.digest = ""
            _finish(export, ExportStatus.EXPIRED, now=now)
    return len(expired)
