"""Agent endpoints for the ledger, claims, recall and hot memory."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet, Subquery
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import ApiContext, api_context, capability_required
from common.hidden_chars import for_agent
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import Problem, not_found, problem_body
from common.query import query_values
from common.schema import ILLEGAL_TRANSITION, NOT_FOUND, VALIDATION_ERROR
from memory.api.claims.batch_reader import ItemReader
from memory.api.claims.serializers import (
    BatchIn,
    CandidateIn,
    ClaimDetailOutput,
    ClaimListInput,
    ClaimOutput,
    DeriveIn,
    EventInput,
    EventOutput,
    GateRulesOut,
    HotMemoryOut,
    InvalidateIn,
    RecallIn,
    RecallOut,
    VerdictOut,
    verdict_data,
)
from memory.gate import GATE_RULES, INJECTION_SIGNALS, INJECTION_THRESHOLD
from memory.models import Claim, Event, Subject
from memory.selectors.claims import claim_get, claim_history, claims_visible, subject_get
from memory.selectors.hot_memory import hot_memory
from memory.selectors.recall_ranking import RecallQuery
from memory.selectors.traces import claim_value
from memory.sensitivity import EPHEMERAL_RULES, SENSITIVITY_RULES, needs_consent
from memory.services.claim_inputs import CandidateInput
from memory.services.claim_moves import claim_invalidate
from memory.services.claims import claim_submit
from memory.services.claims_batch import claims_submit_batch
from memory.services.events import event_record
from memory.services.recall import hot_memory_trace, recall_run, recall_run_across
from memory.services.subjects import parse_subject_key

EVENTS_WRITE = capability_required("events:write")
CLAIMS_WRITE = capability_required("claims:write")
CLAIMS_READ = capability_required("claims:write", "recall")
RECALL = capability_required("recall")


def _check_subject(context: ApiContext, key: str) -> None:
    parse_subject_key(key)
    if not context.may_touch_subject(key):
        # Outside the token's subjects looks exactly like "does not exist".
        raise not_found("subject")


class EventCreateView(APIView):
    permission_classes = [EVENTS_WRITE]

    @extend_schema(
        request=EventInput,
        responses={201: EventOutput, 400: VALIDATION_ERROR},
        summary="Append an event to the ledger",
        description="The event keeps the stronger of its `sensitivity` and the class the gate's "
        "rules find (see `/gate/rules`). Errors: `validation_error`, `subject_invalid`, "
        "`secret_detected`, `ephemeral_value` (a one-time code, temporary path or session id; "
        "`kinds` names them), `consent_required` (a sensitive class the subject has not "
        "consented to; `consent_required` names it), `time_in_future` (`observed_at` later "
        "than now, give or take `MEMDESK_FUTURE_SKEW`; `errors` names the field). A refused "
        "event stores nothing.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = EventInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        subject = values.pop("subject")
        _check_subject(context, subject)
        event = event_record(
            tenant=context.tenant, actor=context.actor, subject_key=subject, **values
        )
        return Response(EventOutput(event).data, status=status.HTTP_201_CREATED)


class EventDetailView(APIView):
    permission_classes = [capability_required("events:write", "claims:write", "recall")]

    @extend_schema(responses={200: EventOutput, 404: NOT_FOUND}, summary="Read an event")
    def get(self, request: Request, event_id: Any) -> Response:
        context = api_context(request)
        event = (
            Event.objects.select_related("subject")
            .filter(tenant=context.tenant, pk=event_id)
            .first()
        )
        if event is None or not context.may_touch_subject(event.subject.key):
            raise not_found("event")
        return Response(EventOutput(event).data)


def _submit(
    context: ApiContext, data: CandidateIn, derived_from: list[Any] | None = None
) -> dict[str, Any]:
    candidate = data.to_candidate(derived_from=derived_from)
    _check_subject(context, candidate.subject)
    result = claim_submit(tenant=context.tenant, actor=context.actor, candidate=candidate)
    return verdict_data(result)


class ClaimPage(CursorPage):
    ordering = ("-recorded_at", "-id")


class ClaimListCreateView(ListAPIView):
    serializer_class = ClaimOutput
    pagination_class = ClaimPage

    def get_permissions(self) -> list[BasePermission]:
        return [CLAIMS_WRITE()] if self.request.method == "POST" else [CLAIMS_READ()]

    def get_queryset(self) -> QuerySet[Claim]:
        if getattr(self, "swagger_fake_view", False):
            return Claim.objects.none()
        context = api_context(self.request)
        filters = ClaimListInput(data=query_values(self.request))
        filters.is_valid(raise_exception=True)
        claims = claims_visible(
            tenant=context.tenant, allowed_subjects=context.allowed_subjects
        ).prefetch_related("sources")
        values = filters.validated_data
        if values.get("subject"):
            kind, _, ref = values["subject"].partition(":")
            # By the subject's id, so the page is a range of `claim_subject_recent`
            # (filtered through the join, it walked the tenant's newest claims instead).
            subject = Subject.objects.filter(tenant=context.tenant, kind=kind, ref=ref)
            claims = claims.filter(subject_id=Subquery(subject.values("id")[:1]))
        for name in ("status", "predicate", "kind"):
            if values.get(name):
                claims = claims.filter(**{name: values[name]})
        return claims

    @extend_schema(
        parameters=[ClaimListInput],
        summary="List claims (cursor pagination)",
        description="`?limit=` up to 500; errors: `validation_error`, `capability_required`.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=CandidateIn,
        responses={201: VerdictOut, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="Submit a candidate claim through the write gate",
        description=(
            "Returns the gate's verdict. `authority` and `basis` are upper bounds: the token's "
            "ceiling and the sources (a user-channel event for `user_explicit`, a tool result "
            "for `tool_verified` and `basis: verified`) decide what is stored, and each "
            "lowering adds a reason code (see `/gate/rules`). Errors: `source_required`, "
            "`source_not_found`, `scope_invalid`, `subject_invalid`, `validation_error`, "
            "`time_in_future` (`available_at`, `valid_from` or a source's `observed_at` later "
            "than now, give or take a few minutes; `errors` names the field; nothing is "
            "stored). `valid_to`, `expires_at` and `refresh_after` may lie in the future."
        ),
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = CandidateIn(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(_submit(context, data), status=status.HTTP_201_CREATED)


class ClaimBatchView(APIView):
    permission_classes = [CLAIMS_WRITE]
    throttle_scope = "claims_batch"

    @extend_schema(
        request=BatchIn,
        responses={200: OpenApiResponse(description='{"results": [verdict | {"error": problem}]}')},
        summary="Submit up to 1,000 candidates; each is judged alone",
        description=(
            'Each item gets a verdict or `{"error": problem}` in its place (`validation_error`, '
            "`source_required`, `source_not_found`, `scope_invalid`, `time_in_future`). More "
            "than 1,000 items is "
            "a `validation_error` for the whole request."
        ),
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        batch = BatchIn(data=request.data)
        batch.is_valid(raise_exception=True)
        results: list[dict[str, Any] | None] = []
        valid: list[tuple[int, CandidateInput]] = []
        # One serializer for every item, as a list serializer does: its fields
        # are built once, and each item's errors stay its own. The plain reader
        # reads a valid item as the serializer would, faster; the serializer
        # reads the rest and gives their errors.
        serializer = CandidateIn()
        reader = ItemReader(serializer)
        for index, raw in enumerate(batch.validated_data["items"]):
            try:
                validated = reader.read(raw)
                if validated is None:
                    validated = serializer.run_validation(raw)
                candidate = CandidateIn.candidate_from(validated)
                _check_subject(context, candidate.subject)
            except Problem as problem:
                results.append({"error": _problem_dict(problem, index)})
                continue
            except ValidationError as exc:
                results.append(
                    {
                        "error": problem_body(
                            status_code=400,
                            code="validation_error",
                            title="Invalid candidate",
                            detail=f"Item {index} is not valid; see `errors`.",
                            # Only the serializer raises it here, with its errors by field.
                            errors=cast("dict[str, Any]", exc.detail),
                        )
                    }
                )
                continue
            results.append(None)
            valid.append((index, candidate))
        outcomes = claims_submit_batch(
            tenant=context.tenant, actor=context.actor, candidates=[c for _, c in valid]
        )
        for (index, _), outcome in zip(valid, outcomes, strict=True):
            results[index] = (
                {"error": _problem_dict(outcome, index)}
                if isinstance(outcome, Problem)
                else verdict_data(outcome)
            )
        return Response({"results": results})


def _problem_dict(problem: Problem, index: int) -> dict[str, Any]:
    return problem_body(
        status_code=problem.status_code,
        code=problem.code,
        title=problem.title,
        detail=f"Item {index}: {problem.detail}",
        errors=problem.errors,
        **problem.extra,
    )


class ClaimDetailView(APIView):
    permission_classes = [CLAIMS_READ]

    @extend_schema(
        responses={200: ClaimDetailOutput, 404: NOT_FOUND},
        summary="A claim with its history, sources, lineage and gate decision",
        description="Errors: `not_found`.",
    )
    def get(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        claim = claim_get(
            tenant=context.tenant, claim_id=claim_id, allowed_subjects=context.allowed_subjects
        )
        if claim is None:
            raise not_found("claim")
        history = list(claim_history(claim=claim))
        value = claim_value(tenant=context.tenant, claim_id=claim.pk)
        return Response(ClaimDetailOutput(claim, context={"history": history, "value": value}).data)


class ClaimInvalidateView(APIView):
    permission_classes = [CLAIMS_WRITE]

    @extend_schema(
        request=InvalidateIn,
        responses={
            200: ClaimOutput,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
        summary="Invalidate a claim; derived claims are flagged for review",
        description="Errors: `not_found`, `illegal_transition` (with `allowed`: the statuses "
        "the claim's writer may still move it to), `validation_error` (reason missing).",
    )
    def post(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        if (
            claim_get(
                tenant=context.tenant,
                claim_id=claim_id,
                allowed_subjects=context.allowed_subjects,
            )
            is None
        ):
            raise not_found("claim")
        data = InvalidateIn(data=request.data)
        data.is_valid(raise_exception=True)
        claim = claim_invalidate(
            tenant=context.tenant,
            actor=context.actor,
            claim_id=claim_id,
            reason=data.validated_data["reason"],
        )
        claim = Claim.objects.select_related("subject").prefetch_related("sources").get(pk=claim.pk)
        return Response(ClaimOutput(claim).data)


class ClaimDeriveView(APIView):
    permission_classes = [CLAIMS_WRITE]

    @extend_schema(
        request=DeriveIn,
        responses={201: VerdictOut, 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="Record a claim derived from this one (and any others in derived_from)",
        description="Goes through the write gate like a candidate; without `sources` the "
        "parents' sources are used. Errors: `not_found`, `derived_from_not_found`, "
        "`validation_error`, `time_in_future` (as for a candidate).",
    )
    @idempotent
    def post(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        parent = claim_get(
            tenant=context.tenant, claim_id=claim_id, allowed_subjects=context.allowed_subjects
        )
        if parent is None:
            raise not_found("claim")
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["The body must be a JSON object."]})
        payload = dict(request.data)
        if not payload.get("sources"):
            # A derivation's evidence is its parents' evidence.
            # A parent's evidence about a subject outside the token stays out of sight.
            payload["sources"] = [
                {"event": str(s.event_id)} if s.event_id else {"uri": s.uri}
                for s in parent.sources.select_related("event__subject")
                if s.event is None or context.may_touch_subject(s.event.subject.key)
            ]
        data = DeriveIn(data=payload)
        data.is_valid(raise_exception=True)
        parents = list(dict.fromkeys([parent.id, *data.validated_data.get("derived_from", [])]))
        for other in parents:
            if (
                claim_get(
                    tenant=context.tenant, claim_id=other, allowed_subjects=context.allowed_subjects
                )
                is None
            ):
                raise not_found("claim")
        return Response(_submit(context, data, derived_from=parents), status=201)


class GateRulesView(APIView):
    """The write gate's rules as data: every reason code, its decision and what it means."""

    @extend_schema(
        responses={200: GateRulesOut},
        summary="The write gate's reason codes with their decisions and descriptions",
        description="Also the injection classifier as data: each signal's weight and "
        "patterns, and the threshold at which a claim is quarantined; the sensitivity classes "
        "with their patterns and whether they need the subject's consent; the ephemeral "
        "values never remembered.",
    )
    def get(self, request: Request) -> Response:
        api_context(request)
        rules = [
            {"code": r.code, "decision": r.decision, "description": r.description}
            for r in GATE_RULES
        ]
        signals = [
            {
                "code": signal.code,
                "description": signal.description,
                "weight": signal.weight,
                "patterns": list(signal.patterns),
            }
            for signal in INJECTION_SIGNALS
        ]
        return Response(
            {
                "results": rules,
                "next": None,
                "sensitivity_rules": [
                    {
                        "sensitivity": rule.sensitivity,
                        "description": rule.description,
                        "needs_consent": needs_consent(rule.sensitivity),
                        "patterns": list(rule.patterns),
                    }
                    for rule in SENSITIVITY_RULES
                ],
                "ephemeral_rules": [
                    {
                        "kind": rule.kind,
                        "description": rule.description,
                        "patterns": list(rule.patterns),
                    }
                    for rule in EPHEMERAL_RULES
                ],
                "injection_threshold": INJECTION_THRESHOLD,
                "injection_signals": signals,
            }
        )


class RecallView(APIView):
    permission_classes = [RECALL]

    @extend_schema(
        request=RecallIn,
        responses={200: RecallOut, 400: OpenApiResponse(description="subject_required")},
        summary="Recall what the agent may use about one subject (or several)",
        description="Builds the legal set (tenant, subject, scope, status, validity, cutoff, "
        "expiry, staleness) before ranking; `excluded` counts what each rule removed. "
        "Errors: `subject_required`, `subject_invalid`, `validation_error`, `not_found` "
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
            _check_subject(context, subject_key)
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
                "excluded": result.excluded,
                "trace_id": str(trace_id),
                "trace_url": reverse("recall-trace", kwargs={"trace_id": trace_id}),
                "traces": {subject_key: str(value) for subject_key, value in traces.items()},
            }
        )


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
        description="Never longer than `budget_chars`; send `If-None-Match` with the ETag to "
        "get 304. Errors: `not_found`, `validation_error`.",
    )
    def get(self, request: Request, subject: str) -> Response:
        context = api_context(request)
        _check_subject(context, subject)
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
