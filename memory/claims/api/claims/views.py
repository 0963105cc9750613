"""Agent endpoints for the ledger, claims, recall and hot memory."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet, Subquery
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import ApiContext, api_context, capability_required
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import Problem, not_found, problem_body
from common.query import query_values
from common.schema import ILLEGAL_TRANSITION, NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.claims.batch_reader import ItemReader
from memory.claims.api.claims.serializers import (
    BatchIn,
    CandidateIn,
    ClaimDetailOutput,
    ClaimListInput,
    ClaimOutput,
    DeriveIn,
    GateRulesOut,
    InvalidateIn,
    VerdictOut,
    verdict_data,
)
from memory.claims.gate import GATE_RULES, INJECTION_SIGNALS, INJECTION_THRESHOLD
from memory.claims.models import Claim, Subject
from memory.claims.selectors.claims import claim_get, claim_history, claims_visible
from memory.claims.selectors.traces import claim_value
from memory.claims.sensitivity import EPHEMERAL_RULES, SENSITIVITY_RULES, needs_consent
from memory.claims.services.claim_inputs import CandidateInput
from memory.claims.services.claim_moves import claim_invalidate
from memory.claims.services.claims import claim_submit
from memory.claims.services.claims_batch import claims_submit_batch
from memory.claims.services.subjects import parse_subject_key

EVENTS_WRITE = capability_required("events:write")
CLAIMS_WRITE = capability_required("claims:write")
CLAIMS_READ = capability_required("claims:write", "recall")
RECALL = capability_required("recall")


def check_subject(context: ApiContext, key: str) -> None:
    parse_subject_key(key)
    if not context.may_touch_subject(key):
        # Outside the token's subjects looks exactly like "does not exist".
        raise not_found("subject")


def _submit(
    context: ApiContext, data: CandidateIn, derived_from: list[Any] | None = None
) -> dict[str, Any]:
    candidate = data.to_candidate(derived_from=derived_from)
    check_subject(context, candidate.subject)
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
                check_subject(context, candidate.subject)
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
