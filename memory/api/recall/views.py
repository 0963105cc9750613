"""Recall traces for agents: read one, and report what went into the model's context."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import CONSOLE_READERS, agent_or_people, api_context, capability_required
from common.idempotency import idempotent
from common.problems import not_found
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.api.recall.serializers import TraceOut, UsesIn, UsesOut
from memory.selectors.traces import recall_trace_detail, recall_trace_get
from memory.services.recall_uses import UseReport, recall_uses_report

TRACE_READERS = agent_or_people("recall", *sorted(CONSOLE_READERS))


class RecallTraceView(APIView):
    permission_classes = [TRACE_READERS]

    @extend_schema(
        responses={200: TraceOut, 404: NOT_FOUND},
        summary="Read a recall trace: the legal set, the ranking, the budget and the uses",
        description="What a recall (or a hot-memory read) was asked, how many claims each "
        "legal-set rule excluded, each returned claim's ranking signals and what the agent "
        "reported doing with it, and the ranked candidates the limit or the budget cut. "
        "Claims are shown as they stand now. A trace of another tenant, or of a subject "
        "outside the token, is `404`.",
    )
    def get(self, request: Request, trace_id: Any) -> Response:
        context = api_context(request)
        trace = recall_trace_get(
            tenant=context.tenant, trace_id=trace_id, allowed_subjects=context.allowed_subjects
        )
        if trace is None:
            raise not_found("trace")
        return Response(TraceOut(recall_trace_detail(tenant=context.tenant, trace=trace)).data)


class RecallTraceUsedView(APIView):
    permission_classes = [capability_required("recall")]

    @extend_schema(
        request=UsesIn,
        responses={201: UsesOut, 200: UsesOut, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="Report which recalled claims went into the model's context",
        description="Names claims the trace returned (`position` in the prompt, 0 first; "
        "`cited` when the output cited it), with the run and task they served. `201` when "
        "something new was recorded, `200` when every claim was already on record (a retry "
        "records nothing twice). `unused` lists the trace's claims no report names. Errors: "
        "`validation_error`, `item_not_in_trace`, `secret_detected`, `not_found`, "
        "`trace_redacted` (409: a deletion redacted the trace).",
    )
    @idempotent
    def post(self, request: Request, trace_id: Any) -> Response:
        context = api_context(request)
        data = UsesIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        result = recall_uses_report(
            tenant=context.tenant,
            actor=context.actor,
            trace_id=trace_id,
            allowed_subjects=context.allowed_subjects,
            items=[
                UseReport(claim_id=str(item["id"]), position=item["position"], cited=item["cited"])
                for item in values["items"]
            ],
            run_id=values["run_id"],
            task_id=values["task_id"],
        )
        body = UsesOut(
            {
                "trace_id": result.trace.id,
                "recorded": result.recorded,
                "already_reported": result.already_reported,
                "unused": result.unused,
            }
        ).data
        return Response(body, status=status.HTTP_201_CREATED if result.recorded else 200)
