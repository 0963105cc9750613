"""What agent tokens may run skills with and tell back: admins' grants of tools and runtime
capabilities, a changed secret, use reports, and loading several skills within a budget."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from accounts.selectors import agent_token_get
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import Problem
from common.schema import CAPABILITY_OR_ROLE_REQUIRED, NOT_FOUND
from skills import selectors, services
from skills.api.loading_serializers import (
    CredentialChangedInput,
    GrantInput,
    GrantListInput,
    GrantOutput,
    InvalidatedOutput,
    LoadAnswerOutput,
    LoadInput,
    UseReportInput,
    UseReportOutput,
)
from skills.api.loading_views import OVERRIDE_PARAMETER, require_ready_instance, resolved_body
from skills.api.views import ADMINS, READERS, permissions_for, version_or_404
from skills.composition import conflicts_between
from skills.models import LoadLevel
from skills.usage_models import TokenGrant


class GrantPage(CursorPage):
    ordering = "id"


class GrantListView(GenericAPIView):
    queryset = TokenGrant.objects.none()
    pagination_class = GrantPage
    serializer_class = GrantOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return permissions_for(self.request, read=READERS, write=ADMINS)

    @extend_schema(
        summary="The tools and runtime capabilities granted to agent tokens",
        parameters=[GrantListInput],
        responses=GrantOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        params = GrantListInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        grants = selectors.token_grants(
            tenant=api_context(request).tenant, token_id=params.validated_data.get("token")
        )
        page = self.paginate_queryset(grants)
        return self.get_paginated_response(GrantOutput(page, many=True).data)

    @extend_schema(
        summary="Grant an agent token a tool or a runtime capability (admins)",
        description="Skills needing a tool or capability (other than memdesk's own token "
        "capabilities) are found and instantiated only for tokens granted it.",
        request=GrantInput,
        responses={
            201: GrantOutput,
            400: OpenApiResponse(description="`validation_error`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="`grant_exists`"),
        },
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = GrantInput(data=request.data)
        data.is_valid(raise_exception=True)
        token = agent_token_get(tenant=context.tenant, token_id=data.validated_data["token"])
        if token is None:
            raise Problem("not_found", "This tenant has no such agent token.", status_code=404)
        grant = services.token_grant_add(
            tenant=context.tenant,
            actor=context.actor,
            token=token,
            kind=data.validated_data["kind"],
            name=data.validated_data["name"],
        )
        return Response(GrantOutput(grant).data, status=201)


class GrantDetailView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        summary="Withdraw a grant (admins): the token's instances needing it are invalidated",
        responses={200: InvalidatedOutput, 403: CAPABILITY_OR_ROLE_REQUIRED, 404: NOT_FOUND},
    )
    def delete(self, request: Request, pk: int) -> Response:
        context = api_context(request)
        grant = selectors.token_grant_get(tenant=context.tenant, pk=pk)
        if grant is None:
            raise Problem("not_found", "This tenant has no such grant.", status_code=404)
        invalidated = services.token_grant_remove(
            tenant=context.tenant, actor=context.actor, grant=grant
        )
        return Response(InvalidatedOutput({"invalidated": [i.pk for i in invalidated]}).data)


class CredentialChangedView(APIView):
    permission_classes = [capability_required("skills:read")]

    @extend_schema(
        summary="Report that a secret bound to credential slots was rotated or withdrawn",
        description="Every live instance of the tenant with a slot bound to that secret's "
        "name is invalidated: its holder instantiates again before loading the version.",
        request=CredentialChangedInput,
        responses={
            200: InvalidatedOutput,
            400: OpenApiResponse(description="`validation_error`, `secret_detected`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
        },
    )
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = CredentialChangedInput(data=request.data)
        data.is_valid(raise_exception=True)
        invalidated = services.credential_changed(
            tenant=context.tenant, actor=context.actor, **data.validated_data
        )
        return Response(InvalidatedOutput({"invalidated": [i.pk for i in invalidated]}).data)


class UseReportView(APIView):
    permission_classes = [capability_required("skills:read")]

    @extend_schema(
        summary="Report how a loaded version did on one task",
        description="`outcome` success or failure on a `task_type`; with `without_skill` "
        "(and `steps`, `steps_without_skill`) what the no-skill path did on such tasks. "
        "Failing where it succeeded, or taking more steps, is negative transfer: the "
        "catalog ranks the skill lower for that task type.",
        request=UseReportInput,
        responses={
            201: UseReportOutput,
            400: OpenApiResponse(description="`validation_error`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="`version_not_published`"),
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        version = version_or_404(request, slug, number)
        data = UseReportInput(data=request.data)
        data.is_valid(raise_exception=True)
        report = services.skill_use_report(
            tenant=context.tenant, version=version, actor=context.actor, **data.validated_data
        )
        return Response(UseReportOutput(report).data, status=201)


class LoadView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Load several skills' bodies at once within a context budget",
        description="Each skill's production version (or `version`) must be loadable by the "
        "caller (a ready instance, or `override_reason`). Their bodies and descriptions "
        "together must fit `budget_chars`; otherwise `409 context_budget_exceeded` says "
        "which of them, in the order given, fit. `conflicts` lists what they would do to "
        "each other's data. Counts as a level-2 load of each.",
        request=LoadInput,
        parameters=[OVERRIDE_PARAMETER],
        responses={
            200: LoadAnswerOutput,
            400: OpenApiResponse(description="`validation_error`"),
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="`context_budget_exceeded` (with `fits`, `sizes`, "
                "`budget_chars`), `not_instantiable`, `version_not_published`"
            ),
            410: OpenApiResponse(description="`version_revoked`"),
        },
    )
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = LoadInput(data=request.data)
        data.is_valid(raise_exception=True)
        resolved = [
            selectors.skill_resolve(
                tenant=context.tenant,
                slug=wanted["skill"],
                label=None if wanted.get("version") else "production",
                number=wanted.get("version"),
            )
            for wanted in data.validated_data["skills"]
        ]
        for one in resolved:
            require_ready_instance(request, one)
        budget = data.validated_data["budget_chars"]
        sizes = {one.slug: context_chars(one) for one in resolved}
        if sum(sizes.values()) > budget:
            fits, used = [], 0
            for one in resolved:
                if used + sizes[one.slug] <= budget:
                    fits.append(one.slug)
                    used += sizes[one.slug]
            raise Problem(
                "context_budget_exceeded",
                f"The {len(resolved)} skills take {sum(sizes.values())} characters; the "
                f"budget is {budget}. Load fewer: {', '.join(fits) or 'none'} fit.",
                status_code=409,
                fits=fits,
                sizes=sizes,
                budget_chars=budget,
            )
        services.skill_loads_record(
            tenant=context.tenant,
            actor=context.actor,
            version_ids=[one.version_id for one in resolved],
            level=LoadLevel.BODY,
        )
        return Response(
            LoadAnswerOutput(
                {
                    "skills": [resolved_body(one) for one in resolved],
                    "total_chars": sum(sizes.values()),
                    "budget_chars": budget,
                    "conflicts": conflicts_between({one.slug: one.manifest for one in resolved}),
                }
            ).data
        )


def context_chars(resolved: selectors.ResolvedVersion) -> int:
    """What a loaded skill takes of an agent's context: its description and body."""
    return len(str(resolved.manifest.get("description") or "")) + len(resolved.body)
