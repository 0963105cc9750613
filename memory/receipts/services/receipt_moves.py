"""The guarded move core of receipts: the one code path that changes a receipt's `state`.

A receipt moves only along `RECEIPT_TRANSITIONS`. `receipt_move` takes a locked row,
checks the table for the caller's role, and appends its `ReceiptTransition`
and an audit row in the same transaction, with the actor; a move into
`manual_review` or `awaiting_approval` opens a review item. Waking a reconciler
happens after commit.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.db import transaction

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.problems import InvalidTransition, Problem, not_found
from common.transitions import move_row
from memory.receipts.models.receipts import (
    RECEIPT_MACHINE,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    TransitionRole,
    allowed_receipt_targets,
)
from memory.receipts.selectors.receipts import reach
from reviews.models import Queue
from reviews.services import review_cancel_for_target, review_open

RECEIPT_TARGET_TYPE = "receipt"
# The states in which a receipt waits for a person, and the review queue each waits in.
WAITING_QUEUES: dict[str, str] = {
    ReceiptState.MANUAL_REVIEW: Queue.MANUAL_REVIEW,
    ReceiptState.AWAITING_APPROVAL: Queue.APPROVALS,
}
# Fields a transition may change; saved together so one move is one UPDATE.
MOVE_FIELDS = [
    "state",
    "external_id",
    "error_code",
    "submitted_at",
    "submit_lease_expires_at",
    "next_reconcile_at",
    "reconcile_lease_expires_at",
    "updated_at",
]


def transition_role(actor: Actor) -> str | None:
    """The state machine's role for `actor`; a person who is not an editor has none."""
    if actor.kind == ActorKind.AGENT:
        return TransitionRole.AGENT
    if actor.kind == ActorKind.SYSTEM:
        return TransitionRole.WORKER
    if actor.is_editor:
        return TransitionRole.EDITOR
    return None


def receipt_locked(*, tenant: Tenant, actor: Actor, receipt_id: UUID | str) -> Receipt:
    """The receipt, locked for a move by `actor`; `not_found` if `actor` does not reach it."""
    receipt = (
        Receipt.objects.select_for_update(of=("self",))
        .select_related("tenant")
        .filter(reach(actor), tenant=tenant, pk=receipt_id)
        .first()
    )
    if receipt is None:
        raise not_found("receipt")
    return receipt


def receipt_transition_append(
    receipt: Receipt,
    *,
    from_state: str,
    actor: Actor,
    at: datetime,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
) -> ReceiptTransition:
    return ReceiptTransition.objects.create(
        tenant_id=receipt.tenant_id,
        receipt=receipt,
        from_state=from_state,
        to_state=receipt.state,
        actor_kind=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label[:150],
        reason=reason[:500],
        evidence=evidence or {},
        attempt=receipt.reconcile_attempts,
        at=at,
    )


def reconciliation_enqueue_on_commit(receipt_ids: list[UUID]) -> None:
    # robust: the state change is committed whatever happens to the broker; if
    # the enqueue fails, the due-receipts sweep finds the work from the rows.
    transaction.on_commit(lambda: reconciliation_enqueue(receipt_ids=receipt_ids), robust=True)


def reconciliation_enqueue(*, receipt_ids: Iterable[UUID | str]) -> int:
    """Wake reconcilers for these receipts, one Celery task per chunk. Returns the chunks sent."""
    ids = [str(receipt_id) for receipt_id in receipt_ids]
    size = max(1, settings.RECONCILE_CHUNK_SIZE)
    chunks = [ids[start : start + size] for start in range(0, len(ids), size)]
    for chunk in chunks:
        # By name: the tasks module imports this one, never the other way round.
        current_app.signature(
            "memory.reconcile_receipts", args=[chunk], queue=settings.RECONCILE_QUEUE
        ).apply_async()
    return len(chunks)


