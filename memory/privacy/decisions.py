"""The deletions queue: a person looks at a deletion that failed or left a dirty probe."""

from __future__ import annotations

from rest_framework import serializers

from common.problems import Problem
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.privacy.presenters import DeletionPresenter
from memory.privacy.services.deletion import deletion_request_create, deletion_resolve
from reviews.models import Queue, ReviewItem
from reviews.registry import OTHER_REASON, DecisionInput, QueuePolicy, register_queue

DELETION_REASONS = (
    ("false_positive", "The probe matched unrelated text"),
    ("copy_checked", "Looked at the copy: it is not the deleted content"),
    ("transient_failure", "A passing failure: run it again"),
    OTHER_REASON,
)


class DeletionFollowUp(serializers.Serializer):
    # Run the deletion again: a new request with a fresh report.
    retry = serializers.BooleanField(required=False)


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
        """`acknowledge` records that a person saw the report; a deletion waiting in
        `needs_review` (a probe found a copy) is resolved by it and completes. With
        `retry`, a failed deletion is asked for again as a new request with a fresh report."""
        deletion = _deletion(decision.item)
        if deletion is None:
            return
        retry = bool(decision.payload.get("retry"))
        if retry and deletion.status != DeletionStatus.FAILED:
            raise Problem(
                "retry_not_possible",
                f"Only a failed deletion is run again; this one is {deletion.status}.",
                status_code=409,
                errors={"retry": ["Acknowledge without running it again."]},
            )
        if deletion.status == DeletionStatus.NEEDS_REVIEW:
            deletion_resolve(deletion=deletion, actor=decision.actor)
        elif retry:
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
            labels={"acknowledge": "Acknowledge"},
            reasons=DELETION_REASONS,
            payload=DeletionFollowUp,
        ),
    )
