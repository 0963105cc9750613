"""Run snapshots over the API: `POST /runs` records what a run starts from, `GET
/runs/{id}` shows it with its receipts, checkpoints and ledger events.

Here, above the receipts, because a run's page reads the ledger too."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from common.idempotency import idempotent
from common.problems import not_found
from common.schema import AGENT_AUTH, NOT_FOUND
from memory.claims.api.claims.serializers import EventOutput
from memory.claims.selectors.events import events_list
from memory.receipts.api.receipts.serializers import CheckpointOutput, ReceiptOutput
from memory.receipts.models import Run
from memory.receipts.selectors.runs import run_checkpoints, run_get, run_receipts
from memory.receipts.services.runs import run_register

# Whoever writes receipts, checkpoints or events takes part in runs.
RUNS = capability_required("receipts:write", "checkpoints:write", "events:write")
# The events a run's page shows at most; `events_url` lists them all, page by page.
RUN_PAGE_EVENTS = 200


class RunInput(serializers.Serializer):
    run_id = serializers.RegexField(
        r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}$",
        help_text="The agent's own name for the run, as its events, receipts and "
        "checkpoints carry it in `run_id`; one snapshot per name.",
    )
    input_digest = serializers.CharField(
        max_length=200,
        help_text="A digest of everything the run starts from (e.g. sha256 over post path, "
        "content digest, target branch and policy version). memdesk keeps the digest, "
        "never the inputs.",
    )
    summary = serializers.CharField(
        max_length=4000,
        required=False,
        allow_blank=True,
        default="",
        help_text="What the inputs were, in words, with anything secret taken out; a "
        "credential here is `400 secret_detected` and nothing is stored.",
    )
    policy_version = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default=""
    )
    source_versions = serializers.DictField(
        child=serializers.CharField(max_length=200),
        required=False,
        default=dict,
        help_text='The version of each source the run read: {"post": "sha256:…", '
        '"template": "v12"}.',
    )
    agent = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")

    def validate_source_versions(self, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 100 or any(not key or len(key) > 100 for key in value):
            raise serializers.ValidationError(
                "At most 100 sources, each named in 1-100 characters."
            )
        return value


class RunOutput(serializers.ModelSerializer):
    class Meta:
        model = Run
        fields = ["id", "run_id", "agent", "input_digest", "summary", "policy_version",
                  "source_versions", "created_at"]  # fmt: skip


class RunDetailOutput(RunOutput):
    receipts = ReceiptOutput(many=True, help_text="Receipts that name the run, oldest first.")
    checkpoints = CheckpointOutput(many=True, help_text="Checkpoints saved under the run.")
    events = EventOutput(
        many=True,
        help_text=f"The run's ledger events, oldest first (at most {RUN_PAGE_EVENTS}).",
    )
    events_url = serializers.CharField(help_text="Every event of the run, page by page.")

    class Meta(RunOutput.Meta):
        fields = [*RunOutput.Meta.fields, "receipts", "checkpoints", "events", "events_url"]


def run_detail_data(run: Run, *, actor: Any, allowed_subjects: frozenset[str] | None) -> dict:
    events = events_list(
        tenant=run.tenant, allowed_subjects=allowed_subjects, run_id=run.run_id
    ).order_by("recorded_at", "id")[:RUN_PAGE_EVENTS]
    return {
        **RunOutput(run).data,
        "receipts": ReceiptOutput(run_receipts(run=run, actor=actor), many=True).data,
        "checkpoints": CheckpointOutput(run_checkpoints(run=run, actor=actor), many=True).data,
        "events": EventOutput(events, many=True).data,
        "events_url": f"/api/v1/events?{urlencode({'run_id': run.run_id})}",
    }


class RunCreateView(APIView):
    permission_classes = [RUNS]

    @extend_schema(
        request=RunInput,
        responses={
            201: RunOutput,
            200: OpenApiResponse(
                RunOutput, description="This run_id was registered with this snapshot already."
            ),
            400: OpenApiResponse(description="Problem details: validation_error, secret_detected"),
            409: OpenApiResponse(
                description="Problem details: run_id_reused (the run_id names a run with "
                "another snapshot), idempotency_key_reused, request_in_progress"
            ),
            **AGENT_AUTH,
        },
        summary="Register a run's snapshot: input digest, summary, policy and source versions",
        description="Send it when a run starts, before its receipts and checkpoints, which "
        "then name it by the `id` answered (`run`). The snapshot never changes: the same "
        "`run_id` with the same snapshot answers `200` with the first, with another `409 "
        "run_id_reused`. The run belongs to the calling token, as its receipts do.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = RunInput(data=request.data)
        data.is_valid(raise_exception=True)
        run, created = run_register(
            tenant=context.tenant, actor=context.actor, **data.validated_data
        )
        return Response(
            RunOutput(run).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            headers={"Location": f"/api/v1/runs/{run.pk}"},
        )


class RunDetailView(APIView):
    permission_classes = [RUNS]

    @extend_schema(
        responses={200: RunDetailOutput, 404: NOT_FOUND, **AGENT_AUTH},
        summary="Read a run's snapshot with its receipts, checkpoints and events",
        description="Receipts and checkpoints that name the run (or carry its `run_id`) "
        "and that the token reaches; the run's ledger events among the subjects the token "
        "may read. Another token's run is `404 not_found`, unless the caller holds "
        "`receipts:operate`.",
    )
    def get(self, request: Request, run_pk: UUID) -> Response:
        context = api_context(request)
        run = run_get(tenant=context.tenant, actor=context.actor, run_pk=run_pk)
        if run is None:
            raise not_found("run")
        return Response(
            run_detail_data(run, actor=context.actor, allowed_subjects=context.allowed_subjects)
        )
