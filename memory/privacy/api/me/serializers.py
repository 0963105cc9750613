from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.claims.models import Claim, ClaimSource, ClaimStatus
from memory.privacy.models import DataExport, DeletionRequest, ExportStatus


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
    events = serializers.ListField(
        source="event_ids",
        child=serializers.UUIDField(),
        help_text="The ledger events a `records` deletion names (empty for the other scopes).",
    )
    recall_traces = serializers.ListField(
        source="trace_ids",
        child=serializers.UUIDField(),
        help_text="The recall traces a `records` deletion names (empty for the other scopes).",
    )
    report = serializers.SerializerMethodField()

    class Meta:
        model = DeletionRequest
        fields = [
            "id",
            "scope",
            "cause",
            "subject",
            "claim",
            "events",
            "recall_traces",
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


# -- download my data ---------------------------------------------------------------------


class ExportOut(serializers.ModelSerializer):
    """An export a worker makes: its progress, and where to download it once ready."""

    subjects = serializers.ListField(source="subject_keys", child=serializers.CharField())
    progress = serializers.SerializerMethodField()
    download = serializers.SerializerMethodField()

    class Meta:
        model = DataExport
        fields = [
            "id",
            "status",
            "subjects",
            "rows_done",
            "rows_total",
            "progress",
            "size_bytes",
            "digest",
            "error_code",
            "created_at",
            "finished_at",
            "expires_at",
            "download",
        ]

    def get_progress(self, export: DataExport) -> float:
        """Rows done of rows total, 0 to 1."""
        if export.status == ExportStatus.READY:
            return 1.0
        return round(export.rows_done / export.rows_total, 3) if export.rows_total else 0.0

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_download(self, export: DataExport) -> str | None:
        if export.status != ExportStatus.READY:
            return None
        return f"/api/v1/me/exports/{export.pk}/download"


class ExportSourceOut(serializers.Serializer):
    event = serializers.UUIDField(allow_null=True)
    event_kind = serializers.CharField(allow_null=True)
    uri = serializers.CharField(allow_blank=True)
    observed_at = serializers.DateTimeField(allow_null=True)
    digest = serializers.CharField(allow_blank=True)


class ExportActorOut(serializers.Serializer):
    kind = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField(allow_blank=True)  # type: ignore[assignment]


class ExportHistoryOut(serializers.Serializer):
    at = serializers.DateTimeField()
    verb = serializers.CharField()
    actor = ExportActorOut()
    reason = serializers.CharField(allow_blank=True)


class ExportGateOut(serializers.Serializer):
    decision = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())


class ExportClaimOut(serializers.Serializer):
    id = serializers.UUIDField()
    subject = serializers.CharField()
    kind = serializers.CharField()
    predicate = serializers.CharField()
    scope = serializers.DictField(child=serializers.CharField())
    value = serializers.JSONField(allow_null=True)
    text = serializers.CharField(allow_blank=True)
    status = serializers.CharField()
    authority = serializers.CharField()
    basis = serializers.CharField()
    revision = serializers.IntegerField()
    supersedes = serializers.UUIDField(allow_null=True)
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_to = serializers.DateTimeField(allow_null=True)
    available_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    refresh_after = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    gate = ExportGateOut()
    agent = serializers.CharField(allow_blank=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    use_count = serializers.IntegerField()
    sources = ExportSourceOut(many=True)
    history = ExportHistoryOut(many=True, help_text="The audit trail of this memory, oldest first.")


class ExportEventOut(serializers.Serializer):
    id = serializers.UUIDField()
    subject = serializers.CharField()
    kind = serializers.CharField()
    run_id = serializers.CharField(allow_blank=True)
    agent = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True)
    body = serializers.DictField()
    source_uri = serializers.CharField(allow_blank=True)
    observed_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    digest = serializers.CharField()
    sensitivity = serializers.CharField()
    redacted = serializers.BooleanField(help_text="Erased by a deletion: only ids and times stay.")


class ExportDeletionOut(serializers.Serializer):
    id = serializers.UUIDField()
    scope = serializers.CharField()
    cause = serializers.CharField(
        help_text="asked (the person or an editor), retention, or consent_withdrawn."
    )
    subject = serializers.CharField()
    claim = serializers.UUIDField(allow_null=True)
    events = serializers.ListField(child=serializers.UUIDField())
    recall_traces = serializers.ListField(child=serializers.UUIDField())
    status = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    report = serializers.DictField(
        help_text="The deletion's report, as `GET /api/v1/deletions/{id}` gives it."
    )


