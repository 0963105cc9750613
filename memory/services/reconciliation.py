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
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, JSONField, Model
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
from memory.reconcilers.http import lookup_clients
from memory.reconcilers.urls import URLRefused, parse_platform_url
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
# Longest a finished read waits for others to be settled with it: reads start early
# enough by this much more, so grouping never runs a claim past its lease.
_SETTLE_HOLD_SECONDS = 0.1


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


def _field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{name} is not a column of {model._meta.db_table}")
    return field


@functools.lru_cache(maxsize=16)
def _record_of(model: type[Model], names: tuple[str, ...]) -> tuple[tuple[str, ...], str, str]:
    """Attribute names, the quoted columns and the record definition `jsonb_to_recordset`
    reads `names` of `model` with (metadata only: computed once per process)."""
    fields = [_field(model, name) for name in names]
    columns = ", ".join(f'"{field.column}"' for field in fields)
    types = [
        "jsonb" if isinstance(field, JSONField) else field.db_type(connection) for field in fields
    ]
    definition = ", ".join(
        f'"{field.column}" {kind}' for field, kind in zip(fields, types, strict=True)
    )
    return tuple(field.column for field in fields), columns, definition


def _columns(
    model: type[Model], names: list[str], rows: Iterable[Iterable[Any]]
) -> tuple[str, str, list[Any]]:
    """`rows` of `names` as one `jsonb_to_recordset` of one JSON parameter: (columns, select,
    params).

    One parameter whatever the number of rows keeps the statement's text the same, and
    the rows are written by the C JSON encoder, not quoted value by value by the driver:
    Django's bulk_create and bulk_update compile a statement per call and quote every
    value, which cost more than the reads they record take to answer.
    """
    keys, columns, definition = _record_of(model, tuple(names))
    # str() writes UUIDs and datetimes as PostgreSQL reads them (as claims_batch's inserts).
    payload = json.dumps([dict(zip(keys, row, strict=True)) for row in rows], default=str)
    # Identifiers and types come from the model's metadata; the rows are one parameter.
    select = f"SELECT {columns} FROM jsonb_to_recordset(%s::jsonb) AS v({definition})"  # noqa: S608
    return columns, select, [payload]


