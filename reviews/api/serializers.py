from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import serializers

from reviews.models import Decision, ReasonCode, ReviewItem

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
    verdict = serializers.CharField(max_length=32)
    reason_code = serializers.ChoiceField(
        choices=ReasonCode.choices, required=False, allow_blank=True, default=""
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)
    winner = serializers.CharField(required=False)
    loser = serializers.CharField(required=False)
    external_id = serializers.CharField(required=False, max_length=255)
    scopes = serializers.DictField(required=False)
    evidence = serializers.DictField(required=False)
