"""The manual_review queue: an editor settles a receipt reconciliation could not."""

from __future__ import annotations

from typing import Any

from accounts.actors import Actor
from memory.models.receipts import ReceiptState
from memory.presenters import ReceiptPresenter
from memory.selectors.receipts import receipt_get
from memory.services.receipts import MANUAL_VERDICTS, receipt_resolve_manual
from reviews.models import Queue, ReviewItem
from reviews.registry import QueuePolicy, register_queue


class ManualReviewDecisions:
    def current_version(self, *, item: ReviewItem) -> str:
        receipt = receipt_get(tenant=item.tenant, receipt_id=item.target_id)
        return receipt.version() if receipt is not None else "missing"

    def apply(
        self,
        *,
        item: ReviewItem,
        verdict: str,
        reason_code: str,
        note: str,
        payload: dict[str, Any],
        actor: Actor,
    ) -> None:
        receipt_resolve_manual(
            tenant=item.tenant,
            receipt_id=item.target_id,
            actor=actor,
            verdict=verdict,
            reason=" — ".join(part for part in (reason_code, note.strip()) if part),
            external_id=str(payload.get("external_id") or ""),
            evidence=payload.get("evidence") or {},
            review_item_id=item.pk,
        )


def register() -> None:
    """Register the manual_review queue's decision handler."""
    register_queue(
        Queue.MANUAL_REVIEW,
        QueuePolicy(
            handler=ManualReviewDecisions(),
            verdicts=tuple(str(verdict) for verdict in MANUAL_VERDICTS),
            negative_verdicts=(ReceiptState.REJECTED.value,),
            payload_fields={
                "external_id": "The outside system's id for the effect (needed for succeeded).",
                "evidence": "What you checked, e.g. a URL and when you looked.",
            },
            presenter=ReceiptPresenter(),
        ),
    )
