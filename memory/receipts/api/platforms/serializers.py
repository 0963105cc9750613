"""Platforms over the API: validators in, serializers out."""

from __future__ import annotations

from rest_framework import serializers

from memory.receipts.models.platforms import (
    KEY_PLACEHOLDER,
    AbsenceProof,
    OperationPolicy,
    Platform,
)


class AbsenceProofInput(serializers.Serializer):
    """How a platform proves absence: at registration, and when an admin changes it."""

    absence_proof = serializers.ChoiceField(
        choices=AbsenceProof.choices,
        default=AbsenceProof.NONE,
        help_text="What a negative answer of the platform's lookup proves: `none` (nothing; "
        "a person decides), `status_lookup` (a 404 means never written) or "
        "`search_by_key` (`[]` means never written). A receipt's own `absence_proof` "
        "decides nothing.",
    )
    lookup_template = serializers.CharField(
        max_length=2000,
        required=False,
        default="",
        allow_blank=True,
        help_text=f"Path and query under `base_url` that looks the receipt's key up, with "
        f"`{KEY_PLACEHOLDER}` (`400 lookup_template_without_key` otherwise). Required "
        "with a proof of absence: only this lookup can prove it.",
    )
    key_retention_seconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="How long the platform remembers an idempotency key; required with a "
        "proof of absence. Past it, an unsettled receipt goes to a person.",
    )
    consistency_delay_seconds = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        help_text="How long after submission a negative answer is not yet trusted; the "
        "receipt is read again once it has passed.",
    )


class PlatformRegisterInput(AbsenceProofInput):
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


class VerifierControlsInput(serializers.Serializer):
    known_absent_key = serializers.CharField(
        max_length=255, help_text="A key the platform never saw: its lookup must say absent."
    )
    known_present_key = serializers.CharField(
        max_length=255,
        required=False,
        allow_blank=True,
        default="",
        help_text="A key the platform holds: its lookup must find it. Optional, but without "
        "it a verifier answering absent for everything goes unnoticed.",
    )


class PlatformOutput(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by_label")
    known_absent_key = serializers.CharField(source="control_absent_key")
    known_present_key = serializers.CharField(source="control_present_key")

    class Meta:
        model = Platform
        fields = [
            "id",
            "name",
            "base_url",
            "allow_private",
            "absence_proof",
            "lookup_template",
            "key_retention_seconds",
            "consistency_delay_seconds",
            "known_absent_key",
            "known_present_key",
            "controls_checked_at",
            "verifier_unhealthy_since",
            "verifier_unhealthy_reason",
            "created_by",
            "created_at",
        ]


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
    approval_required = serializers.BooleanField(
        default=False,
        help_text="Each receipt waits in `awaiting_approval` until a person other than the one "
        "its token acts for approves the intent; submitting before is `409 approval_required`.",
    )
    compensate_on_failure = serializers.BooleanField(
        default=False,
        help_text="When an effect of this operation fails (in manual_review, or its task's "
        "retries spent) and a compensation receipt is planned for it, recovery answers "
        "`compensate` with that compensation instead of `escalate`.",
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
            "approval_required",
            "compensate_on_failure",
            "requirements",
            "created_by",
            "created_at",
            "updated_at",
        ]
