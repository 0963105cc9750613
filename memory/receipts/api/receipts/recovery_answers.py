"""Recovery's log over the API: the answers given, and verdicts on them
(docs/reliability.md, "Recovery correctness")."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import agent_or_people, api_context
from accounts.models import Role
from common.pagination import CursorPage
from common.problems import not_found
from common.query import query_values
from common.schema import AGENT_AUTH, NOT_FOUND, VALIDATION_ERROR
from memory.receipts.models.recovery_log import RecoveryAnswerRecord, VerdictSource
from memory.receipts.selectors.recovery_log import (
    VerdictFilter,
    recovery_answer_get,
    recovery_answers_query,
)
from memory.receipts.services.recovery import RecoveryDecision, RecoveryReason
from memory.receipts.services.recovery_log import recovery_verdict_record

# The agents that may ask recovery, and the people who judge its answers.
JUDGES = agent_or_people(("checkpoints:write", "receipts:write"), Role.EDITOR)


# The latest verdict as the answer shows it (`source` cannot be a serializer's field name).
VERDICT = inline_serializer(
    name="RecoveryVerdictOutput",
    fields={
        "expected": serializers.ChoiceField(choices=RecoveryDecision.choices),
        "source": serializers.ChoiceField(choices=VerdictSource.choices),
        "by": serializers.CharField(help_text="Who gave it (a token's or a person's name)."),
        "note": serializers.CharField(),
    },
    allow_null=True,
)


class RecoveryAnswerOutput(serializers.ModelSerializer):
    decision = serializers.ChoiceField(choices=RecoveryDecision.choices)
    reason = serializers.ChoiceField(choices=RecoveryReason.choices)
    verdict = serializers.SerializerMethodField(
        help_text="The latest verdict, or null while nobody has judged the answer."
    )
    correct = serializers.SerializerMethodField(
        help_text="Whether the latest verdict agrees with the answer; null when unjudged."
    )

    class Meta:
        model = RecoveryAnswerRecord
        fields = ["id", "task_key", "run_id", "decision", "reason", "folded", "latency_seconds",
                  "from_trigger", "answered_at", "verdict", "correct"]  # fmt: skip

    @extend_schema_field(VERDICT)
    def get_verdict(self, answer: RecoveryAnswerRecord) -> dict[str, str] | None:
        # The latest verdict's columns, annotated by the selector.
        expected = getattr(answer, "expected", None)
        if expected is None:
            return None
        return {
            "expected": expected,
            "source": getattr(answer, "verdict_source", ""),
            "by": getattr(answer, "verdict_by", ""),
            "note": getattr(answer, "verdict_note", ""),
        }

    @extend_schema_field(serializers.BooleanField(allow_null=True))
    def get_correct(self, answer: RecoveryAnswerRecord) -> bool | None:
        expected = getattr(answer, "expected", None)
        return None if expected is None else expected == answer.decision


class RecoveryVerdictInput(serializers.Serializer):
    expected = serializers.ChoiceField(
        choices=RecoveryDecision.choices,
        help_text="What recovery should have answered. The answer's own decision confirms it.",
    )
    note = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=2000,
        help_text="Why. A person overturning an answer must say.",
    )


class RecoveryAnswerListInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=RecoveryDecision.choices, required=False)
    verdict = serializers.ChoiceField(
        choices=VerdictFilter.CHOICES,
        required=False,
        help_text="`unjudged`, `confirmed` (the latest verdict agrees) or `overturned`.",
    )
    task_key = serializers.CharField(max_length=255, required=False)


class RecoveryAnswerPage(CursorPage):
    ordering = ("-answered_at", "-id")


class RecoveryAnswerListView(ListAPIView):
    permission_classes = [JUDGES]
    serializer_class = RecoveryAnswerOutput
    pagination_class = RecoveryAnswerPage

    def get_queryset(self) -> QuerySet[RecoveryAnswerRecord]:
        if getattr(self, "swagger_fake_view", False):
            return RecoveryAnswerRecord.objects.none()
        filters = RecoveryAnswerListInput(data=query_values(self.request))
        filters.is_valid(raise_exception=True)
        context = api_context(self.request)
        return recovery_answers_query(
            tenant=context.tenant, actor=context.actor, **filters.validated_data
        )

    @extend_schema(
        parameters=[RecoveryAnswerListInput],
        responses={200: RecoveryAnswerOutput(many=True), 400: VALIDATION_ERROR, **AGENT_AUTH},
        summary="List recovery's answers, newest first",
        description=(
            "Every answer `POST /api/v1/recovery` gave, with its latency and latest verdict. "
            "A token sees the answers it was given (all of them with `receipts:operate`); "
            "editors see the tenant's."
        ),
    )
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)


class RecoveryVerdictView(APIView):
    permission_classes = [JUDGES]

    @extend_schema(
        request=RecoveryVerdictInput,
        responses={200: RecoveryAnswerOutput, 400: VALIDATION_ERROR, 404: NOT_FOUND, **AGENT_AUTH},
        summary="Say what a recovery answer should have been",
        description=(
            "Confirm an answer (`expected` equal to its decision) or overturn it. An agent's "
            "verdict is a replay's (it knows the fault it injected); a person's is a review's "
            "and needs a `note` to overturn (`400 note_required`). The latest verdict counts "
            "in the recovery correctness figure. An answer the caller cannot see is `404`."
        ),
    )
    def post(self, request: Request, answer_id: int) -> Response:
        data = RecoveryVerdictInput(data=request.data)
        data.is_valid(raise_exception=True)
        context = api_context(request)
        recovery_verdict_record(
            tenant=context.tenant, actor=context.actor, answer_id=answer_id, **data.validated_data
        )
        answer = recovery_answer_get(
            tenant=context.tenant, actor=context.actor, answer_id=answer_id
        )
        if answer is None:
            raise not_found("recovery answer")
        return Response(RecoveryAnswerOutput(answer).data)
