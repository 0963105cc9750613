"""Approvals for impactful operations (docs/receipts.md, "Approvals").

An operation whose policy says `approval_required` is planned into
`awaiting_approval`: the agent may not submit it until a person other than the
one its token acts for approves the intent in the approvals queue. Approval
moves the receipt back to `planned`; a rejection settles it `rejected` with the
person's reason.
"""

from __future__ import annotations

from uuid import UUID

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.selectors import person_of
from common.problems import Problem
from memory.receipts.models.platforms import OperationPolicy
from memory.receipts.models.receipts import (
    Receipt,
    ReceiptState,
    ReceiptTransition,
    TransitionRole,
)
from memory.receipts.services.receipt_moves import receipt_locked, receipt_move

APPROVAL_REQUIRED = "approval_required"
APPROVER_IS_REQUESTER = "approver_is_requester"
# The reasons recorded on the transitions in and out of `awaiting_approval`.
APPROVAL_REQUESTED = "approval_requested"
APPROVED = "approved"


def approval_refused(receipt: Receipt) -> Problem:
    """The 409 an agent gets for submitting a receipt nobody has approved yet."""
    return Problem(
        APPROVAL_REQUIRED,
        f"`{receipt.operation}` needs a person's approval before it is submitted. The "
        "receipt waits in `awaiting_approval`; submit again once it is back in `planned`.",
        status_code=409,
        title="Approval required",
        receipt=str(receipt.pk),
        state=receipt.state,
    )


def receipt_was_approved(receipt: Receipt) -> bool:
    return ReceiptTransition.objects.filter(
        receipt=receipt,
        from_state=ReceiptState.AWAITING_APPROVAL,
        to_state=ReceiptState.PLANNED,
    ).exists()


def approval_request(receipt: Receipt) -> None:
    """Move a locked `planned` receipt into `awaiting_approval`, opening its approvals item.

    memdesk makes the move, applying the operation's policy: the agent's own moves
    (and the `allowed` lists it is shown) stay what they were.
    """
    receipt_move(
        receipt,
        to=ReceiptState.AWAITING_APPROVAL,
        actor=Actor.system(),
        now=timezone.now(),
        reason=APPROVAL_REQUESTED,
    )


def submit_needs_approval(
    receipt: Receipt, *, policy: OperationPolicy | None, role: str | None, to: str
) -> bool:
    """Whether the agent's move of this locked receipt to `to` must wait for a person."""
    if to != ReceiptState.SUBMITTED or role != TransitionRole.AGENT:
        return False
    if receipt.state == ReceiptState.AWAITING_APPROVAL:
        return True
    return (
        receipt.state == ReceiptState.PLANNED
        and policy is not None
        and policy.approval_required
        and not receipt_was_approved(receipt)
    )


def _requester_person(receipt: Receipt) -> str:
    """Who asked for the effect: the person the planning token acts for, or the planner."""
    if receipt.token_id is not None:
        token = str(receipt.token_id)
        return person_of(tenant=receipt.tenant, kind=ActorKind.AGENT, actor_id=token)
    entries = ReceiptTransition.objects.filter(receipt=receipt, from_state="")
    planned = entries.order_by("at", "pk").first()
    if planned is None:
        return ActorKind.SYSTEM.value
    return person_of(tenant=receipt.tenant, kind=planned.actor_kind, actor_id=planned.actor_id)


def receipt_approval_decide(
    *,
    tenant: Tenant,
    receipt_id: UUID | str,
    actor: Actor,
    approve: bool,
    reason: str,
    review_item_id: int | None = None,
) -> Receipt:
    """A person approves a waiting receipt (back to `planned`) or rejects it (`rejected`).

    The approver must be an accountable person other than the one the planning
    token acts for: an owner approving their own agent's effect is one pair of eyes.
    """
    reason = reason.strip()
    with transaction.atomic():
        receipt = receipt_locked(tenant=tenant, actor=actor, receipt_id=receipt_id)
        if actor.kind != ActorKind.USER:
            raise Problem(
                "role_required",
                "Only a signed-in person approves or rejects an effect; agent tokens never do.",
                status_code=403,
            )
        if actor.person == _requester_person(receipt):
            raise Problem(
                APPROVER_IS_REQUESTER,
                "The person an agent acts for cannot approve or reject its effect: another "
                "person decides.",
                status_code=409,
            )
        receipt_move(
            receipt,
            to=ReceiptState.PLANNED if approve else ReceiptState.REJECTED,
            actor=actor,
            now=timezone.now(),
            reason=" — ".join(part for part in (APPROVED if approve else "", reason) if part),
            verb="receipt.approved" if approve else "receipt.approval_rejected",
            deciding_review_item=review_item_id,
        )
    return receipt
