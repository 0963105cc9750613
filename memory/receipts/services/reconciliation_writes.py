"""The set-based writes of a reconciliation batch: every receipt's new row values, its
reads and its transitions, each table written in one statement however many receipts
the batch settled."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import Field, JSONField, Model

from accounts.actors import Actor
from accounts.models import AuditEvent
from common.problems import InvalidTransition, Problem
from memory.receipts.models.receipts import (
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
    allowed_receipt_targets,
)
from memory.receipts.services.receipt_moves import (
    MOVE_FIELDS,
    RECEIPT_TARGET_TYPE,
    receipt_move,
    transition_role,
)

_S = ReceiptState
# Moves a worker makes many of at once and that touch nothing but the receipt,
# its transition and its audit row; they are written with bulk statements.
# Anything else (a move to manual_review opens a review item) goes through
# `receipt_move` one receipt at a time.
BULK_FROM = frozenset({_S.OUTCOME_UNKNOWN, _S.RECONCILING})
BULK_TO = frozenset({_S.RECONCILING, _S.SUCCEEDED, _S.SAFE_TO_RETRY})


@dataclass(frozen=True)
class BatchMove:
    receipt: Receipt
    to: str
    reason: str
    evidence: dict[str, Any] | None = None
    external_id: str = ""
    error_code: str = ""


def model_field(model: type[Model], name: str) -> Field[Any, Any]:
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{name} is not a column of {model._meta.db_table}")
    return field


@functools.lru_cache(maxsize=16)
def record_of(model: type[Model], names: tuple[str, ...]) -> tuple[tuple[str, ...], str, str]:
    """Attribute names, the quoted columns and the record definition `jsonb_to_recordset`
    reads `names` of `model` with (metadata only: computed once per process)."""
    fields = [model_field(model, name) for name in names]
    columns = ", ".join(f'"{field.column}"' for field in fields)
    types = [
        "jsonb" if isinstance(field, JSONField) else field.db_type(connection) for field in fields
    ]
    definition = ", ".join(
        f'"{field.column}" {kind}' for field, kind in zip(fields, types, strict=True)
    )
    return tuple(field.column for field in fields), columns, definition


def write_columns(
    model: type[Model], names: list[str], rows: Iterable[Iterable[Any]]
) -> tuple[str, str, list[Any]]:
    """`rows` of `names` as one `jsonb_to_recordset` of one JSON parameter: (columns, select,
    params).

    One parameter whatever the number of rows keeps the statement's text the same, and
    the rows are written by the C JSON encoder, not quoted value by value by the driver:
    Django's bulk_create and bulk_update compile a statement per call and quote every
    value, which cost more than the reads they record take to answer.
    """
    keys, columns, definition = record_of(model, tuple(names))
    # str() writes UUIDs and datetimes as PostgreSQL reads them (as claims_batch's inserts).
    payload = json.dumps([dict(zip(keys, row, strict=True)) for row in rows], default=str)
    # Identifiers and types come from the model's metadata; the rows are one parameter.
    select = f"SELECT {columns} FROM jsonb_to_recordset(%s::jsonb) AS v({definition})"  # noqa: S608
    return columns, select, [payload]


def rows_update(receipts: list[Receipt], fields: list[str]) -> None:
    """Write `fields` of each receipt as it is in memory, in one UPDATE."""
    if not receipts:
        return
    meta = Receipt._meta
    names = ["id", *fields]
    attnames = [model_field(Receipt, name).attname for name in names]
    _, select, params = write_columns(
        Receipt, names, ([getattr(r, attname) for attname in attnames] for r in receipts)
    )
    pk = meta.pk.column
    assignments = ", ".join(
        f'"{c}" = v."{c}"' for c in (model_field(Receipt, n).column for n in fields)
    )
    # Identifiers come from the model's metadata; every value is a parameter.
    sql = (
        f'UPDATE "{meta.db_table}" AS r SET {assignments} '  # noqa: S608
        f'FROM ({select}) AS v WHERE r."{pk}" = v."{pk}"'
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


# Every column the worker changes on a receipt: one UPDATE writes them all for a step.
_ROW_FIELDS = [*MOVE_FIELDS, "reconcile_attempts"]


class BatchWrites:
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
        self.moves: list[tuple[BatchMove, str, int]] = []
        # Moves outside the bulk set, made by `receipt_move` after the reads are recorded.
        self.single: list[BatchMove] = []
        self.reads: list[ReconciliationRead] = []

    def changed(self, receipt: Receipt) -> None:
        self.receipts[receipt.pk] = receipt

    def move(self, move: BatchMove) -> None:
        receipt = move.receipt
        if receipt.state not in BULK_FROM or move.to not in BULK_TO:
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
        rows_update(list(self.receipts.values()), _ROW_FIELDS)
        if self.reads:
            reads_insert(self.reads)
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
            transitions_insert(self.moves, actor=actor, now=now)


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


def reads_insert(reads: list[ReconciliationRead]) -> None:
    meta = ReconciliationRead._meta
    attnames = [model_field(ReconciliationRead, name).attname for name in _READ_FIELDS]
    columns, select, params = write_columns(
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


def transitions_insert(
    moves: list[tuple[BatchMove, str, int]], *, actor: Actor, now: datetime
) -> None:
    """Each move's transition and its audit row (naming the transition), in one statement.

    The rows are those `receipt_move` writes one at a time; a receipt makes at
    most one bulk move per step, so its id pairs each transition with its audit row.
    """
    transitions = ReceiptTransition._meta
    audit = AuditEvent._meta
    columns, select, params = write_columns(
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
        f'"{model_field(AuditEvent, name).column}"'
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
