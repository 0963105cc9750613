"""Reconciliation in batches: claim K receipts in one statement, read them at once, settle together.

The one-at-a-time path (`receipts_reconcile` in receipt_reads.py) waits for each
read before claiming the next receipt, so a worker spends its time waiting on
the network. Here a worker claims due receipts with one
`SELECT … FOR UPDATE SKIP LOCKED`, reads them concurrently on a per-process
thread pool (`RECONCILE_READS_IN_FLIGHT` reads in flight, and per platform
host at most `RECONCILE_PLATFORM_READS_IN_FLIGHT` open and
`RECONCILE_PLATFORM_READS_PER_SECOND` starts), and in one transaction settles
the reads that have finished and claims the next receipts. The window of
reads is refilled continuously, not in waves: claims wait in the pool's queue
behind the reads in flight, so a read thread never waits for this one to
settle and claim.

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
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memory.receipts.models.receipts import Receipt, ReceiptState
from memory.receipts.reconcilers import LookupResult
from memory.receipts.reconcilers.http import lookup_clients
from memory.receipts.reconcilers.urls import URLRefused, parse_platform_url
from memory.receipts.services.receipt_moves import receipt_move
from memory.receipts.services.receipt_reads import (
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
from memory.receipts.services.reconciliation_writes import BatchMove, BatchWrites

logger = logging.getLogger(__name__)

_S = ReceiptState
# Time kept back from a claim's lease for settling after the last read.
_SETTLE_MARGIN_SECONDS = 0.5
# Longest a finished read waits for others to be settled with it: reads start early
# enough by this much more, so grouping never runs a claim past its lease.
_SETTLE_HOLD_SECONDS = 0.1


@dataclass(frozen=True)
class BatchClaim:
    """What one claiming statement took: claims to read, and every receipt it locked."""

    claims: list[ReconcileClaim]
    # Taken for a read, or sent to a person because its attempts were used up.
    handled: list[UUID]


def _settle(
    writes: BatchWrites,
    results: list[tuple[ReconcileClaim, LookupResult | None]],
    *,
    worker: Actor,
    report: ReconcilePass,
) -> list[Receipt]:
    """Record each read and decide each receipt's move; the writes wait in `writes`.

    Returns the receipts read, whose state the report counts once written.
    """
    now = writes.now
    # Locked in one order, so two workers settling overlapping batches
    # (one of them stale) cannot deadlock.
    receipts = {
        receipt.pk: receipt
        for receipt in Receipt.objects.select_for_update(of=("self",))
        .select_related("tenant", "platform")
        .filter(pk__in=[claim.receipt_id for claim, _ in results])
        .order_by("pk")
    }
    read: list[Receipt] = []
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
            writes.changed(receipt)
            report.unprocessed.append(str(receipt.pk))
            continue
        writes.reads.append(
            read_record(receipt=receipt, claim=claim, result=result, worker=worker, now=now)
        )
        to, reason = receipt_settlement(receipt, result, now)
        if to is None:
            defer_after_failed_read(
                receipt=receipt, claim=claim, result=result, reason=reason, now=now
            )
            writes.changed(receipt)
        else:
            writes.move(
                BatchMove(
                    receipt,
                    to,
                    reason,
                    evidence=result.evidence,
                    external_id=result.external_id if to == _S.SUCCEEDED else "",
                    error_code=result.error_code,
                )
            )
        read.append(receipt)
    return read


def _claim(
    writes: BatchWrites,
    *,
    limit: int,
    receipt_ids: list[str] | None,
    force: bool,
    settling: list[UUID],
) -> BatchClaim:
    """Take up to `limit` due receipts for one read each; the writes wait in `writes`."""
    now = writes.now
    condition = receipts_claimable(now) if force else receipts_due(now)
    query = (
        Receipt.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("tenant", "platform")
        .filter(condition)
    )
    if receipt_ids is not None:
        query = query.filter(pk__in=receipt_ids)
    if settling:
        # Settled in this very transaction: its row still shows the old lease.
        query = query.exclude(pk__in=settling)
    receipts = list(query.order_by("next_reconcile_at", "pk")[: max(0, limit)])
    lease = now + timedelta(seconds=settings.RECONCILE_LEASE_SECONDS)
    taken: list[Receipt] = []
    for receipt in receipts:
        if receipt.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS:
            # Every attempt was claimed and none settled it: its worker died or
            # its read never finished. A poison receipt stops here, written at
            # once and in order by `receipt_move`.
            if receipt.state == _S.OUTCOME_UNKNOWN:
                receipt_move(
                    receipt,
                    to=_S.RECONCILING,
                    actor=writes.actor,
                    now=now,
                    reason="reconciliation_started",
                )
            writes.move(BatchMove(receipt, _S.MANUAL_REVIEW, "attempts_exhausted"))
            continue
        # Moved before the attempt is counted, as `receipt_reconcile_claim` does: the
        # transition records the attempt the receipt was at.
        if receipt.state == _S.OUTCOME_UNKNOWN:
            writes.move(BatchMove(receipt, _S.RECONCILING, "reconciliation_started"))
        receipt.reconcile_attempts += 1
        receipt.reconcile_lease_expires_at = lease
        receipt.updated_at = now
        writes.changed(receipt)
        taken.append(receipt)
    return BatchClaim(
        claims=[reconcile_claim_of(receipt) for receipt in taken],
        handled=[receipt.pk for receipt in receipts],
    )


def receipts_reconcile_step(
    *,
    worker: Actor,
    results: list[tuple[ReconcileClaim, LookupResult | None]],
    report: ReconcilePass,
    claim: int = 0,
    receipt_ids: Iterable[UUID | str] | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> BatchClaim:
    """Settle finished reads and claim up to `claim` due receipts (of `receipt_ids`, if given),
    in one transaction.

    Settling: a claim whose receipt was claimed again since (another attempt
    number) or settled is fenced off and changes nothing; a claim that was
    never read (`None`: its read could not start in time) is handed back
    unspent. Claiming: one `FOR UPDATE SKIP LOCKED` statement, so receipts
    another worker holds are passed over, never waited for; each taken receipt
    gets a lease and its attempt number bumped, as `receipt_reconcile_claim`
    does; one whose attempts are used up goes to a person instead.
    """
    now = now or timezone.now()
    ids = None if receipt_ids is None else [str(receipt_id) for receipt_id in receipt_ids]
    writes = BatchWrites(actor=worker, now=now)
    batch = BatchClaim(claims=[], handled=[])
    read: list[Receipt] = []
    with transaction.atomic():
        if results:
            read = _settle(writes, results, worker=worker, report=report)
        if claim > 0:
            batch = _claim(
                writes,
                limit=claim,
                receipt_ids=ids,
                force=force,
                settling=[c.receipt_id for c, _ in results],
            )
        writes.write()
    for receipt in read:
        report.states[receipt.state] += 1
    return batch


def receipts_reconcile_claim_batch(
    *,
    worker: Actor,
    limit: int,
    receipt_ids: Iterable[UUID | str] | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> BatchClaim:
    """Take up to `limit` due receipts (of `receipt_ids`, if given) for one read each."""
    return receipts_reconcile_step(
        worker=worker,
        results=[],
        report=ReconcilePass(),
        claim=limit,
        receipt_ids=receipt_ids,
        force=force,
        now=now,
    )


def receipts_reconcile_settle_batch(
    *,
    results: list[tuple[ReconcileClaim, LookupResult | None]],
    worker: Actor,
    report: ReconcilePass,
    now: datetime | None = None,
) -> None:
    """Record every read of a batch and move each receipt accordingly, in one transaction."""
    receipts_reconcile_step(worker=worker, results=results, report=report, now=now)


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


def forget_read_threads() -> None:
    """Start this process's read threads and platform limits afresh.

    Threads and locks do not survive fork(), so a pool child builds its own; tests call
    it too, so that one test's reads never queue behind another's.
    """
    global _gate
    _read_pool.cache_clear()
    _gate = _PlatformGate()


os.register_at_fork(after_in_child=forget_read_threads)


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
    # Build the process's HTTP client for this host before taking a paced start: built
    # after it (under the GIL, while every read thread of a new process starts at once), it
    # would hold the first reads back and send them to the platform together, faster
    # than its rate.
    platform = claim.lookup.platform
    if platform is not None:
        try:
            base = parse_platform_url(platform.base_url)
        except URLRefused:
            pass  # the read refuses it without connecting
        else:
            lookup_clients().for_host(base.scheme, base.host_header)
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
    """Claim, read and settle due receipts (of `receipt_ids`, or any) until none is left.

    `RECONCILE_READS_IN_FLIGHT` read threads stay busy: the worker keeps as many
    claims again queued behind the reads, so a thread that finishes a read
    starts the next one at once instead of waiting for the slowest read of a
    wave, and the queue outlasts the transaction that refills it. Meanwhile
    this thread collects finished reads and, once half as many as there are
    read threads have finished (or none is left in flight, or the first has
    waited `_SETTLE_HOLD_SECONDS`), settles them in one
    transaction that also claims as many due receipts as the queue has room
    for (when it has room for half the reads in flight). Stops when
    nothing is left to claim, after `limit` claims, or at `deadline`
    (time.monotonic()); with `receipt_ids`, the ids it did not reach are
    reported as unprocessed.
    """
    report = ReconcilePass()
    in_flight = max(1, settings.RECONCILE_READS_IN_FLIGHT)
    refill = max(1, in_flight // 2)
    # Reads in flight plus as many queued: a queue of only `refill` claims ran dry
    # while the transaction refilling it ran, leaving threads idle.
    window = 2 * in_flight
    pool = _read_pool(in_flight)
    pending = None if receipt_ids is None else [str(receipt_id) for receipt_id in receipt_ids]
    remaining = limit
    out: dict[Future[LookupResult | None], ReconcileClaim] = {}
    results: list[tuple[ReconcileClaim, LookupResult | None]] = []
    held_since = 0.0  # when the oldest finished read in `results` came in
    exhausted = False
    while True:
        room = window - len(out)
        if not exhausted and room >= refill:
            if (pending is not None and not pending) or (remaining is not None and remaining <= 0):
                exhausted = True
            elif deadline is not None and time.monotonic() >= deadline:
                report.unprocessed.extend(pending or [])
                exhausted = True
        size = 0
        if not exhausted and room >= refill:
            size = room if remaining is None else min(room, remaining)
        # Finished reads wait to be settled in groups: each transaction costs the same few
        # statements whatever it holds, and the queued claims keep the threads reading.
        settle = bool(results) and (
            len(results) >= refill
            or not out
            or time.monotonic() - held_since >= _SETTLE_HOLD_SECONDS
        )
        if settle or size:
            claimed_at = time.monotonic()
            batch = receipts_reconcile_step(
                worker=worker,
                results=results,
                report=report,
                claim=size,
                receipt_ids=pending,
                force=force,
            )
            if results and all(result is None for _, result in results) and not exhausted:
                # The platforms' limits let nothing through in time: try later
                # rather than keep claiming receipts that cannot be read.
                report.unprocessed.extend(pending or [])
                exhausted = True
            results = []
            if size:
                exhausted = exhausted or not batch.handled
                pending = _claimed_off(pending, batch, size, report)
                report.claimed += len(batch.claims)
                if remaining is not None:
                    remaining -= len(batch.claims)
                # A read that cannot start early enough to finish inside the
                # lease is not started: its receipt goes back unspent.
                start_by = (
                    claimed_at
                    + settings.RECONCILE_LEASE_SECONDS
                    - settings.RECONCILE_HTTP_TIMEOUT_SECONDS
                    - _SETTLE_MARGIN_SECONDS
                    - _SETTLE_HOLD_SECONDS
                )
                for claim in batch.claims:
                    out[pool.submit(_read_in_time, claim, start_by)] = claim
        if not out:
            break
        hold = None
        if results:
            hold = max(0.0, held_since + _SETTLE_HOLD_SECONDS - time.monotonic())
        finished, _ = wait(out, timeout=hold, return_when=FIRST_COMPLETED)
        if finished and not results:
            held_since = time.monotonic()
        results += [(out.pop(future), future.result()) for future in finished]
    return report


def _claimed_off(
    pending: list[str] | None, batch: BatchClaim, asked: int, report: ReconcilePass
) -> list[str] | None:
    """The ids still to claim after `batch` (None: any due receipt)."""
    report.skipped += len(batch.handled) - len(batch.claims)
    if pending is None:
        return None
    handled = {str(receipt_id) for receipt_id in batch.handled}
    if len(batch.handled) < asked:
        # Fewer than asked for: the rest is not due, leased elsewhere or
        # settled, and the one-at-a-time path would skip it the same way.
        report.skipped += len(pending) - len(handled)
        return []
    return [receipt_id for receipt_id in pending if receipt_id not in handled]
