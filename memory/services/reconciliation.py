"""Reconciliation in batches: claim K receipts in one statement, read them at once, settle together.

The one-at-a-time path (`receipts_reconcile` in receipt_reads.py) waits for each
read before claiming the next receipt, so a worker spends its time waiting on
the network. Here a worker claims a batch of due receipts with one
`SELECT … FOR UPDATE SKIP LOCKED`, reads them concurrently on a per-process
thread pool (at most `RECONCILE_READS_IN_FLIGHT` reads in flight, and per
platform host at most `RECONCILE_PLATFORM_READS_IN_FLIGHT` open and
`RECONCILE_PLATFORM_READS_PER_SECOND` starts), and settles the whole batch in
one transaction. Two batches of half the reads in flight alternate, so one is
settled and the next claimed while the other's reads are out.

Semantics are the one-at-a-time path's, receipt by receipt: the same
transition table and settlement rules, the same lease per claim, and the
attempt number as fence — a worker whose lease lapsed and whose receipt was
claimed again finds a different number in the settling transaction, and its
late result is discarded.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Field
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent
from common.problems import InvalidTransition, Problem
from memory.models.receipts import (
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
    allowed_receipt_targets,
)
from memory.reconcilers import LookupResult
from memory.reconcilers.http import lookup_client
from memory.services.receipt_moves import (
    MOVE_FIELDS,
    RECEIPT_TARGET_TYPE,
    receipt_move,
    transition_role,
)
from memory.services.receipt_reads import (
    ReconcileClaim,
    ReconcilePass,
    defer_after_failed_read,
    is_fenced_out,
    read_record,
    receipt_read,
    receipt_settlement,
    receipts_claimable,
    receipts_due,
    reconcile_claim_of,
)

logger = logging.getLogger(__name__)

_S = ReceiptState
# Moves a worker makes many of at once and that touch nothing but the receipt,
# its transition and its audit row; they are written with bulk statements.
# Anything else (a move to manual_review opens a review item) goes through
# `receipt_move` one receipt at a time.
_BULK_FROM = frozenset({_S.OUTCOME_UNKNOWN, _S.RECONCILING})
_BULK_TO = frozenset({_S.RECONCILING, _S.SUCCEEDED, _S.SAFE_TO_RETRY})
# Time kept back from a claim's lease for settling after the last read.
_SETTLE_MARGIN_SECONDS = 0.5


@dataclass(frozen=True)
class BatchClaim:
    """What one claiming statement took: claims to read, and every receipt it locked."""

    claims: list[ReconcileClaim]
    # Taken for a read, or sent to a person because its attempts were used up.
    handled: list[UUID]


@dataclass(frozen=True)
class _Move:
    receipt: Receipt
    to: str
    reason: str
    evidence: dict[str, Any] | None = None
    external_id: str = ""
    error_code: str = ""


def _column(name: str) -> Field[Any, Any]:
    field = Receipt._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{name} is a relation of receipts, not one of their columns")
    return field


def _rows_update(receipts: list[Receipt], fields: list[str]) -> None:
    """Write `fields` of each receipt as it is in memory, in one UPDATE … FROM (VALUES …).

    Django's `bulk_update` builds a CASE expression per field and row, which
    costs more to compile than the reads it follows take to answer.
    """
    if not receipts:
        return
    meta = Receipt._meta
    columns = [meta.pk, *(_column(name) for name in fields)]
    row = "(" + ", ".join(f"%s::{column.db_type(connection)}" for column in columns) + ")"
    params: list[Any] = []
    for receipt in receipts:
        params += [
            column.get_db_prep_value(getattr(receipt, column.attname), connection)
            for column in columns
        ]
    names = ", ".join(f'"{column.column}"' for column in columns)
    assignments = ", ".join(f'"{column.column}" = v."{column.column}"' for column in columns[1:])
    # Identifiers come from the model's metadata; every value is a parameter.
    sql = (
        f'UPDATE "{meta.db_table}" AS r SET {assignments} '  # noqa: S608
        f"FROM (VALUES {', '.join([row] * len(receipts))}) AS v({names}) "
        f'WHERE r."{meta.pk.column}" = v."{meta.pk.column}"'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _moves_apply(moves: list[_Move], *, actor: Actor, now: datetime) -> None:
    """Apply worker moves to locked receipts: the same rows `receipt_move` writes, in bulk.

    Each move is checked against the transition table exactly as `receipt_move`
    checks it; a move outside the bulk set is handed to `receipt_move` itself.
    """
    role = transition_role(actor)
    bulk: list[tuple[_Move, str]] = []
    for move in moves:
        receipt = move.receipt
        if receipt.state not in _BULK_FROM or move.to not in _BULK_TO:
            receipt_move(
                receipt,
                to=move.to,
                actor=actor,
                now=now,
                reason=move.reason,
                evidence=move.evidence,
                external_id=move.external_id,
                error_code=move.error_code,
            )
            continue
        allowed = allowed_receipt_targets(receipt.state, role)
        if move.to not in allowed:
            raise InvalidTransition(
                f"A receipt in `{receipt.state}` cannot be moved to `{move.to}` by the {role}.",
                allowed=allowed,
            )
        if move.external_id and receipt.external_id and move.external_id != receipt.external_id:
            raise Problem(
                "external_id_conflict",
                f"This receipt already records the external id `{receipt.external_id}`.",
                status_code=409,
            )
        from_state = receipt.state
        receipt.state = move.to
        receipt.updated_at = now
        if move.external_id:
            receipt.external_id = move.external_id
        if move.error_code:
            receipt.error_code = move.error_code[:100]
        if move.to != _S.RECONCILING:
            receipt.next_reconcile_at = None
            receipt.reconcile_lease_expires_at = None
        bulk.append((move, from_state))
    if not bulk:
        return
    _rows_update([move.receipt for move, _ in bulk], MOVE_FIELDS)
    transitions = ReceiptTransition.objects.bulk_create(
        [
            ReceiptTransition(
                tenant_id=move.receipt.tenant_id,
                receipt=move.receipt,
                from_state=from_state,
                to_state=move.to,
                actor_kind=actor.kind,
                actor_id=actor.id,
                actor_label=actor.label[:150],
                reason=move.reason[:500],
                evidence=move.evidence or {},
                attempt=move.receipt.reconcile_attempts,
                at=now,
            )
            for move, from_state in bulk
        ]
    )
    AuditEvent.objects.bulk_create(
        [
            AuditEvent(
                tenant_id=move.receipt.tenant_id,
                actor_kind=actor.kind,
                actor_id=actor.id,
                actor_label=actor.label,
                verb="receipt.transitioned",
                target_type=RECEIPT_TARGET_TYPE,
                target_id=str(move.receipt.pk),
                reason=move.reason[:500],
                data={"from": from_state, "to": move.to, "transition": transition.pk},
            )
            for (move, from_state), transition in zip(bulk, transitions, strict=True)
        ]
    )


def receipts_reconcile_claim_batch(
    *,
    worker: Actor,
    limit: int,
    receipt_ids: Iterable[UUID | str] | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> BatchClaim:
    """Take up to `limit` due receipts (of `receipt_ids`, if given) for one read each.

    One `FOR UPDATE SKIP LOCKED` statement: receipts another worker holds are
    passed over, never waited for. Each taken receipt gets a lease and its
    attempt number bumped, as `receipt_reconcile_claim` does; one whose
    attempts are used up goes to a person instead.
    """
    now = now or timezone.now()
    condition = receipts_claimable(now) if force else receipts_due(now)
    lease = now + timedelta(seconds=settings.RECONCILE_LEASE_SECONDS)
    with transaction.atomic():
        query = (
            Receipt.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant", "platform")
            .filter(condition)
        )
        if receipt_ids is not None:
            query = query.filter(pk__in=[str(receipt_id) for receipt_id in receipt_ids])
        receipts = list(query.order_by("next_reconcile_at", "pk")[: max(0, limit)])
        _moves_apply(
            [
                _Move(receipt, _S.RECONCILING, "reconciliation_started")
                for receipt in receipts
                if receipt.state == _S.OUTCOME_UNKNOWN
            ],
            actor=worker,
            now=now,
        )
        exhausted = [r for r in receipts if r.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS]
        # Every attempt was claimed and none settled it: its worker died or
        # its read never finished. A poison receipt stops here.
        _moves_apply(
            [_Move(receipt, _S.MANUAL_REVIEW, "attempts_exhausted") for receipt in exhausted],
            actor=worker,
            now=now,
        )
        taken = [r for r in receipts if r.reconcile_attempts < settings.RECONCILE_MAX_ATTEMPTS]
        for receipt in taken:
            receipt.reconcile_attempts += 1
            receipt.reconcile_lease_expires_at = lease
            receipt.updated_at = now
        Receipt.objects.filter(pk__in=[receipt.pk for receipt in taken]).update(
            reconcile_attempts=F("reconcile_attempts") + 1,
            reconcile_lease_expires_at=lease,
            updated_at=now,
        )
    claims = [reconcile_claim_of(receipt) for receipt in taken]
    return BatchClaim(claims=claims, handled=[receipt.pk for receipt in receipts])


def receipts_reconcile_settle_batch(
    *,
    results: list[tuple[ReconcileClaim, LookupResult | None]],
    worker: Actor,
    report: ReconcilePass,
    now: datetime | None = None,
) -> None:
    """Record every read of a batch and move each receipt accordingly, in one transaction.

    A claim whose receipt was claimed again since (another attempt number) or
    settled is fenced off and changes nothing. A claim that was never read
    (`None`: its read could not start in time) is handed back unspent.
    """
    now = now or timezone.now()
    if not results:
        return
    with transaction.atomic():
        # Locked in one order, so two workers settling overlapping batches
        # (one of them stale) cannot deadlock.
        receipts = {
            receipt.pk: receipt
            for receipt in Receipt.objects.select_for_update(of=("self",))
            .select_related("tenant")
            .filter(pk__in=[claim.receipt_id for claim, _ in results])
            .order_by("pk")
        }
        reads: list[ReconciliationRead] = []
        later: list[Receipt] = []
        released: list[Receipt] = []
        moves: list[_Move] = []
        for claim, result in results:
            receipt = receipts.get(claim.receipt_id)
            # A missing receipt is fenced out; the second test says so to mypy.
            if is_fenced_out(receipt, claim) or receipt is None:
                report.fenced += 1
                continue
            if result is None:
                # Nobody read under this attempt number, so giving it back
                # cannot let two reads share one fence.
                receipt.reconcile_attempts -= 1
                receipt.reconcile_lease_expires_at = None
                receipt.next_reconcile_at = now
                receipt.updated_at = now
                released.append(receipt)
                report.unprocessed.append(str(receipt.pk))
                continue
            reads.append(
                read_record(receipt=receipt, claim=claim, result=result, worker=worker, now=now)
            )
            to, reason = receipt_settlement(receipt, result, now)
            if to is None:
                defer_after_failed_read(receipt=receipt, claim=claim, result=result, now=now)
                later.append(receipt)
                continue
            moves.append(
                _Move(
                    receipt,
                    to,
                    reason,
                    evidence=result.evidence,
                    external_id=result.external_id if to == _S.SUCCEEDED else "",
                    error_code=result.error_code,
                )
            )
        ReconciliationRead.objects.bulk_create(reads)
        _rows_update(
            later, ["next_reconcile_at", "reconcile_lease_expires_at", "error_code", "updated_at"]
        )
        _rows_update(
            released,
            ["reconcile_attempts", "reconcile_lease_expires_at", "next_reconcile_at", "updated_at"],
        )
        _moves_apply(moves, actor=worker, now=now)
        for receipt in (*later, *(move.receipt for move in moves)):
            report.states[receipt.state] += 1


# -- concurrent reads -----------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _read_pool(size: int) -> ThreadPoolExecutor:
    """One pool of read threads per process (and per configured size)."""
    return ThreadPoolExecutor(max_workers=size, thread_name_prefix="reconcile-read")


class _PlatformGate:
    """Per process and platform host: bounded reads in flight, paced read starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[tuple[str, int], threading.BoundedSemaphore] = {}
        self._next_start: dict[str, float] = {}

    def _slot(self, host: str) -> threading.BoundedSemaphore:
        size = max(1, settings.RECONCILE_PLATFORM_READS_IN_FLIGHT)
        with self._lock:
            return self._slots.setdefault((host, size), threading.BoundedSemaphore(size))

    def _pace(self, host: str, start_by: float) -> bool:
        """Wait for this host's next start time; False if it falls after `start_by`."""
        rate = settings.RECONCILE_PLATFORM_READS_PER_SECOND
        if rate <= 0:
            return True
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_start.get(host, 0.0))
            if start > start_by:
                return False
            self._next_start[host] = start + 1 / rate
        if start > now:
            time.sleep(start - now)
        return True

    @contextmanager
    def enter(self, host: str, start_by: float) -> Iterator[bool]:
        slot = self._slot(host)
        if not slot.acquire(timeout=max(0.0, start_by - time.monotonic())):
            yield False
            return
        try:
            yield self._pace(host, start_by)
        finally:
            slot.release()


