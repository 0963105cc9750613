"""Recall traces for agents: read one, and report what went into the model's context."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import CONSOLE_READERS, agent_or_people, api_context, capability_required
from common.hidden_chars import for_agent
from common.idempotency import idempotent
from common.problems import Problem, not_found
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.recall.serializers import (
    CounterfactualIn,
    CounterfactualOut,
    TraceOut,
    UsesIn,
    UsesOut,
)
from memory.claims.models import RecallTrace
from memory.claims.selectors.claims import RecallResult, claim_get
from memory.claims.selectors.counterfactual import Counterfactual, recall_counterfactual, replayable
from memory.claims.selectors.traces import recall_trace_detail, recall_trace_get
from memory.claims.services.recall_uses import UseReport, recall_uses_report

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
        # Claims' texts as they stand now, without the hidden characters an agent never gets.
        detail = TraceOut(recall_trace_detail(tenant=context.tenant, trace=trace)).data
        return Response(for_agent(detail))


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
                UseReport(
                    claim_id=str(item["id"]),
                    position=item["position"],
                    cited=item["cited"],
                    harmful=item["harmful"],
                )
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


def replay_data(result: RecallResult) -> dict[str, Any]:
    return {
        "items": [
            {
                "id": item.claim.id,
                "subject": item.claim.subject.key,
                "predicate": item.claim.predicate,
                "text": item.claim.text,
                "rank": item.rank,
                "position": position,
                "stale": item.stale,
            }
            for position, item in enumerate(result.items)
        ],
        "excluded": result.excluded,
    }


def counterfactual_data(trace: RecallTrace, found: Counterfactual) -> dict[str, Any]:
    return {
        "trace_id": trace.id,
        "claim": found.claim.id,
        "change": found.change,
        "recorded": found.recorded,
        "baseline": replay_data(found.baseline),
        "counterfactual": replay_data(found.changed),
        "difference": {
            "removed": found.removed,
            "added": found.added,
            "moved": [
                {"id": claim_id, "before": before, "after": after}
                for claim_id, before, after in found.moved
            ],
            "unchanged": found.unchanged,
        },
    }


class RecallCounterfactualView(APIView):
    permission_classes = [TRACE_READERS]

    @extend_schema(
        request=CounterfactualIn,
        responses={200: CounterfactualOut, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="What would this recall have returned without a claim, or with it stale or "
        "corrected?",
        description="Replays the trace's query and filters (as of the time it was asked "
        "unless it named another) against memory as it is now, once as it is and once with "
        "the change to `claim` (a claim of the trace's subject), and answers both and their "
        "difference: `removed`, `added` (the next candidates), `moved`. Writes nothing. "
        "Errors: `validation_error`, `claim_not_in_subject`, `trace_kind_unsupported`, "
        "`trace_redacted` (409), `no_outdated_revision` (409), `no_unrelated_memory` (409), "
        "`not_found`.",
    )
    def post(self, request: Request, trace_id: Any) -> Response:
        context = api_context(request)
        data = CounterfactualIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        trace = replayable(
            recall_trace_get(
                tenant=context.tenant, trace_id=trace_id, allowed_subjects=context.allowed_subjects
            )
        )
        claim = claim_get(
            tenant=context.tenant,
            claim_id=values["claim"],
            allowed_subjects=context.allowed_subjects,
        )
        if claim is None:
            raise not_found("claim")
        if claim.subject_id != trace.subject_id:
            raise Problem(
                "claim_not_in_subject",
                "Change a claim of the subject the trace recalled.",
                errors={"claim": [f"Not a claim of {trace.subject_key}."]},
            )
        found = recall_counterfactual(
            tenant=context.tenant,
            trace=trace,
            claim=claim,
            change=values["change"],
            correction=(values.get("text", ""), values.get("value")),
        )
        return Response(for_agent(CounterfactualOut(counterfactual_data(trace, found)).data))
