"""The ledger's write, list and read by id: `POST /events` (an observation, never changed
afterwards), `GET /events` (by run, stage, kind or key) and `GET /events/{id}`."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import not_found
from common.query import query_values
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.claims.serializers import EventInput, EventListInput, EventOutput
from memory.claims.api.claims.views import EVENTS_WRITE, check_subject
from memory.claims.models import Event
from memory.claims.selectors.events import events_list
from memory.claims.services.events import event_record
from memory.claims.services.protocol_events import ProtocolFields

EVENTS_READ = capability_required("events:write", "claims:write", "recall")
PROTOCOL_FIELDS = (
    "stage",
    "input_fingerprint",
    "policy_version",
    "idempotency_key",
    "effect",
    "evidence",
)


class EventPage(CursorPage):
    ordering = ("-recorded_at", "-id")


class EventCreateView(ListAPIView):
    serializer_class = EventOutput
    pagination_class = EventPage

    def get_permissions(self) -> list[BasePermission]:
        return [EVENTS_WRITE()] if self.request.method == "POST" else [EVENTS_READ()]

    def get_queryset(self) -> QuerySet[Event]:
        if getattr(self, "swagger_fake_view", False):
            return Event.objects.none()
        context = api_context(self.request)
        filters = EventListInput(data=query_values(self.request))
        filters.is_valid(raise_exception=True)
        values = filters.validated_data
        if values.get("subject"):
            check_subject(context, values["subject"])
        return events_list(
            tenant=context.tenant, allowed_subjects=context.allowed_subjects, **values
        )

    @extend_schema(
        parameters=[EventListInput],
        responses={200: EventOutput(many=True), 400: VALIDATION_ERROR, 404: NOT_FOUND},
        summary="List ledger events by run, stage, kind or key (cursor pagination)",
        description="Newest first; every filter given must match. Only the subjects the "
        "token may read; never a redacted event. `?limit=` up to 500. Errors: "
        "`validation_error`, `subject_invalid`, `cursor_invalid`, `not_found` (a `subject` "
        "outside the token).",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

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
        "event stores nothing. An event with a `stage` is a step of a run "
        "(docs/protocol.md): its `kind` is one of started, proposed, succeeded, failed, "
        "skipped, verified; `effect` needs system, operation and reference; a `verified` "
        "step needs `evidence`; the other protocol fields need a `stage`. Otherwise "
        "`protocol_event_invalid` (`errors` names each field).",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = EventInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        subject = values.pop("subject")
        check_subject(context, subject)
        protocol = ProtocolFields(**{name: values.pop(name) for name in PROTOCOL_FIELDS})
        event = event_record(
            tenant=context.tenant,
            actor=context.actor,
            subject_key=subject,
            protocol=protocol,
            **values,
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
