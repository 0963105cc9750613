"""The receipt queues: manual_review (an editor settles a receipt reconciliation could not)
and approvals (a person approves an impactful operation's intent before it is submitted)."""

from __future__ import annotations

from rest_framework import serializers

from memory.receipts.models.receipts import ReceiptState
from memory.receipts.presenters import ApprovalPresenter, ReceiptPresenter
from memory.receipts.selectors.receipts import receipt_get
from memory.receipts.services.approvals import receipt_approval_decide
from memory.receipts.services.receipts import MANUAL_VERDICTS, receipt_resolve_manual
from reviews.models import Queue, ReviewItem
from reviews.registry import OTHER_REASON, DecisionInput, QueuePolicy, register_queue

# What the editor checked on the outside system before settling the receipt.
RECEIPT_REASONS = (
    ("verified", "Checked on the outside system"),
    ("found_by_key", "Found there by its idempotency key"),
    ("not_found", "Not there (looked it up)"),
    ("platform_refused", "The outside system refused it"),
    ("confirmed_by_owner", "Confirmed by the system's owner"),
    OTHER_REASON,
)


class ReceiptSettlement(serializers.Serializer):
    # `succeeded`: the platform's id of the effect (receipt_resolve_manual insists).
    external_id = serializers.CharField(required=False, allow_blank=True, max_length=255)
    # What was checked, kept on the receipt's transition.
    evidence = serializers.DictField(required=False)


class ManualReviewDecisions:
    def current_version(self, *, item: ReviewItem) -> str:
        receipt = receipt_get(tenant=item.tenant, receipt_id=item.target_id)
        return receipt.version() if receipt is not None else "missing"

    def apply(self, decision: DecisionInput) -> None:
        receipt_resolve_manual(
            tenant=decision.item.tenant,
            receipt_id=decision.item.target_id,
            actor=decision.actor,
            verdict=decision.verdict,
            reason=" — ".join(
                part for part in (decision.reason_code, decision.note.strip()) if part
            ),
            external_id=str(decision.payload.get("external_id") or ""),
            evidence=decision.payload.get("evidence") or {},
            review_item_id=decision.item.pk,
        )


APPROVE, REJECT = "approve", "reject"
APPROVAL_REASONS = (
    ("intent_checked", "The intent is what should happen"),
    ("wrong_target", "Wrong target"),
    ("not_wanted", "This should not happen"),
    OTHER_REASON,
)


class ApprovalDecisions:
    def current_version(self, *, item: ReviewItem) -> str:
        receipt = receipt_get(tenant=item.tenant, receipt_id=item.target_id)
        return receipt.version() if receipt is not None else "missing"

    def apply(self, decision: DecisionInput) -> None:
        receipt_approval_decide(
            tenant=decision.item.tenant,
            receipt_id=decision.item.target_id,
            actor=decision.actor,
            approve=decision.verdict == APPROVE,
            reason=" — ".join(
                part for part in (decision.reason_code, decision.note.strip()) if part
            ),
            review_item_id=decision.item.pk,
        )


def register() -> None:
    """Register the receipt queues' decision handlers."""
    register_queue(
        Queue.APPROVALS,
        QueuePolicy(
            handler=ApprovalDecisions(),
            verdicts=(APPROVE, REJECT),
            negative_verdicts=(REJECT,),
            note_is_reason=True,
            presenter=ApprovalPresenter(),
            approve_verdict=APPROVE,
            labels={APPROVE: "Approve: the agent may submit", REJECT: "Reject: it must not happen"},
            reasons=APPROVAL_REASONS,
        ),
    )
    register_queue(
        Queue.MANUAL_REVIEW,
        QueuePolicy(
            handler=ManualReviewDecisions(),
            verdicts=tuple(str(verdict) for verdict in MANUAL_VERDICTS),
            negative_verdicts=(ReceiptState.REJECTED.value,),
            # Settling by hand is a claim about the outside world: every verdict says why.
            reason_required=tuple(str(verdict) for verdict in MANUAL_VERDICTS),
            note_is_reason=True,
            presenter=ReceiptPresenter(),
            labels={
                ReceiptState.SUCCEEDED.value: "It happened (succeeded)",
                ReceiptState.SAFE_TO_RETRY.value: "It did not happen: safe to retry",
                ReceiptState.REJECTED.value: "It was refused (rejected)",
            },
            reasons=RECEIPT_REASONS,
            payload=ReceiptSettlement,
        ),
    )
