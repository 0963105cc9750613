from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, role_required
from common.pagination import CursorPage
from common.problems import not_found
from reviews import selectors, services
from reviews.api.serializers import (
    DecideInput,
    DecisionOutput,
    DecisionUndoOutput,
    QueueOutput,
    ReviewItemOutput,
)
from reviews.filters import AGE_CHOICES, ReviewItemFilter
from reviews.models import ItemStatus, Queue, ReviewItem
from reviews.registry import policy_for

EDITORS = role_required("editor")


class ReviewPage(CursorPage):
    ordering = ("created_at", "id")


# The FilterSet is the console's too, where an empty choice means "any": the
# schema lists the empty value so that it documents what the filter takes.
_CHOICE_FILTERS = [
    OpenApiParameter(name, enum=[*(value for value, _ in choices), ""], description="Empty: any.")
    for name, choices in (
        ("queue", Queue.choices),
        ("status", ItemStatus.choices),
        ("older_than", AGE_CHOICES),
    )
]


class ReviewListView(ListAPIView):
    permission_classes = [EDITORS]
    serializer_class = ReviewItemOutput
    pagination_class = ReviewPage
    filterset_class = ReviewItemFilter

    def get_queryset(self) -> QuerySet[ReviewItem]:
        if getattr(self, "swagger_fake_view", False):
            return ReviewItem.objects.none()
        return selectors.review_items(tenant=api_context(self.request).tenant)

    @extend_schema(
        parameters=_CHOICE_FILTERS,
        summary="List review items",
        description="Filters are the console's: queue, status, subject, topic, agent, reason, "
        "older_than. Errors: `role_required`, `validation_error`.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class ReviewClaimView(APIView):
    permission_classes = [EDITORS]

    @extend_schema(
        request=None,
        responses={200: ReviewItemOutput, 409: OpenApiResponse(description="item_claimed")},
        summary="Claim a review item with a lease",
    )
    def post(self, request: Request, item_id: int) -> Response:
        context = api_context(request)
        item = services.review_claim(
            tenant=context.tenant, item_id=item_id, actor=context.actor, user=request.user
        )
        return Response(ReviewItemOutput(item).data)


class ReviewDecideView(APIView):
    permission_classes = [EDITORS]

    @extend_schema(
        request=DecideInput,
        responses={
            200: DecisionOutput,
            400: OpenApiResponse(
                description="reason_required, note_required, invalid_verdict, "
                "invalid_reason_code, validation_error (the queue's payload)"
            ),
            409: OpenApiResponse(description="item_claimed, target_changed, item_closed"),
        },
        summary="Decide a review item",
        description="Besides `verdict`, `reason_code` and `note`, the body carries the "
        "queue's payload fields at the top level (`winner`, `loser`, `scopes` for conflicts; "
        "`winner` for a candidate's merge; `external_id`, `evidence` for manual_review; "
        "`refresh_after` for stale; `retry` for deletions). `GET /api/v1/reviews/queues` "
        "lists each queue's verdicts, reason codes and payload fields.",
    )
    def post(self, request: Request, item_id: int) -> Response:
        context = api_context(request)
        if selectors.review_item_get(tenant=context.tenant, item_id=item_id) is None:
            raise not_found("review item")
        data = DecideInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        # The queue's own serializer judges the rest (in review_decide, as for the console).
        payload = {k: v for k, v in request.data.items() if k not in DecideInput.COMMON}
        decision = services.review_decide(
            tenant=context.tenant,
            item_id=item_id,
            actor=context.actor,
            verdict=values["verdict"],
            reason_code=values["reason_code"],
            note=values["note"],
            payload=payload,
        )
        return Response(DecisionOutput(decision).data)


class DecisionUndoView(APIView):
    permission_classes = [EDITORS]

    @extend_schema(
        request=None,
        responses={
            200: DecisionUndoOutput,
            403: OpenApiResponse(description="not_your_decision (only the decider or an admin)"),
            404: OpenApiResponse(description="not_found (no such decision on this tenant)"),
            409: OpenApiResponse(
                description="undo_expired (after `REVIEW_UNDO_SECONDS`), target_changed (the "
                "target moved since, e.g. an agent used or replaced it), not_undoable (the "
                "verdict cannot be called back: a merge, a settled receipt, a skill version, "
                "a deletion), already_undone"
            ),
        },
        summary="Undo a review decision within its window",
        description="The target returns to the state the decision found it in, the review "
        "item reopens held by the caller so it can be decided again, and the undo is recorded "
        "beside the decision (which stays). A decision's `undo_until` says until when.",
    )
    def post(self, request: Request, decision_id: int) -> Response:
        context = api_context(request)
        undo = services.review_undo(
            tenant=context.tenant, decision_id=decision_id, actor=context.actor, user=request.user
        )
        return Response(DecisionUndoOutput(undo).data)


class ReviewQueuesView(APIView):
    """What a decision may say in each queue, as the domain apps declared it."""

    permission_classes = [EDITORS]

    @extend_schema(
        responses={200: QueueOutput(many=True)},
        summary="List the queues with their verdicts, reason codes and payload fields",
    )
    def get(self, request: Request) -> Response:
        api_context(request)
        rows = []
        for queue in Queue:
            policy = policy_for(queue)
            if policy is None:
                continue
            payload = policy.payload()
            rows.append(
                {
                    "queue": queue.value,
                    "label": queue.label,
                    "verdicts": [
                        {
                            "verdict": verdict,
                            "label": label,
                            "needs_reason": policy.needs_reason(verdict),
                        }
                        for verdict, label in policy.verdict_choices()
                    ],
                    "note_is_reason": policy.note_is_reason,
                    "reason_codes": [{"code": c, "label": lbl} for c, lbl in policy.reasons],
                    "payload_fields": sorted(payload.fields),
                    "roles": list(policy.roles),
                }
            )
        return Response(QueueOutput(rows, many=True).data)
