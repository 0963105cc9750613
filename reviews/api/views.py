from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, role_required
from common.pagination import CursorPage
from common.problems import not_found
from reviews import selectors, services
from reviews.api.serializers import DecideInput, DecisionOutput, ReviewItemOutput
from reviews.filters import ReviewItemFilter
from reviews.models import ReviewItem

EDITORS = role_required("editor")


class ReviewPage(CursorPage):
    ordering = ("created_at", "id")


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
            400: OpenApiResponse(description="reason_required, invalid_verdict"),
            409: OpenApiResponse(description="item_claimed, target_changed, item_closed"),
        },
        summary="Decide a review item",
    )
    def post(self, request: Request, item_id: int) -> Response:
        context = api_context(request)
        if selectors.review_item_get(tenant=context.tenant, item_id=item_id) is None:
            raise not_found("review item")
        data = DecideInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        verdict = values.pop("verdict")
        reason_code = values.pop("reason_code")
        note = values.pop("note")
        decision = services.review_decide(
            tenant=context.tenant,
            item_id=item_id,
            actor=context.actor,
            verdict=verdict,
            reason_code=reason_code,
            note=note,
            payload=values,
        )
        return Response(DecisionOutput(decision).data)
