from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.models import Claim, ClaimSource, ClaimStatus, DeletionRequest


class MeSourceOut(serializers.ModelSerializer):
    """Where a memory came from: a ledger event (what kind, from where) or a document."""

    event = serializers.UUIDField(source="event_id", allow_null=True)
    event_kind = serializers.SerializerMethodField()
    event_source_uri = serializers.SerializerMethodField()

    class Meta:
        model = ClaimSource
        fields = ["event", "event_kind", "event_source_uri", "uri", "observed_at"]

    def get_event_kind(self, source: ClaimSource) -> str | None:
        return source.event.kind if source.event is not None else None

    def get_event_source_uri(self, source: ClaimSource) -> str | None:
        return source.event.source_uri if source.event is not None else None


class MeMemoryOut(serializers.ModelSerializer):
    subject = serializers.CharField(source="subject.key")
    supersedes = serializers.UUIDField(source="supersedes_id", allow_null=True)
    sources = MeSourceOut(many=True)

    class Meta:
        model = Claim
        fields = [
            "id",
            "subject",
            "kind",
            "predicate",
            "scope",
            "value",
            "text",
            "status",
            "authority",
            "revision",
            "supersedes",
            "valid_from",
            "valid_to",
            "recorded_at",
            "refresh_after",
            "expires_at",
            "last_used_at",
            "use_count",
            "sources",
        ]


class MeMemoryListIn(serializers.Serializer):
    subject = serializers.CharField(required=False, max_length=255)
    status = serializers.ChoiceField(
        choices=[s for s in ClaimStatus.choices if s[0] != ClaimStatus.ERASED], required=False
    )


class CorrectIn(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    text = serializers.CharField(max_length=10_000, trim_whitespace=True)


class DeleteAllIn(serializers.Serializer):
    subject = serializers.CharField(required=False, max_length=255)


class DeletionAcceptedOut(serializers.Serializer):
    deletion = serializers.UUIDField()
    deletions = serializers.ListField(
        child=serializers.UUIDField(),
        help_text="Every request made, one per subject, when the user owns several.",
    )


class ProbeOut(serializers.Serializer):
    name = serializers.CharField()
    query = serializers.CharField()
    result = serializers.DictField()
    clean = serializers.BooleanField()


class DeletionReportOut(serializers.Serializer):
    """What a deletion touched and how it was proven. Never the deleted content."""

    scope = serializers.CharField(required=False)
    target = serializers.DictField(required=False)
    artifacts = serializers.DictField(
        required=False, help_text="Per kind of artifact, what was erased, redacted or removed."
    )
    probes = ProbeOut(many=True, required=False)
    clean = serializers.BooleanField(required=False)
    terms = serializers.DictField(
        required=False, help_text="How many distinctive words were searched, as keyed digests."
    )
    residual_copies = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Copies memdesk cannot erase at once (backups) and until when they live.",
    )
    timings_ms = serializers.DictField(required=False)
    error = serializers.CharField(required=False)


class DeletionOut(serializers.ModelSerializer):
    subject = serializers.CharField(source="subject.key")
    claim = serializers.UUIDField(source="claim_id", allow_null=True)
    report = serializers.SerializerMethodField()

    class Meta:
        model = DeletionRequest
        fields = [
            "id",
            "scope",
            "subject",
            "claim",
            "status",
            "attempts",
            "error_code",
            "created_at",
            "started_at",
            "finished_at",
            "report",
        ]

    @extend_schema_field(DeletionReportOut)
    def get_report(self, deletion: DeletionRequest) -> dict[str, Any]:
        return deletion.report
