from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import serializers

from reviews.models import Decision, ReviewItem

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class DecisionOutput(serializers.ModelSerializer):
    class Meta:
        model = Decision
        fields = ["id", "verdict", "reason_code", "note", "payload", "actor_label", "at"]


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
