"""Receipts, checkpoints and recovery over the API: validators in, serializers out."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.fields import StrictBooleanField, StrictUUIDField
from memory.receipts.models.leases import RecoveryLease
from memory.receipts.models.receipts import (
    Checkpoint,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
)
from memory.receipts.selectors.receipts import compensation_ids
from memory.receipts.services.recovery import RecoveryDecision, RecoveryReason
from memory.receipts.services.recovery_leases import DEFAULT_LEASE_SECONDS, MAX_LEASE_SECONDS


class ReceiptCreateInput(serializers.Serializer):
    operation = serializers.CharField(max_length=200)
    target = serializers.CharField(max_length=1000)
    intent = serializers.JSONField(
        help_text="What the call will do, sanitised: no credentials (`secret_in_intent`)."
    )
    idempotency_key = serializers.CharField(
        max_length=255,
        required=False,
        help_text=(
            "Names this effect within the tenant. Defaults to the Idempotency-Key header "
            "when only that is sent."
        ),
    )
    reconciler = serializers.DictField(
        required=False,
        help_text=(
            'How to settle an unknown outcome: {"adapter": "http", "lookup_url": '
            '"https://…?key={idempotency_key}", "absence_proof": "status_404" | "empty_list", '
            '"external_id_field": "id", "key_retention_seconds": 86400} or '
            '{"adapter": "manual"} (the default). Placeholders in lookup_url: '
            "{idempotency_key}, {external_id}, {operation_id} (this receipt's id), each "
            "URL-encoded. Only GET requests are ever sent. The lookup_url must start with "
            'the base URL of a platform an admin registered, or name it: {"platform": '
            '"blog", "lookup_path": "articles?key={idempotency_key}"} (relative to its base '
            "URL); otherwise 400 platform_not_registered. `absence_proof` and "
            "`key_retention_seconds` are still accepted and stored for older clients but "
            "decide nothing: the platform's registration says whether and for how long a "
            "negative answer proves absence, and only a read of its registered lookup for "
            "this receipt's key can prove it."
        ),
    )
    run_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    agent = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    run = StrictUUIDField(
        required=False,
        allow_null=True,
        default=None,
        help_text="The id of a run registered with POST /api/v1/runs (else 400 "
        "run_not_registered); the receipt carries its run_id and policy version.",
    )
    policy_version = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="The version of the rules the effect is planned under; defaults to the "
        "run's. Part of the derived idempotency key.",
    )
    compensates = StrictUUIDField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Makes this receipt a compensation: the planned undoing of that effect "
        "receipt (yours; else 400 unknown_effect). It inherits the effect's run.",
    )

    def validate_intent(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise serializers.ValidationError("The intent is a JSON object.")
        return value


class ReceiptTransitionInput(serializers.Serializer):
    to = serializers.ChoiceField(choices=ReceiptState.choices)
    external_id = serializers.CharField(
        max_length=255, required=False, allow_blank=True, default=""
    )
    error_code = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    evidence = serializers.DictField(required=False, default=dict)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    lease_seconds = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=settings.RECEIPT_SUBMIT_LEASE_MAX_SECONDS,
        help_text=(
            "With `submitted`: how long the call may take before the outcome counts as "
            "unknown. Defaults to the server's RECEIPT_SUBMIT_LEASE_SECONDS."
        ),
    )


class ReceiptListInput(serializers.Serializer):
    state = serializers.ChoiceField(choices=ReceiptState.choices, required=False)
    operation = serializers.CharField(max_length=200, required=False)


class ReceiptOutput(serializers.ModelSerializer):
    run = serializers.UUIDField(
        source="registered_run_id",
        allow_null=True,
        read_only=True,
        help_text="The registered run it belongs to, if it named one.",
    )
    compensates = serializers.UUIDField(
        source="compensates_id",
        allow_null=True,
        read_only=True,
        help_text="For a compensation: the effect receipt it undoes.",
    )

    class Meta:
        model = Receipt
        fields = [
            "id",
            "operation",
            "target",
            "intent",
            "intent_fingerprint",
            "idempotency_key",
            "state",
            "external_id",
            "error_code",
            "reconciler",
            "run_id",
            "run",
            "policy_version",
            "kind",
            "compensates",
            "agent",
            "submitted_at",
            "submit_lease_expires_at",
            "reconcile_attempts",
            "next_reconcile_at",
            "created_at",
            "updated_at",
        ]


class ActorOutput(serializers.Serializer):
    kind = serializers.CharField()
    id = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField()  # type: ignore[assignment]


class ReceiptTransitionOutput(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField()

    class Meta:
        model = ReceiptTransition
        fields = ["actor", "at", "reason", "evidence", "attempt"]

    def get_fields(self) -> dict[str, serializers.Field]:
        # `from` is a Python keyword, so these two cannot be declared as attributes.
        fields = super().get_fields()
        fields["from"] = serializers.CharField(source="from_state")
        fields["to"] = serializers.CharField(source="to_state")
        return fields

    @extend_schema_field(ActorOutput)
    def get_actor(self, transition: ReceiptTransition) -> dict[str, str]:
        return {
            "kind": transition.actor_kind,
            "id": transition.actor_id,
            "label": transition.actor_label,
        }


class ReconciliationReadOutput(serializers.ModelSerializer):
    class Meta:
        model = ReconciliationRead
        fields = ["attempt", "adapter", "outcome", "error_code", "external_id", "evidence", "at"]


class ReceiptDetailOutput(ReceiptOutput):
    transitions = ReceiptTransitionOutput(many=True, read_only=True)
    reads = ReconciliationReadOutput(many=True, read_only=True)
    compensations = serializers.SerializerMethodField(
        help_text="The compensations planned to undo this effect, oldest first."
    )

    class Meta(ReceiptOutput.Meta):
        fields = [*ReceiptOutput.Meta.fields, "transitions", "reads", "compensations"]

    @extend_schema_field(serializers.ListField(child=serializers.UUIDField()))
    def get_compensations(self, receipt: Receipt) -> list[str]:
        return [str(pk) for pk in compensation_ids(receipt)]


class CheckpointInput(serializers.Serializer):
    run_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    run = StrictUUIDField(
        required=False,
        allow_null=True,
        default=None,
        help_text="The id of a run registered with POST /api/v1/runs (else 400 "
        "run_not_registered); the checkpoint carries its run_id.",
    )
    input_fingerprint = serializers.CharField(max_length=200)
    stage = serializers.CharField(max_length=100)
    stage_complete = StrictBooleanField(required=False, default=False)
    # The columns are PostgreSQL integers; a larger count is a 400, not a DataError.
    retry_count = serializers.IntegerField(
        min_value=0, max_value=2**31 - 1, required=False, default=0
    )
    max_retries = serializers.IntegerField(
        min_value=0, max_value=2**31 - 1, required=False, default=3
    )
    allowed_next_stages = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, default=list
    )
    effects = serializers.ListField(
        child=StrictUUIDField(),
        required=False,
        default=list,
        max_length=1000,
        help_text="Receipt ids of the side effects this stage made or is making.",
    )
    expires_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="When the checkpoint stops counting. Without it (or null), the tenant's "
        "default checkpoint lifetime from now. Recovery ignores an expired checkpoint "
        "(`fresh`/`checkpoint_expired`) and a periodic sweep deletes it.",
    )
    resume_after = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="The earliest time the task may resume (a back-off): before it, recovery "
        "answers `wait`/`resume_after` where it would answer `resume`. Before `expires_at`.",
    )


class CheckpointOutput(serializers.ModelSerializer):
    run = serializers.UUIDField(source="registered_run_id", allow_null=True, read_only=True)

    class Meta:
        model = Checkpoint
        fields = [
            "task_key",
            "run_id",
            "run",
            "input_fingerprint",
            "stage",
            "stage_complete",
            "retry_count",
            "max_retries",
            "allowed_next_stages",
            "effects",
            "expires_at",
            "resume_after",
            "created_at",
            "updated_at",
        ]


class RecoveryInput(serializers.Serializer):
    task_key = serializers.CharField(max_length=255)
    input_fingerprint = serializers.CharField(max_length=200)
    run_id = serializers.CharField(
        max_length=200,
        required=False,
        default="",
        help_text="The run asking. With it, an answer that sends the run to act (fresh, "
        "resume, verify_only) gives it the task's recovery lease: other runs are answered "
        "`in_progress` until it expires or is released, and this run asking again is "
        "folded (`folded: true`, the same answer). Without it the call only reads.",
    )
    lease_seconds = serializers.IntegerField(
        min_value=1,
        max_value=MAX_LEASE_SECONDS,
        required=False,
        default=DEFAULT_LEASE_SECONDS,
        help_text="How long the lease lasts when one is taken.",
    )
    triggered_at = serializers.DateTimeField(
        required=False,
        help_text="When this run was triggered. The decision's latency (the dashboard's and "
        "/metrics' p50/p95) is counted from it; without it, from the request.",
    )


class RecoveryLeaseOutput(serializers.ModelSerializer):
    class Meta:
        model = RecoveryLease
        fields = ["task_key", "holder", "decision", "reason", "acquired_at", "expires_at",
                  "released_at", "folded_triggers"]  # fmt: skip


class RecoveryOutput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=RecoveryDecision.choices)
    reason = serializers.ChoiceField(choices=RecoveryReason.choices)
    checkpoint = CheckpointOutput(allow_null=True)
    effects = ReceiptOutput(many=True)
    lease = RecoveryLeaseOutput(
        allow_null=True,
        help_text="The asker's lease, or with `in_progress` the holder's (who and until when).",
    )
    folded = serializers.BooleanField(
        help_text="This run already holds the lease: the answer it was given then, again."
    )
    answer_id = serializers.IntegerField(
        help_text="This answer in recovery's log: `POST /api/v1/recovery/answers/{id}/verdict` "
        "says whether it was right."
    )
    compensations = ReceiptOutput(
        many=True,
        required=False,
        help_text="With `compensate`: the planned compensation receipts to run now (submit "
        "each, then report), oldest first; otherwise empty.",
    )


class RecoveryReleaseInput(serializers.Serializer):
    task_key = serializers.CharField(max_length=255)
    run_id = serializers.CharField(max_length=200)
