"""The deletions queue: a person looks at a deletion that failed or left a dirty probe."""

from __future__ import annotations

from memory.models import DeletionRequest, DeletionStatus
from memory.presenters import DeletionPresenter
from memory.services.deletion import deletion_request_create
from reviews.models import Queue, ReviewItem
from reviews.registry import DecisionInput, QueuePolicy, register_queue


def _deletion(item: ReviewItem) -> DeletionRequest | None:
    return (
        DeletionRequest.objects.select_related("tenant", "subject", "claim")
        .filter(tenant_id=item.tenant_id, pk=item.target_id)
        .first()
    )


class DeletionDecisions:
    def current_version(self, *, item: ReviewItem) -> str:
        deletion = _deletion(item)
        return deletion.version() if deletion is not None else "missing"

    def apply(self, decision: DecisionInput) -> None:
        """`acknowledge` records that a person saw the report. With `retry`, a failed
        deletion is asked for again as a new request with a fresh report."""
        deletion = _deletion(decision.item)
        if deletion is None or not decision.payload.get("retry"):
            return
        if deletion.status == DeletionStatus.FAILED:
            deletion_request_create(
                tenant=deletion.tenant,
                actor=decision.actor,
                subject=deletion.subject,
                claim=deletion.claim,
                requested_by=deletion.requested_by,
            )


def register() -> None:
    """Register the deletions queue's decision handler."""
    register_queue(
        Queue.DELETIONS,
        QueuePolicy(
            handler=DeletionDecisions(),
            verdicts=("acknowledge",),
            negative_verdicts=(),
            presenter=DeletionPresenter(),
        ),
    )
