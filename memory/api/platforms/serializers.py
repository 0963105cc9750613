"""Platforms over the API: validators in, serializers out."""

from __future__ import annotations

from rest_framework import serializers

from memory.models.platforms import OperationPolicy, Platform


class PlatformRegisterInput(serializers.Serializer):
    name = serializers.CharField(
        max_length=63, help_text="Lower-case letters, digits, `.`, `_`, `-`; unique per tenant."
    )
    base_url = serializers.CharField(
        max_length=1000,
        help_text="An absolute http(s) URL without credentials, query or fragment; every "
        "lookup URL of this platform must start with it.",
    )
    allow_private = serializers.BooleanField(
        default=False,
        help_text="Let lookups read loopback, private, link-local and reserved addresses "
        "(a platform on your own network). Off: such addresses are refused.",
    )


class PlatformOutput(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by_label")

    class Meta:
        model = Platform
        fields = ["id", "name", "base_url", "allow_private", "created_by", "created_at"]


class OperationPolicyInput(serializers.Serializer):
    operation = serializers.CharField(
        max_length=200, help_text="The operation name receipts carry, e.g. `articles.create`."
    )
    require_external_id = serializers.BooleanField(
        default=False, help_text="`succeeded` must carry the platform's id for the effect."
    )
    evidence_fields = serializers.ListField(
        child=serializers.CharField(max_length=64),
        default=list,
        max_length=32,
        help_text="Top-level keys the report's `evidence` must carry, non-empty.",
    )
    require_verifying_read = serializers.BooleanField(
        default=False,
        help_text="Only memdesk's own read of the platform settles `succeeded`: an agent's "
        "complete report moves the receipt to `outcome_unknown` and reconciliation reads.",
    )


class OperationPolicyOutput(serializers.ModelSerializer):
    platform = serializers.CharField(source="platform.name")
    requirements = serializers.ListField(
        child=serializers.CharField(),
        help_text="What `succeeded` needs, named as `evidence_required` lists what is missing.",
    )
    created_by = serializers.CharField(source="created_by_label")

    class Meta:
        model = OperationPolicy
        fields = [
            "id",
            "platform",
            "operation",
            "require_external_id",
            "evidence_fields",
            "require_verifying_read",
            "requirements",
            "created_by",
            "created_at",
            "updated_at",
        ]