def _rows_update(receipts: list[Receipt], fields: list[str]) -> None:
    """Write `fields` of each receipt as it is in memory, in one UPDATE."""
    if not receipts:
        return
    meta = Receipt._meta
    names = ["id", *fields]
    attnames = [_field(Receipt, name).attname for name in names]
    _, select, params = _columns(
        Receipt, names, ([getattr(r, attname) for attname in attnames] for r in receipts)
    )
    pk = meta.pk.column
    assignments = ", ".join(f'"{c}" = v."{c}"' for c in (_field(Receipt, n).column for n in fields))
    # Identifiers come from the model's metadata; every value is a parameter.
    sql = (
        f'UPDATE "{meta.db_table}" AS r SET {assignments} '  # noqa: S608
        f'FROM ({select}) AS v WHERE r."{pk}" = v."{pk}"'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


# Every column the worker changes on a receipt: one UPDATE writes them all for a step.
_ROW_FIELDS = [*MOVE_FIELDS, "reconcile_attempts"]


class _Writes:
    """What one step changes, collected while its rows are locked and written together.

    Receipts are written as they are in memory, so only rows this transaction
    locked and read may be added. Moves are checked against the transition
    table exactly as `receipt_move` checks them; a move outside the bulk set
    (a move to manual_review opens a review item) is handed to `receipt_move`
    at once, and its receipt is left out of the bulk UPDATE it already made.
    """

    def __init__(self, *, actor: Actor, now: datetime) -> None:
        self.actor = actor
        self.now = now
        self.role = transition_role(actor)
        self.receipts: dict[UUID, Receipt] = {}
        # Bulk moves with the state they left and the attempt the receipt was at.
        self.moves: list[tuple[_Move, str, int]] = []
        # Moves outside the bulk set, made by `receipt_move` after the reads are recorded.
        self.single: list[_Move] = []
        self.reads: list[ReconciliationRead] = []

    def changed(self, receipt: Receipt) -> None:
        self.receipts[receipt.pk] = receipt

    def move(self, move: _Move) -> None:
        receipt = move.receipt
        if receipt.state not in _BULK_FROM or move.to not in _BULK_TO:
            # Made by the one code path for every other move, which saves the row itself.
            self.receipts.pop(receipt.pk, None)
            self.single.append(move)
            return
        allowed = allowed_receipt_targets(receipt.state, self.role)
        if move.to not in allowed:
            raise InvalidTransition(
                f"A receipt in `{receipt.state}` cannot be moved to `{move.to}` by the "
                f"{self.role}.",
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
        receipt.updated_at = self.now
        if move.external_id:
            receipt.external_id = move.external_id
        if move.error_code:
            receipt.error_code = move.error_code[:100]
        if move.to != _S.RECONCILING:
            receipt.next_reconcile_at = None
            receipt.reconcile_lease_expires_at = None
        self.moves.append((move, from_state, receipt.reconcile_attempts))
        self.changed(receipt)

    def write(self) -> None:
        """The receipts in one UPDATE, the reads in one INSERT, the transitions and their
        audit rows in one more."""
        actor, now = self.actor, self.now
        _rows_update(list(self.receipts.values()), _ROW_FIELDS)
        if self.reads:
            _reads_insert(self.reads)
        for move in self.single:
            receipt_move(
                move.receipt,
                to=move.to,
                actor=actor,
                now=now,
                reason=move.reason,
                evidence=move.evidence,
                external_id=move.external_id,
                error_code=move.error_code,
            )
        if self.moves:
            _transitions_insert(self.moves, actor=actor, now=now)


_READ_FIELDS = [
    "tenant",
    "receipt",
    "attempt",
    "adapter",
    "outcome",
    "error_code",
    "external_id",
    "evidence",
    "worker",
    "at",
]


def _reads_insert(reads: list[ReconciliationRead]) -> None:
    meta = ReconciliationRead._meta
    attnames = [_field(ReconciliationRead, name).attname for name in _READ_FIELDS]
    columns, select, params = _columns(
        ReconciliationRead,
        _READ_FIELDS,
        ([getattr(read, attname) for attname in attnames] for read in reads),
    )
    with connection.cursor() as cursor:
        cursor.execute(f'INSERT INTO "{meta.db_table}" ({columns}) {select}', params)


_TRANSITION_FIELDS = [
    "tenant",
    "receipt",
    "from_state",
    "to_state",
    "actor_kind",
    "actor_id",
    "actor_label",
    "reason",
    "evidence",
    "attempt",
    "at",
]


def _transitions_insert(
    moves: list[tuple[_Move, str, int]], *, actor: Actor, now: datetime
) -> None:
    """Each move's transition and its audit row (naming the transition), in one statement.

    The rows are those `receipt_move` writes one at a time; a receipt makes at
    most one bulk move per step, so its id pairs each transition with its audit row.
    """
    transitions = ReceiptTransition._meta
    audit = AuditEvent._meta
    columns, select, params = _columns(
        ReceiptTransition,
        _TRANSITION_FIELDS,
        (
            [
                move.receipt.tenant_id,
                move.receipt.pk,
                from_state,
                move.to,
                actor.kind,
                actor.id,
                actor.label[:150],
                move.reason[:500],
                move.evidence or {},
                attempt,
                now,
            ]
            for move, from_state, attempt in moves
        ),
    )
    audit_columns = ", ".join(
        f'"{_field(AuditEvent, name).column}"'
        for name in (
            "tenant",
            "actor_kind",
            "actor_id",
            "actor_label",
            "verb",
            "target_type",
            "target_id",
            "reason",
            "data",
            "at",
        )
    )
    # Identifiers come from the models' metadata; every value is a parameter.
    sql = (
        f'WITH t AS (INSERT INTO "{transitions.db_table}" ({columns}) {select} '  # noqa: S608
        "RETURNING id, tenant_id, receipt_id, from_state, to_state, reason, at) "
        f'INSERT INTO "{audit.db_table}" ({audit_columns}) '
        "SELECT t.tenant_id, %s, %s, %s, %s, %s, t.receipt_id::text, t.reason, "
        "jsonb_build_object('from', t.from_state, 'to', t.to_state, 'transition', t.id), t.at "
        "FROM t ORDER BY t.id"
    )
    params += [actor.kind, actor.id, actor.label, "receipt.transitioned", RECEIPT_TARGET_TYPE]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _settle(
    writes: _Writes,
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
                _Move(
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
    writes: _Writes,
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
            writes.move(_Move(receipt, _S.MANUAL_REVIEW, "attempts_exhausted"))
            continue
        # Moved before the attempt is counted, as `receipt_reconcile_claim` does: the
        # transition records the attempt the receipt was at.
        if receipt.state == _S.OUTCOME_UNKNOWN:
            writes.move(_Move(receipt, _S.RECONCILING, "reconciliation_started"))
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
    writes = _Writes(actor=worker, now=now)
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