class ExportTraceOut(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField(help_text="`recall`, or `hot_memory` for a read of the block.")
    subject = serializers.CharField()
    query = serializers.CharField(allow_blank=True)
    filters = serializers.DictField()
    excluded = serializers.DictField(child=serializers.IntegerField())
    chosen = serializers.ListField(
        child=serializers.UUIDField(), help_text="The memories the answer held."
    )
    budget_chars = serializers.IntegerField(allow_null=True)
    used_chars = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    redacted = serializers.BooleanField(help_text="Emptied by a deletion: counts and ids stay.")


class ExportUseOut(serializers.Serializer):
    trace = serializers.UUIDField()
    claim = serializers.UUIDField()
    position = serializers.IntegerField(allow_null=True)
    cited = serializers.BooleanField()
    harmful = serializers.BooleanField()
    run_id = serializers.CharField(allow_blank=True)
    task_id = serializers.CharField(allow_blank=True)
    reported_at = serializers.DateTimeField()


class ExportDecisionOut(serializers.Serializer):
    id = serializers.IntegerField()
    review_item = serializers.IntegerField()
    queue = serializers.CharField()
    claim = serializers.UUIDField()
    verdict = serializers.CharField()
    reason_code = serializers.CharField(allow_blank=True)
    note = serializers.CharField(allow_blank=True)
    payload = serializers.DictField()
    actor = ExportActorOut()
    at = serializers.DateTimeField()
    scrubbed = serializers.BooleanField(help_text="A deletion took erased words out of it.")


class ExportAuditOut(serializers.Serializer):
    at = serializers.DateTimeField()
    verb = serializers.CharField()
    target_type = serializers.CharField(help_text="`claim`, `subject` or `deletion`.")
    target_id = serializers.CharField()
    actor = ExportActorOut()
    reason = serializers.CharField(allow_blank=True)
    # A declared field, which DRF's metaclass takes off the class: not Serializer.data.
    data = serializers.DictField(  # type: ignore[assignment]
        help_text="Identifiers and digests; ids of what is about another subject are left out."
    )


class ExportCountsOut(serializers.Serializer):
    claims = serializers.IntegerField()
    events = serializers.IntegerField()
    deletions = serializers.IntegerField()
    recall_traces = serializers.IntegerField()
    recall_uses = serializers.IntegerField()
    review_decisions = serializers.IntegerField()
    audit = serializers.IntegerField()


class ExportConsentOut(serializers.Serializer):
    subject = serializers.CharField()
    sensitivity = serializers.CharField()
    granted = serializers.BooleanField()
    changed_at = serializers.DateTimeField()


class ExportDocumentOut(serializers.Serializer):
    """Everything memdesk holds about the person's subjects (format `memdesk-export/1`):
    the consents they gave or withdrew; memories of every status but erased, with
    sources and audit history; the ledger events of those subjects (redacted ones as
    empty tombstones); deletions and reports; the recalls and hot-memory reads about
    those subjects, the uses agents reported of their memories, review decisions (with
    reviewers' notes) on them, and the audit rows about them."""

    format = serializers.CharField()
    generated_at = serializers.DateTimeField()
    tenant = serializers.CharField()
    user = serializers.CharField()
    subjects = serializers.ListField(child=serializers.CharField())
    consents = ExportConsentOut(many=True)
    claims = ExportClaimOut(many=True)
    events = ExportEventOut(many=True)
    deletions = ExportDeletionOut(many=True)
    recall_traces = ExportTraceOut(many=True)
    recall_uses = ExportUseOut(many=True)
    review_decisions = ExportDecisionOut(many=True)
    audit = ExportAuditOut(many=True)
    counts = ExportCountsOut()


class ConsentOut(serializers.Serializer):
    subject = serializers.CharField()
    sensitivity = serializers.CharField(help_text="The class: health, finance, …")
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField()  # type: ignore[assignment]
    description = serializers.CharField(help_text="What the gate's rules count as this class.")
    granted = serializers.BooleanField()
    changed_at = serializers.DateTimeField(allow_null=True)


class ConsentListOut(serializers.Serializer):
    results = ConsentOut(many=True)
    next = serializers.CharField(allow_null=True)
    deletions = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        help_text="On PUT: the deletions a withdrawal started, one per memory it covered.",
    )


class ConsentsIn(serializers.Serializer):
    consents = serializers.DictField(
        child=serializers.BooleanField(),
        help_text='Class → true to grant, false to withdraw, e.g. {"health": true}. Classes '
        "left out stay as they are.",
    )
    subject = serializers.CharField(
        required=False, help_text="Only this subject of yours; all of them when left out."
    )
