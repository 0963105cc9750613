"""A version's lifecycle through the API: submit, approve, reject, publish, deprecate,
revoke and roll back, each with its reason and each refused with a problem when the
state machine, the four-eyes rule or the evaluation matrix says no."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context
from common.idempotency import idempotent
from common.schema import (
    CAPABILITY_OR_ROLE_REQUIRED,
    ILLEGAL_TRANSITION,
    NOT_FOUND,
)
from skills import selectors, services
from skills.api.serializers import (
    LabelMoveOutput,
    ReasonInput,
    RevokeOutput,
    RollbackInput,
    VersionApprovalOutput,
    VersionOutput,
)
from skills.api.views import ADMINS, WRITERS, skill_or_404, version_or_404


class ReasonedVersionAction(APIView):
    """An admin's lifecycle step on one version: a reason in, the version out."""

    permission_classes = [ADMINS]
    service: Any

    def act(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        version = self.service(
            tenant=context.tenant,
            version=version_or_404(request, slug, number),
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        return Response(VersionOutput(version).data)


class SubmitView(APIView):
    permission_classes = [WRITERS]

    @extend_schema(
        summary="Submit a draft for review (opens a skill_publication review item)",
        request=None,
        responses={
            200: VersionOutput,
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        version = services.skill_version_submit(
            tenant=context.tenant,
            version=version_or_404(request, slug, number),
            actor=context.actor,
        )
        return Response(VersionOutput(version).data)


class ApproveView(ReasonedVersionAction):
    @extend_schema(
        summary="Approve a version in review (admins; not its author)",
        description="A version that adds capabilities or raises risk to high needs two "
        "admins, neither its author: after the first it answers still `in_review` with "
        "`approvals` 1 of `approvals_required` 2. People are compared, not tokens: a token "
        "acts for its owner.",
        request=ReasonInput,
        responses={
            200: VersionApprovalOutput,
            403: OpenApiResponse(description="`role_required`, `admin_approval_required`"),
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="`author_cannot_approve`, `second_approver_required`, "
                "`illegal_transition`"
            ),
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        version = services.skill_version_approve(
            tenant=context.tenant,
            version=version_or_404(request, slug, number),
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        progress = selectors.approval_progress(tenant=context.tenant, version=version)
        return Response(VersionApprovalOutput(version, context={"approvals": progress}).data)


class RejectView(ReasonedVersionAction):
    service = staticmethod(services.skill_version_reject)

    @extend_schema(
        summary="Reject a version in review (admins; a reason is required)",
        request=ReasonInput,
        responses={
            200: VersionOutput,
            400: OpenApiResponse(description="`reason_required`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        return self.act(request, slug, number)


class PublishView(ReasonedVersionAction):
    service = staticmethod(services.skill_version_publish)

    @extend_schema(
        summary="Publish an approved version and move production to it (admins; not its author)",
        description="Needs the latest result of all six evaluation categories passed on this "
        "version's content hash, each by a person other than its author. `reason` defaults "
        "to `publish v<n>`.",
        request=ReasonInput,
        responses={
            200: VersionOutput,
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="`evaluation_incomplete` (with `missing` and `failed`), "
                "`author_cannot_publish`, `illegal_transition`"
            ),
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        return self.act(request, slug, number)


class DeprecateView(ReasonedVersionAction):
    service = staticmethod(services.skill_version_deprecate)

    @extend_schema(
        summary="Deprecate a published version (admins); loads then carry a Warning header",
        request=ReasonInput,
        responses={
            200: VersionOutput,
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        return self.act(request, slug, number)


class RevokeView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        summary="Revoke a version: every later load is 410, exact pins included (admins)",
        description="If the version held production, production falls back to the newest "
        "published version. The answer says how many instances loaded it in the last 24 h.",
        request=ReasonInput,
        responses={
            200: RevokeOutput,
            400: OpenApiResponse(description="`reason_required`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: ILLEGAL_TRANSITION,
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.skill_version_revoke(
            tenant=context.tenant,
            version=version_or_404(request, slug, number),
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        production = selectors.production_version(tenant=context.tenant, skill=result.version.skill)
        return Response(
            RevokeOutput(
                {
                    "version": result.version,
                    "production": production.number if production else None,
                    "label_move": result.label_move,
                    "instances_last_24h": result.instances_last_24h,
                }
            ).data
        )


class RollbackView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        summary="Move production to another published version (admins; reason required)",
        request=RollbackInput,
        responses={
            200: LabelMoveOutput,
            400: OpenApiResponse(description="`reason_required`, `validation_error`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="`rollback_target_invalid`"),
        },
    )
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        context = api_context(request)
        data = RollbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        move = services.skill_rollback(
            tenant=context.tenant,
            skill=skill_or_404(request, slug),
            to_number=data.validated_data["to"],
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        return Response(LabelMoveOutput(move).data)
