"""A deletion request's state machine and a worker's lease on it: move, claim, release, fence.

A request moves only along `DELETION_MACHINE` (models/lifecycle.py), with an audit row per
move. A worker takes it with `FOR UPDATE SKIP LOCKED` and a lease, and bumps
`attempts`; the attempt number is the fence, so a worker whose lease lapsed
finds a different number when it comes back and its late writes are dropped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.services import audit_record
from memory.privacy.models import DELETION_MACHINE, DeletionRequest, DeletionStatus
from memory.privacy.models.lifecycle import UNFINISHED_DELETION_STATUSES
from reviews.models import Queue
from reviews.services import review_open

logger = logging.getLogger(__name__)


def deletion_move(
    deletion: DeletionRequest,
    *,
    to: str,
    actor: Actor,
    now: datetime,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> None:
    DELETION_MACHINE.check(deletion.status, to)
    deletion.status = to
    deletion.updated_at = now
    audit_record(
        tenant=deletion.tenant,
        actor=actor,
        verb=f"deletion.{to}",
        target_type="deletion",
        target_id=deletion.pk,
        reason=reason,
        data={"attempt": deletion.attempts, **(data or {})},
    )


def deletion_review_open(deletion: DeletionRequest, reasons: list[str]) -> None:
    review_open(
        tenant=deletion.tenant,
        queue=Queue.DELETIONS,
        target_type="deletion",
        target_id=deletion.pk,
        target_version=deletion.version(),
        subject_key=deletion.subject.key,
        reason_codes=[reason[:64] for reason in reasons],
    )


def _fail(deletion: DeletionRequest, *, actor: Actor, now: datetime, error_code: str) -> None:
    deletion_move(deletion, to=DeletionStatus.FAILED, actor=actor, now=now, reason=error_code)
    deletion.error_code = error_code[:100]
    deletion.lease_expires_at = None
    deletion.finished_at = now
    deletion.report = {**deletion.report, "clean": False, "error": error_code[:100]}
    deletion.save(
        update_fields=[
            "status",
            "error_code",
            "lease_expires_at",
            "finished_at",
            "report",
            "updated_at",
        ]
    )
    # A failed deletion leaves content behind: a person must look at it.
    deletion_review_open(deletion, [error_code])


@dataclass(frozen=True)
class DeletionLease:
    deletion_id: UUID
    attempt: int


def deletion_claimable(now: datetime) -> Q:
    return Q(status__in=UNFINISHED_DELETION_STATUSES) & (
        Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    )


def deletion_claim(
    *, deletion_id: UUID | str, worker: Actor, now: datetime | None = None
) -> DeletionLease | None:
    """Take a request for one attempt, or None if it is finished, leased, or out of attempts."""
    now = now or timezone.now()
    with transaction.atomic():
        deletion = (
            DeletionRequest.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant", "subject")
            .filter(deletion_claimable(now), pk=deletion_id)
            .first()
        )
        if deletion is None:
            return None
        if deletion.attempts >= settings.DELETION_MAX_ATTEMPTS:
            _fail(deletion, actor=worker, now=now, error_code="attempts_exhausted")
            return None
        deletion.attempts += 1
        deletion.lease_expires_at = now + timedelta(seconds=settings.DELETION_LEASE_SECONDS)
        deletion.started_at = deletion.started_at or now
        deletion.updated_at = now
        if deletion.status == DeletionStatus.PENDING:
            deletion_move(deletion, to=DeletionStatus.PROPAGATING, actor=worker, now=now)
        deletion.save(
            update_fields=["status", "attempts", "lease_expires_at", "started_at", "updated_at"]
        )
    return DeletionLease(deletion_id=deletion.pk, attempt=deletion.attempts)


def deletion_locked_for(lease: DeletionLease, status: str) -> DeletionRequest | None:
    """The request under lock, or None if this lease was fenced off by a newer attempt."""
    deletion = (
        DeletionRequest.objects.select_for_update(of=("self",))
        .select_related("tenant", "subject")
        .filter(pk=lease.deletion_id)
        .first()
    )
    if deletion is None or deletion.status != status or deletion.attempts != lease.attempt:
        logger.warning(
            "stale deletion attempt discarded",
            extra={
                "deletion": str(lease.deletion_id),
                "attempt": lease.attempt,
                "current_attempt": deletion.attempts if deletion else None,
                "status": deletion.status if deletion else None,
            },
        )
        return None
    return deletion


def deletion_release(
    *, lease: DeletionLease, worker: Actor, error_code: str, now: datetime | None = None
) -> None:
    """An attempt broke: record why and let the sweep retry after a backoff (or give up)."""
    now = now or timezone.now()
    with transaction.atomic():
        deletion = (
            DeletionRequest.objects.select_for_update(of=("self",))
            .select_related("tenant", "subject")
            .filter(pk=lease.deletion_id, attempts=lease.attempt)
            .filter(status__in=UNFINISHED_DELETION_STATUSES)
            .first()
        )
        if deletion is None:
            return
        if deletion.attempts >= settings.DELETION_MAX_ATTEMPTS:
            _fail(deletion, actor=worker, now=now, error_code=error_code)
            return
        backoff = min(
            settings.DELETION_RETRY_BASE_SECONDS * 2 ** (deletion.attempts - 1),
            settings.DELETION_LEASE_SECONDS,
        )
        deletion.error_code = error_code[:100]
        deletion.lease_expires_at = now + timedelta(seconds=backoff)
        deletion.updated_at = now
        deletion.save(update_fields=["error_code", "lease_expires_at", "updated_at"])
