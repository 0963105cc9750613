"""Forgetting that provably propagates (docs/design.md, principle 7; docs/privacy.md).

A deletion request names one memory or everything about a subject. A worker
takes the request with a lease and, in one transaction, erases the claims
(value and text wiped, index entries cleared), erases or invalidates what was
derived from them, redacts the user's own statements in the ledger, redacts
recall traces and idempotency replies that hold the content, and writes a
tombstone per row. After commit it purges the subject's hot-memory blocks
from Redis and runs the probes of `memory.privacy.selectors.probes`, whose queries
and results go into the report.

The probes search for the deleted content's distinctive words. Those words
are read before the wipe and live only in the worker's memory: the report
keeps their HMAC digests. The plan stages the rows it will touch in a
temporary table once; every write after that is one set-based statement per
table joined to it, so erasing a subject costs the same number of queries
whether it has 10 claims or 10,000.

What one deletion reaches: the claim and the revisions it superseded (or
every claim of the subject); claims derived from them, transitively — erased
when they contain a distinctive word of the deleted content or rest on
nothing but erased claims, invalidated otherwise; the ledger events of the
subject that are sources of erased claims or repeat their words (all of the
subject's events for a subject deletion), and events quoting erased claims
(`echo_of`); recall traces of the touched subjects that returned them or
asked for their words; stored idempotent replies carrying erased rows; open
review items of erased or invalidated claims.

This module is what callers use: ask, run one worker pass, find due requests.
The pass's steps have their own modules: deletion_leases (the request's state
machine and a worker's lease), deletion_plan (what one deletion reaches),
deletion_propagate (the erasing transaction, through the statements of
erasure.py), deletion_verify (the probes and the report) and deletion_vacuum
(VACUUM of the touched tables, on its own connection while the probes run).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import not_found
from memory.claims.models import Claim, ClaimStatus, Subject
from memory.privacy.models import DeletionCause, DeletionRequest, DeletionScope, DeletionStatus
from memory.privacy.models.lifecycle import UNFINISHED_DELETION_STATUSES
from memory.privacy.services.deletion_leases import (
    deletion_claim,
    deletion_claimable,
    deletion_move,
    deletion_release,
)
from memory.privacy.services.deletion_propagate import deletion_propagate
from memory.privacy.services.deletion_vacuum import (
    DeletionVacuum,
    deletion_vacuum_record,
    deletion_vacuum_start,
    tables_to_vacuum,
)
from memory.privacy.services.deletion_verify import deletion_verify

logger = logging.getLogger(__name__)


def deletion_enqueue(*, deletion_ids: Iterable[UUID | str]) -> int:
    """Wake a lifecycle worker for each request. Returns the messages sent."""
    sent = 0
    for deletion_id in deletion_ids:
        # By name: the tasks module imports this one, never the other way round.
        current_app.signature(
            "memory.deletion_run", args=[str(deletion_id)], queue=settings.LIFECYCLE_QUEUE
        ).apply_async()
        sent += 1
    return sent


def _enqueue_on_commit(deletion_id: UUID) -> None:
    # robust: the request is committed whatever happens to the broker; the
    # due-deletions sweep finds it from the row if this message is lost.
    transaction.on_commit(lambda: deletion_enqueue(deletion_ids=[deletion_id]), robust=True)


def deletion_request_create(
    *,
    tenant: Tenant,
    actor: Actor,
    subject: Subject,
    claim: Claim | None = None,
    requested_by: Any = None,
    cause: str = DeletionCause.ASKED,
) -> tuple[DeletionRequest, bool]:
    """Record a request to forget one claim (and its history) or everything about a subject.

    Returns the request and whether it is new: asking again while one is
    unfinished for the same target returns that one. Propagation starts
    after commit.
    """
    if claim is not None and (claim.subject_id != subject.pk or claim.status == ClaimStatus.ERASED):
        raise not_found("memory")
    scope = DeletionScope.CLAIM if claim else DeletionScope.SUBJECT
    with transaction.atomic():
        unfinished = DeletionRequest.objects.filter(
            tenant=tenant,
            scope=scope,
            subject=subject,
            claim=claim,
            status__in=UNFINISHED_DELETION_STATUSES,
        ).first()
        if unfinished is not None:
            return unfinished, False
        try:
            with transaction.atomic():
                deletion = DeletionRequest.objects.create(
                    tenant=tenant,
                    scope=scope,
                    subject=subject,
                    claim=claim,
                    requested_by=requested_by,
                    cause=cause,
                )
        except IntegrityError:
            return (
                DeletionRequest.objects.get(
                    tenant=tenant,
                    scope=scope,
                    subject=subject,
                    claim=claim,
                    status__in=UNFINISHED_DELETION_STATUSES,
                ),
                False,
            )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="deletion.requested",
            target_type="deletion",
            target_id=deletion.pk,
            data={
                "scope": deletion.scope,
                "subject": subject.pk,
                "claim": str(claim.pk) if claim else None,
                "cause": cause,
            },
        )
        _enqueue_on_commit(deletion.pk)
    return deletion, True


def deletion_records_create(
    *,
    tenant: Tenant,
    actor: Actor,
    subject: Subject,
    event_ids: list[UUID],
    trace_ids: list[UUID],
    cause: str,
    requested_by: Any = None,
) -> DeletionRequest:
    """Record a request to forget named events and recall traces of one subject that no
    memory needs (past retention, or covered by a withdrawn consent). The same worker
    redacts them with their stored replies, writes their tombstones and probes them.
    The caller names only rows of `tenant` and `subject`; the plan checks it again."""
    with transaction.atomic():
        deletion = DeletionRequest.objects.create(
            tenant=tenant,
            scope=DeletionScope.RECORDS,
            subject=subject,
            event_ids=sorted(set(event_ids)),
            trace_ids=sorted(set(trace_ids)),
            requested_by=requested_by,
            cause=cause,
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="deletion.requested",
            target_type="deletion",
            target_id=deletion.pk,
            data={
                "scope": deletion.scope,
                "subject": subject.pk,
                "events": len(deletion.event_ids),
                "recall_traces": len(deletion.trace_ids),
                "cause": cause,
            },
        )
        _enqueue_on_commit(deletion.pk)
    return deletion


def records_pending_deletion(*, tenant: Tenant) -> tuple[set[UUID], set[UUID]]:
    """Event and trace ids that unfinished records deletions already name, so a sweep
    does not ask twice."""
    events: set[UUID] = set()
    traces: set[UUID] = set()
    for event_ids, trace_ids in DeletionRequest.objects.filter(
        tenant=tenant, scope=DeletionScope.RECORDS, status__in=UNFINISHED_DELETION_STATUSES
    ).values_list("event_ids", "trace_ids"):
        events.update(event_ids)
        traces.update(trace_ids)
    return events, traces


def deletion_run(*, deletion_id: UUID | str, worker: Actor) -> DeletionRequest | None:
    """One worker pass: take the request, propagate if not done yet, verify, complete.

    Safe to run twice: a second message finds the request leased or finished.
    """
    lease = deletion_claim(deletion_id=deletion_id, worker=worker)
    if lease is None:
        return None
    vacuum: DeletionVacuum | None = None
    try:
        status, report = DeletionRequest.objects.values_list("status", "report").get(
            pk=lease.deletion_id
        )
        propagation = None
        if status == DeletionStatus.PROPAGATING:
            propagation = deletion_propagate(lease=lease, worker=worker)
            if propagation is None:
                return None
        tables = propagation.dead_row_tables if propagation else tables_to_vacuum(report)
        if settings.DELETION_VACUUM and tables is not None:
            # The erasure is committed: its old row versions go while the probes read.
            vacuum = deletion_vacuum_start(deletion_id=lease.deletion_id, tables=tables)
        verified = deletion_verify(lease=lease, worker=worker, propagation=propagation)
    except Exception as exc:
        logger.exception("deletion attempt failed", extra={"deletion": str(deletion_id)})
        deletion_release(lease=lease, worker=worker, error_code=type(exc).__name__)
        return None
    finally:
        if vacuum is not None:
            vacuum.wait()
    if verified is not None and vacuum is not None:
        deletion_vacuum_record(deletion=verified, vacuum=vacuum)
    return verified


def deletion_resolve(*, deletion: DeletionRequest, actor: Actor) -> DeletionRequest:
    """An editor resolved what a deletion's probes found: the request completes. The
    report keeps `clean: false` and its findings, and records who resolved it."""
    now = timezone.now()
    with transaction.atomic():
        locked = (
            DeletionRequest.objects.select_for_update().select_related("tenant").get(pk=deletion.pk)
        )
        deletion_move(locked, to=DeletionStatus.COMPLETED, actor=actor, now=now, reason="resolved")
        locked.finished_at = now
        locked.report = {
            **locked.report,
            "resolved": {"by": actor.label, "at": now.isoformat()},
        }
        locked.save(update_fields=["status", "finished_at", "report", "updated_at"])
    return locked


def deletions_due_ids(*, now: datetime | None = None, limit: int = 500) -> list[UUID]:
    """Unfinished requests of every tenant with no live lease, oldest first (ids only)."""
    now = now or timezone.now()
    return list(
        DeletionRequest.objects.filter(deletion_claimable(now))
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )


def deletions_dispatch_due(*, now: datetime | None = None, limit: int = 500) -> int:
    """Beat's safety net: wake a worker for every due request. A duplicate message
    costs one skipped claim."""
    ids = deletions_due_ids(now=now, limit=limit)
    if ids:
        deletion_enqueue(deletion_ids=ids)
    return len(ids)