def receipt_move(
    receipt: Receipt,
    *,
    to: str,
    actor: Actor,
    now: datetime,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
    external_id: str = "",
    error_code: str = "",
    submit_lease: timedelta | None = None,
    verb: str = "receipt.transitioned",
    deciding_review_item: int | None = None,
) -> ReceiptTransition:
    """Move a locked receipt one step, or raise. The only code that changes `state`."""
    role = transition_role(actor)
    allowed = allowed_receipt_targets(receipt.state, role)
    if role is None or to not in allowed:
        who = f"the {role}" if role else "this caller"
        raise InvalidTransition(
            f"A receipt in `{receipt.state}` cannot be moved to `{to}` by {who}.",
            allowed=allowed,
        )
    if role == TransitionRole.EDITOR and not reason.strip():
        raise Problem(
            "reason_required",
            "Settling a receipt by hand needs a reason.",
            errors={"reason": ["Say why."]},
        )
    if role == TransitionRole.EDITOR and to == ReceiptState.SUCCEEDED and not external_id:
        raise Problem(
            "external_id_required",
            "Marking a receipt succeeded by hand needs the platform's id for the effect.",
            errors={"external_id": ["Give the id the outside system assigned."]},
        )
    replaced_external_id = ""
    if external_id and receipt.external_id and external_id != receipt.external_id:
        # Only an editor may correct the id; the old one stays in the audit trail.
        if role == TransitionRole.EDITOR:
            replaced_external_id = receipt.external_id
        else:
            raise Problem(
                "external_id_conflict",
                f"This receipt already records the external id `{receipt.external_id}`.",
                status_code=409,
            )
    from_state = receipt.state
    receipt.updated_at = now
    if external_id:
        receipt.external_id = external_id
    if error_code:
        receipt.error_code = error_code[:100]
    if to == ReceiptState.SUBMITTED:
        receipt.submitted_at = now
        receipt.submit_lease_expires_at = now + (
            submit_lease or timedelta(seconds=settings.RECEIPT_SUBMIT_LEASE_SECONDS)
        )
    elif from_state == ReceiptState.SUBMITTED:
        receipt.submit_lease_expires_at = None
    if to == ReceiptState.OUTCOME_UNKNOWN:
        receipt.next_reconcile_at = now
    elif to != ReceiptState.RECONCILING:
        receipt.next_reconcile_at = None
        receipt.reconcile_lease_expires_at = None
    # A settlement by hand passes the database trigger only inside the editor's role,
    # which `move_row` takes for the machine's gated role.
    move_row(
        RECEIPT_MACHINE,
        receipt,
        to=to,
        by=role,
        tenant=receipt.tenant,
        actor=actor,
        changes={name: getattr(receipt, name) for name in MOVE_FIELDS if name != "state"},
    )
    transition = receipt_transition_append(
        receipt, from_state=from_state, actor=actor, at=now, reason=reason, evidence=evidence
    )
    audit_record(
        tenant=receipt.tenant,
        actor=actor,
        verb=verb,
        target_type=RECEIPT_TARGET_TYPE,
        target_id=receipt.pk,
        reason=reason,
        data={"from": from_state, "to": to, "transition": transition.pk}
        | ({"replaced_external_id": replaced_external_id} if replaced_external_id else {}),
    )
    waiting_queue = WAITING_QUEUES.get(to)
    if waiting_queue is not None:
        review_open(
            tenant=receipt.tenant,
            queue=waiting_queue,
            target_type=RECEIPT_TARGET_TYPE,
            target_id=receipt.pk,
            target_version=receipt.version(),
            topic=receipt.operation,
            agent_label=receipt.agent,
            reason_codes=[reason[:64]] if reason else [],
        )
    elif from_state in WAITING_QUEUES and deciding_review_item is None:
        # Settled outside the queue: nobody should decide it a second time there.
        review_cancel_for_target(
            tenant=receipt.tenant,
            target_type=RECEIPT_TARGET_TYPE,
            target_id=receipt.pk,
            queue=WAITING_QUEUES[from_state],
        )
    return transition
