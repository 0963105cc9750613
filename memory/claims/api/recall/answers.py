"""What an agent may use: `POST /recall` (the legal set ranked, each item with its why,
and a trace) and a subject's hot memory (the block as rendered, revalidated by ETag)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context
from common.hidden_chars import for_agent
from common.problems import Problem, not_found
from common.schema import NOT_FOUND
from memory.claims.api.claims.serializers import HotMemoryOut, RecallIn, RecallOut
from memory.claims.api.claims.views import RECALL, check_subject
from memory.claims.selectors.claims import RecallResult, subject_get
from memory.claims.selectors.hot_memory import hot_memory
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.services.recall import hot_memory_trace, recall_run, recall_run_across


class RecallView(APIView):
    permission_classes = [RECALL]

    @extend_schema(
        request=RecallIn,
        responses={200: RecallOut, 400: OpenApiResponse(description="subject_required")},
        summary="Recall what the agent may use about one subject (or several)",
        description="Builds the legal set (tenant, subject, scope, status, validity, cutoff, "
        "expiry, staleness) before ranking; `excluded` counts what each rule removed. "
        "Each item's `relevance` says how surely it is about the question. When no legal "
        "claim is relevant enough (below `RECALL_ABSTAIN_FLOOR`), recall abstains: "
        '`{"items": [], "abstained": true, "abstention": {"reason": "nothing_relevant", '
        '"best_relevance": 0.19, "floor": 0.3}, ...}`. A recall without a query never '
        "abstains. Errors: `subject_required`, `subject_invalid`, `validation_error`, `not_found` "
        "(subject outside the token), `cross_subject_not_allowed` (403: `subjects` from a "
        "token not limited to named subjects).",
    )
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = RecallIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        key = values.get("subject") or ""
        across = list(dict.fromkeys(values["subjects"]))
        if key and across:
            raise Problem(
                "validation_error",
                "Give `subject` or `subjects`, not both.",
                errors={"subjects": ["Leave out `subject` when naming several subjects."]},
            )
        if not key and not across:
            raise Problem(
                "subject_required",
                "Recall needs a subject; recall across subjects needs `subjects` and a token "
                "that lists them.",
                errors={"subject": ["Name the subject, e.g. user:alice."]},
            )
        for subject_key in across or [key]:
            check_subject(context, subject_key)
        if len(across) > 1 and context.allowed_subjects is None:
            raise Problem(
                "cross_subject_not_allowed",
                "Recall across subjects is only for a token that lists its subjects; this "
                "token is not limited to named subjects. Recall one subject at a time.",
                status_code=403,
            )
        key = key or across[0]
        q = RecallQuery(
            subject=subject_get(tenant=context.tenant, key=key),
            scope=values["scope"],
            query=values["query"],
            as_of=values["as_of"],
            cutoff=values["cutoff"],
            kinds=values["kinds"],
            limit=values["limit"],
            budget_chars=values["budget_chars"],
            include_stale=values["include_stale"],
        )
        known = [
            subject
            for subject in (subject_get(tenant=context.tenant, key=k) for k in across)
            if subject is not None
        ]
        if len(across) > 1 and known:
            result, traces = recall_run_across(
                tenant=context.tenant, actor=context.actor, subjects=known, q=q
            )
            trace_id = next(iter(traces.values()))
        else:
            result, trace_id = recall_run(
                tenant=context.tenant, actor=context.actor, subject_key=key, q=q
            )
            traces = {key: trace_id}
        items = [
            {
                "id": str(item.claim.id),
                "subject": item.claim.subject.key,
                "kind": item.claim.kind,
                "predicate": item.claim.predicate,
                "value": for_agent(item.claim.value),
                "text": for_agent(item.claim.text),
                "scope": item.claim.scope,
                "authority": item.claim.authority,
                "valid_from": item.claim.valid_from,
                "valid_to": item.claim.valid_to,
                "available_at": item.claim.available_at,
                "stale": item.stale,
                "sources": [
                    {
                        "event": str(s.event_id) if s.event_id else None,
                        "uri": s.uri,
                        "observed_at": s.observed_at,
                        "digest": s.digest,
                        "added_at": s.added_at,
                    }
                    for s in item.sources
                ],
                "conflict": for_agent(item.conflict),
                "relevance": item.relevance,
                "why": {
                    "rank": item.rank,
                    "matched": item.matched,
                    "scope_match": item.scope_match,
                    "signals": item.signals,
                    "semantic": item.semantic,
                },
            }
            for item in result.items
        ]
        return Response(
            {
                "items": items,
                "abstained": result.abstained,
                "abstention": abstention_data(result),
                "excluded": result.excluded,
                "trace_id": str(trace_id),
                "trace_url": reverse("recall-trace", kwargs={"trace_id": trace_id}),
                "traces": {subject_key: str(value) for subject_key, value in traces.items()},
            }
        )


def abstention_data(result: RecallResult) -> dict[str, Any] | None:
    """Why the answer is empty when recall abstained; none when it answered."""
    verdict = result.verdict
    if verdict is None or not verdict.abstained:
        return None
    return {
        "reason": verdict.reason,
        "best_relevance": None if verdict.best is None else round(verdict.best, 4),
        "floor": verdict.floor,
    }


def _hot_memory_scope(pairs: list[str]) -> dict[str, str]:
    """`scope=project=crm&scope=team=a` as a scope; a malformed pair is a problem."""
    scope: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value or len(pair) > 300 or key in scope:
            raise Problem(
                "validation_error",
                "Give each scope entry once, as key=value (e.g. scope=project=crm).",
                errors={"scope": [f"Not a key=value pair: {pair[:50]!r}."]},
            )
        scope[key] = value
    if len(scope) > 20:
        raise Problem(
            "validation_error",
            "A scope has at most 20 entries.",
            errors={"scope": ["Give at most 20 key=value pairs."]},
        )
    return scope


class HotMemoryView(APIView):
    permission_classes = [RECALL]

    @extend_schema(
        parameters=[
            OpenApiParameter("budget_chars", int, required=False),
            OpenApiParameter(
                "scope",
                str,
                required=False,
                many=True,
                description="The scope the block is for, one `key=value` per parameter "
                "(`scope=project=crm`). Only claims the scope contains are in the block "
                "(global claims always), and of those on one predicate only the most "
                "specific. Without it, only global claims.",
            ),
        ],
        responses={200: HotMemoryOut, 304: None, 404: NOT_FOUND},
        summary="A compact, budgeted block of the subject's most important active claims",
        description="Facts and preferences only: experiences and summaries are recalled, "
        "never carried in the block. Never longer than `budget_chars`; send "
        "`If-None-Match` with the ETag to get 304. Errors: `not_found`, `validation_error`.",
    )
    def get(self, request: Request, subject: str) -> Response:
        context = api_context(request)
        check_subject(context, subject)
        try:
            budget = int(request.query_params.get("budget_chars", 4000))
        except ValueError:
            budget = -1
        if not 1 <= budget <= 100_000:
            raise Problem(
                "validation_error",
                "budget_chars must be an integer from 1 to 100000.",
                errors={"budget_chars": ["Give 1 to 100000."]},
            )
        scope = _hot_memory_scope(request.query_params.getlist("scope"))
        found = subject_get(tenant=context.tenant, key=subject)
        if found is None:
            raise not_found("subject")
        block = hot_memory(tenant=context.tenant, subject=found, budget_chars=budget, scope=scope)
        etag = f'"{block.etag}"'
        if request.headers.get("If-None-Match") == etag:
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
        trace_id = hot_memory_trace(
            tenant=context.tenant,
            actor=context.actor,
            subject=found,
            claim_ids=block.claim_ids,
            budget_chars=budget,
        )
        body = {
            "subject": subject,
            "text": block.text,
            "budget_chars": budget,
            "chars": len(block.text),
            "claims": list(block.claim_ids),
            "trace_id": str(trace_id),
        }
        return Response(body, headers={"ETag": etag, "Cache-Control": "private, no-cache"})