_gate = _PlatformGate()


def _forget_after_fork() -> None:
    # Threads and locks do not survive fork(); a pool child builds its own.
    global _gate
    _read_pool.cache_clear()
    _gate = _PlatformGate()


os.register_at_fork(after_in_child=_forget_after_fork)


def _platform_host(claim: ReconcileClaim) -> str | None:
    platform = claim.lookup.platform
    if platform is None:
        return None
    return urlsplit(platform.base_url).netloc.lower()


def _read_in_time(claim: ReconcileClaim, start_by: float) -> LookupResult | None:
    """Read for one claim, or None if the platform's limits keep it from starting in time."""
    host = _platform_host(claim)
    if host is None:
        # No platform, no network: the adapter answers from the receipt alone.
        return receipt_read(claim)
    # Build the process's HTTP client before taking a paced start: built after it (tens of
    # ms, under the GIL, by every read thread of a new process at once), it would hold the
    # first reads back and send them to the platform together, faster than its rate.
    lookup_client()
    with _gate.enter(host, start_by) as admitted:
        if not admitted:
            return None
        return receipt_read(claim)


def receipts_reconcile_batch(
    *,
    worker: Actor,
    receipt_ids: Iterable[UUID | str] | None = None,
    limit: int | None = None,
    deadline: float | None = None,
    force: bool = False,
) -> ReconcilePass:
    """Claim, read and settle due receipts (of `receipt_ids`, or any) batch by batch.

    At most `RECONCILE_READS_IN_FLIGHT` reads are in flight, in two batches of
    half that: while one batch's reads are out, the other is settled and the
    next one claimed, so the worker's database work overlaps its waiting.
    Stops when nothing is left to claim, after `limit` claims, or at `deadline`
    (time.monotonic()); with `receipt_ids`, the ids it did not reach are
    reported as unprocessed.
    """
    report = ReconcilePass()
    in_flight = max(1, settings.RECONCILE_READS_IN_FLIGHT)
    batch_size = max(1, in_flight // 2)
    pool = _read_pool(in_flight)
    pending = None if receipt_ids is None else [str(receipt_id) for receipt_id in receipt_ids]
    remaining = limit
    out: deque[list[tuple[ReconcileClaim, Future[LookupResult | None]]]] = deque()
    exhausted = False
    while True:
        while not exhausted and (len(out) + 1) * batch_size <= in_flight:
            if (pending is not None and not pending) or (remaining is not None and remaining <= 0):
                exhausted = True
            elif deadline is not None and time.monotonic() >= deadline:
                report.unprocessed.extend(pending or [])
                exhausted = True
            if exhausted:
                break
            size = batch_size if remaining is None else min(batch_size, remaining)
            claimed_at = time.monotonic()
            batch = receipts_reconcile_claim_batch(
                worker=worker, limit=size, receipt_ids=pending, force=force
            )
            report.skipped += len(batch.handled) - len(batch.claims)
            if pending is not None:
                # Fewer than asked for: the rest is not due, leased elsewhere or
                # settled, and the one-at-a-time path would skip it the same way.
                handled = {str(receipt_id) for receipt_id in batch.handled}
                if len(batch.handled) < size:
                    report.skipped += len(pending) - len(handled)
                    pending = []
                else:
                    pending = [receipt_id for receipt_id in pending if receipt_id not in handled]
            if not batch.handled:
                exhausted = True
                break
            report.claimed += len(batch.claims)
            if remaining is not None:
                remaining -= len(batch.claims)
            # A read that cannot start early enough to finish inside the lease
            # is not started: its receipt goes back unspent.
            start_by = (
                claimed_at
                + settings.RECONCILE_LEASE_SECONDS
                - settings.RECONCILE_HTTP_TIMEOUT_SECONDS
                - _SETTLE_MARGIN_SECONDS
            )
            if batch.claims:
                out.append(
                    [(claim, pool.submit(_read_in_time, claim, start_by)) for claim in batch.claims]
                )
        if not out:
            break
        results = [(claim, future.result()) for claim, future in out.popleft()]
        receipts_reconcile_settle_batch(results=results, worker=worker, report=report)
        if all(result is None for _, result in results) and not exhausted:
            # The platforms' limits let nothing through in time: try later
            # rather than claim the same receipts again at once.
            report.unprocessed.extend(pending or [])
            exhausted = True
    return report
