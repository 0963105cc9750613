"""The ledger's write and read by id: `POST /events` (an observation, never changed
afterwards) and `GET /events/{id}`."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from common.idempotency import idempotent
from common.problems import not_found
from common.schema import NOT_FOUND, VALIDATION_ERROR
from memory.claims.api.claims.serializers import EventInput, EventOutput
from memory.claims.api.claims.views import EVENTS_WRITE, check_subject
from memory.claims.models import Event
from memory.claims.services.events import event_record


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
        check_subject(context, subject)
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
