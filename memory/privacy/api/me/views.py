"""End-user endpoints: what is remembered about me, correct it, delete it, read the report.

People reach these with their console session (CSRF token in `X-CSRFToken`);
agent tokens are refused. A user sees only the subjects linked to them:
anything else, another user's memories included, is `404`.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context
from accounts.selectors import owned_subject_keys
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import Problem, not_found
from common.query import query_values
from common.schema import ILLEGAL_TRANSITION, NOT_FOUND, PERSON_REQUIRED
from memory.claims.models import Claim
from memory.claims.services.corrections import memory_correct
from memory.privacy.api.me.serializers import (
    ConsentListOut,
    ConsentsIn,
    CorrectIn,
    DeleteAllIn,
    DeletionAcceptedOut,
    DeletionOut,
    MeMemoryListIn,
    MeMemoryOut,
)
from memory.privacy.selectors.consent import me_consents
from memory.privacy.selectors.deletion import deletion_get
from memory.privacy.selectors.me import me_memories, me_memory_get, me_subjects
from memory.privacy.services.consent import consents_set
from memory.privacy.services.deletion import deletion_request_create


class PersonRequired(permissions.BasePermission):
    """The caller signed in to the console; agent tokens never act for an end user."""

    def has_permission(self, request: Request, view: object) -> bool:
        if api_context(request).is_agent:
            raise Problem(
                "person_required",
                "This call is made by a signed-in person with their session, not an agent.",
                status_code=403,
            )
        return True


class MePage(CursorPage):
    ordering = ("-recorded_at", "-id")


class MeMemoryListView(ListAPIView):
    permission_classes = [PersonRequired]
    serializer_class = MeMemoryOut
    pagination_class = MePage

    def get_queryset(self) -> QuerySet[Claim]:
        if getattr(self, "swagger_fake_view", False):
            return Claim.objects.none()
        context = api_context(self.request)
        filters = MeMemoryListIn(data=query_values(self.request))
        filters.is_valid(raise_exception=True)
        return me_memories(
            tenant=context.tenant,
            user=self.request.user,
            subject_key=filters.validated_data.get("subject"),
            status=filters.validated_data.get("status"),
        )

    @extend_schema(
        parameters=[MeMemoryListIn],
        responses={200: MeMemoryOut(many=True), 403: PERSON_REQUIRED},
        operation_id="me_memories_list",
        summary="What memdesk remembers about me",
        description="Claims about the subjects linked to the signed-in user, every status but "
        "erased, newest first, with sources, scope and last use. Cursor pagination "
        "(`?limit=` up to 500). Errors: `person_required`, `validation_error`.",
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        parameters=[DeleteAllIn],
        request=None,
        responses={202: DeletionAcceptedOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="me_memories_delete_all",
        summary="Forget everything about me",
        description="Starts one deletion per subject linked to the user (or only `?subject=`). "
        "Answers at once; workers erase along lineage and verify with probes: follow "
        "`GET /api/v1/deletions/{id}`. Asking again while a deletion runs returns it. "
        "Errors: `person_required`, `not_found` (no memories about the user or that subject).",
    )
    def delete(self, request: Request) -> Response:
        context = api_context(request)
        data = DeleteAllIn(data=query_values(request))
        data.is_valid(raise_exception=True)
        subjects = me_subjects(tenant=context.tenant, user=request.user)
        if data.validated_data.get("subject"):
            kind, _, ref = data.validated_data["subject"].partition(":")
            subjects = subjects.filter(kind=kind, ref=ref)
        ids = [
            str(
                deletion_request_create(
                    tenant=context.tenant,
                    actor=context.actor,
                    subject=subject,
                    requested_by=request.user,
                )[0].pk
            )
            for subject in subjects
        ]
        if not ids:
            raise not_found("memories")
        return Response({"deletion": ids[0], "deletions": ids}, status=status.HTTP_202_ACCEPTED)


class MeMemoryDetailView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={200: MeMemoryOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="me_memory_get",
        summary="One memory about me",
        description="Errors: `person_required`, `not_found` (erased, or not about the user).",
    )
    def get(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        claim = me_memory_get(tenant=context.tenant, user=request.user, claim_id=claim_id)
        if claim is None:
            raise not_found("memory")
        return Response(MeMemoryOut(claim).data)

    @extend_schema(
        request=None,
        responses={202: DeletionAcceptedOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="me_memory_delete",
        summary="Forget one memory about me",
        description="Erases the memory with the revisions it replaced, and propagates along "
        "lineage: derived claims, the user's own statements in the ledger, search indexes, "
        "hot memory, recall traces. Answers at once; follow `GET /api/v1/deletions/{id}`. "
        "Errors: `person_required`, `not_found` (erased, or not about the user).",
    )
    def delete(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        claim = me_memory_get(tenant=context.tenant, user=request.user, claim_id=claim_id)
        if claim is None:
            raise not_found("memory")
        deletion, _ = deletion_request_create(
            tenant=context.tenant,
            actor=context.actor,
            subject=claim.subject,
            claim=claim,
            requested_by=request.user,
        )
        return Response(
            {"deletion": str(deletion.pk), "deletions": [str(deletion.pk)]},
            status=status.HTTP_202_ACCEPTED,
        )


class MeMemoryCorrectView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        request=CorrectIn,
        responses={
            201: MeMemoryOut,
            400: OpenApiResponse(
                description="Problem details: validation_error, correction_unchanged, "
                "correction_refused (with the gate's `reasons`), secret_detected"
            ),
            403: PERSON_REQUIRED,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
        operation_id="me_memory_correct",
        summary="Correct a memory about me",
        description="Records the correction in the ledger as the user's statement and makes "
        "it a `user_explicit` revision that supersedes the memory; claims derived from the old "
        "revision are invalidated. Accepts `Idempotency-Key`. Errors: `person_required`, "
        "`not_found`, `correction_unchanged`, `correction_refused`, `secret_detected`, "
        "`illegal_transition` (a superseded or invalidated memory is history).",
    )
    @idempotent
    def post(self, request: Request, claim_id: Any) -> Response:
        context = api_context(request)
        claim = me_memory_get(tenant=context.tenant, user=request.user, claim_id=claim_id)
        if claim is None:
            raise not_found("memory")
        data = CorrectIn(data=request.data)
        data.is_valid(raise_exception=True)
        current = memory_correct(
            tenant=context.tenant,
            actor=context.actor,
            claim_id=claim.pk,
            value=data.validated_data["value"],
            text=data.validated_data["text"],
        )
        corrected = me_memory_get(tenant=context.tenant, user=request.user, claim_id=current.pk)
        return Response(MeMemoryOut(corrected).data, status=status.HTTP_201_CREATED)


class DeletionDetailView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={200: DeletionOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="deletion_get",
        summary="A deletion's status and report",
        description="Status (`pending` → `propagating` → `verifying` → `completed` | `failed`) "
        "and the report: artifacts touched per kind and every probe run with its query and "
        "result. End users read their own; editors, admins and auditors every deletion of "
        "the tenant. Errors: `person_required`, `not_found`.",
    )
    def get(self, request: Request, deletion_id: Any) -> Response:
        context = api_context(request)
        deletion = deletion_get(
            tenant=context.tenant,
            user=request.user,
            role=context.actor.role,
            deletion_id=deletion_id,
        )
        if deletion is None:
            raise not_found("deletion")
        return Response(DeletionOut(deletion).data)


def _consent_rows(context: Any, user: Any) -> list[dict[str, Any]]:
    return [
        {
            "subject": row.subject,
            "sensitivity": row.sensitivity,
            "label": row.label,
            "description": row.description,
            "granted": row.granted,
            "changed_at": row.changed_at,
        }
        for row in me_consents(tenant=context.tenant, user=user)
    ]


class MeConsentsView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={200: ConsentListOut, 403: PERSON_REQUIRED},
        operation_id="me_consents_list",
        summary="What I let memdesk remember",
        description="Each sensitive class (minors, health, genetic_biometric, "
        "sexual_orientation, criminal_record, religion, ethnic_origin, political, trade_union, "
        "credentials_adjacent, finance, location, and `sensitive` for what an agent marks "
        "sensitive without a class) for each "
        "subject linked to the user, granted or not. Without consent for a class, memories of "
        "it are rejected by the write gate (`consent_required`) and nothing of them is kept. "
        "Errors: `person_required`.",
    )
    def get(self, request: Request) -> Response:
        context = api_context(request)
        return Response({"results": _consent_rows(context, request.user), "next": None})

    @extend_schema(
        request=ConsentsIn,
        responses={200: ConsentListOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="me_consents_set",
        summary="Grant or withdraw consent per class",
        description="Withdrawing a class deletes every memory it covered through the deletion "
        "pipeline: one deletion per memory, listed in `deletions` (follow "
        "`GET /api/v1/deletions/{id}` for each report). Classes left out stay as they are; "
        "setting a class to what it is changes nothing. Errors: `person_required`, "
        "`validation_error` (unknown class, not a boolean), `not_found` (a subject not "
        "linked to the user).",
    )
    def put(self, request: Request) -> Response:
        context = api_context(request)
        data = ConsentsIn(data=request.data)
        data.is_valid(raise_exception=True)
        keys = owned_subject_keys(tenant=context.tenant, user=request.user)
        wanted = data.validated_data.get("subject")
        if wanted is not None:
            if wanted not in keys:
                raise not_found("subject")
            keys = [wanted]
        if not keys:
            raise not_found("subject")
        outcome = consents_set(
            tenant=context.tenant,
            actor=context.actor,
            subject_keys=keys,
            changes=dict(data.validated_data["consents"]),
            user=request.user,
        )
        return Response(
            {
                "results": _consent_rows(context, request.user),
                "next": None,
                "deletions": [str(d.pk) for d in outcome.deletions],
            }
        )
