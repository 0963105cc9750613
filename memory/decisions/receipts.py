"""The manual_review queue: an editor settles a receipt reconciliation could not."""

from __future__ import annotations

from memory.models.receipts import ReceiptState
from memory.presenters import ReceiptPresenter
from memory.selectors.receipts import receipt_get
from memory.services.receipts import MANUAL_VERDICTS, receipt_resolve_manual
from reviews.models import Queue, ReviewItem
from reviews.registry import DecisionInput, QueuePolicy, register_queue


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


def register() -> None:
    """Register the manual_review queue's decision handler."""
    register_queue(
        Queue.MANUAL_REVIEW,
        QueuePolicy(
            handler=ManualReviewDecisions(),
            verdicts=tuple(str(verdict) for verdict in MANUAL_VERDICTS),
            negative_verdicts=(ReceiptState.REJECTED.value,),
            presenter=ReceiptPresenter(),
        ),
    )
