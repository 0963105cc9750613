from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reviews.models import Decision, DecisionUndo, ReviewItem
from reviews.selectors import decision_undo_until

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class DecisionOutput(serializers.ModelSerializer):
    undo_until = serializers.SerializerMethodField(
        help_text="Until when `POST /api/v1/reviews/decisions/{id}/undo` may take this "
        "decision back; null when it cannot be (any more)."
    )

    class Meta:
        model = Decision
        fields = [
            "id",
            "verdict",
            "reason_code",
            "note",
            "payload",
            "actor_label",
            "at",
            "undo_until",
        ]

    def get_undo_until(self, decision: Decision) -> datetime | None:
        return decision_undo_until(decision=decision)


class ReviewItemOutput(serializers.ModelSerializer):
    claimed_by: serializers.StringRelatedField[User] = serializers.StringRelatedField()

    class Meta:
        model = ReviewItem
        fields = [
            "id",
            "queue",
            "status",
            "target_type",
            "target_id",
            "priority",
            "subject_key",
            "topic",
            "agent_label",
            "reason_codes",
            "created_at",
            "claimed_by",
            "lease_expires_at",
            "decided_at",
        ]


class DecisionUndoOutput(serializers.ModelSerializer):
    item = serializers.SerializerMethodField()

    class Meta:
        model = DecisionUndo
        fields = ["decision", "actor_label", "at", "item"]

    @extend_schema_field(ReviewItemOutput)
    def get_item(self, undo: DecisionUndo) -> dict[str, Any]:
        return dict(ReviewItemOutput(undo.decision.item).data)


class DecideInput(serializers.Serializer):
    """What every queue's decision has; the rest of the body is the queue's payload,
    validated by the serializer its domain app registered (`QueuePolicy.payload`)."""

    verdict = serializers.CharField(max_length=32)
    reason_code = serializers.CharField(
        max_length=32,
        required=False,
        allow_blank=True,
        default="",
        help_text="One of the queue's reason codes (`GET /api/v1/reviews/queues`).",
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)

    COMMON = ("verdict", "reason_code", "note")


class _VerdictOutput(serializers.Serializer):
    verdict = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    needs_reason = serializers.BooleanField()


class _ReasonOutput(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label


class QueueOutput(serializers.Serializer):
    queue = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label
    verdicts = _VerdictOutput(many=True)
    note_is_reason = serializers.BooleanField()
    reason_codes = _ReasonOutput(many=True)
    payload_fields = serializers.ListField(child=serializers.CharField())
    roles = serializers.ListField(child=serializers.CharField())
