"""How agents find and load skills: resolving a label, the catalog (level 1), the body
(level 2), files, loads, diffs and label history, instantiation, and retired tools."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context, capability_required
from accounts.models import ActorKind
from common.hidden_chars import for_agent
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.problems import Problem
from common.schema import (
    CAPABILITY_OR_ROLE_REQUIRED,
    NOT_FOUND,
    VALIDATION_ERROR,
)
from skills import selectors, services
from skills.api.loading_serializers import (
    BodyOutput,
    CatalogInput,
    CatalogOutput,
    InstantiateInput,
    InstantiationOutput,
    LoadOutput,
    RetiredToolOutput,
    RetirementOutput,
    RetireToolInput,
)
from skills.api.serializers import DiffOutput, LabelMoveOutput, ResolveInput, ResolveOutput
from skills.api.views import ADMINS, READERS, HistoryPage, LoadPage, version_or_404
from skills.models import (
    LabelMove,
    LoadLevel,
    RetiredTool,
    SkillLoad,
    VersionStatus,
)

INSTANCE_HEADER = "X-Skill-Instance"


INSTANCE_MAX_LENGTH = 200
OVERRIDE_PARAMETER = OpenApiParameter(
    "override_reason",
    str,
    required=False,
    description="Load although you have no ready instance of the version, saying why "
    "(audited as `skill_version.loaded_without_instance`).",
)
NOT_INSTANTIABLE = OpenApiResponse(
    description="`version_not_published`; `not_instantiable` with `reasons` (your latest "
    "instance of the version is blocked or invalidated, or there is none) unless "
    "`override_reason` is given"
)


def require_ready_instance(request: Request, resolved: selectors.ResolvedVersion) -> None:
    """An agent loads a version only through a ready instance of it, or says why not."""
    context = api_context(request)
    refusals = selectors.load_refusals(
        tenant=context.tenant, version_id=resolved.version_id, actor=context.actor
    )
    if not refusals:
        return
    override = request.query_params.get("override_reason", "").strip()[:1000]
    if not override:
        raise Problem(
            "not_instantiable",
            "You have no ready instance of this version: "
            + "; ".join(refusal["detail"] for refusal in refusals)
            + " Or load it anyway with `override_reason`.",
            status_code=409,
            reasons=refusals,
            skill=resolved.slug,
            number=resolved.number,
        )
    services.skill_load_override_record(
        tenant=context.tenant,
        actor=context.actor,
        version_id=resolved.version_id,
        reason=override,
        reasons=refusals,
    )


class ResolveView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Load the version to run: by label (default production) or exact version",
        description="Cached; a label move, revoke or deprecate is visible at once. Send "
        "`X-Skill-Instance` to record which instance runs which version. A deprecated "
        'version answers 200 with `Warning: 299 - "deprecated: ..."`.',
        parameters=[
            ResolveInput,
            OVERRIDE_PARAMETER,
            OpenApiParameter(INSTANCE_HEADER, str, OpenApiParameter.HEADER, required=False),
        ],
        responses={
            200: ResolveOutput,
            304: OpenApiResponse(description="If-None-Match matched the content hash."),
            400: OpenApiResponse(description="`validation_error`, `instance_invalid`"),
            404: OpenApiResponse(description="`not_found`, `label_not_set`"),
            409: NOT_INSTANTIABLE,
            410: OpenApiResponse(description="`version_revoked` (exact pins included)"),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        context = api_context(request)
        params = ResolveInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        instance = request.headers.get(INSTANCE_HEADER, "").strip()
        if len(instance) > INSTANCE_MAX_LENGTH:
            raise Problem(
                "instance_invalid",
                f"{INSTANCE_HEADER} may be at most {INSTANCE_MAX_LENGTH} characters.",
            )
        resolved = selectors.skill_resolve(
            tenant=context.tenant,
            slug=slug,
            label=params.validated_data.get("label"),
            number=params.validated_data.get("version"),
        )
        require_ready_instance(request, resolved)
        if instance:
            services.skill_pin_record(tenant=context.tenant, resolved=resolved, instance=instance)
        etag = f'"{resolved.content_hash}"'
        headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
        if resolved.status == VersionStatus.DEPRECATED:
            headers["Warning"] = (
                f'299 - "deprecated: version {resolved.number} of {slug} is deprecated; '
                'see deprecation.reason"'
            )
        if request.headers.get("If-None-Match") == etag:
            return Response(status=304, headers=headers)
        return Response(ResolveOutput(resolved_body(resolved)).data, headers=headers)


def resolved_body(resolved: selectors.ResolvedVersion) -> dict[str, Any]:
    files = [
        {
            **file,
            "url": reverse(
                "skill-version-file",
                kwargs={"slug": resolved.slug, "number": resolved.number, "path": file["path"]},
            ),
        }
        for file in resolved.files
    ]
    deprecation = (
        {"at": resolved.deprecated_at, "reason": resolved.deprecate_reason}
        if resolved.status == VersionStatus.DEPRECATED
        else None
    )
    # The description and body go into an agent's context as they are; files are data.
    manifest = resolved.manifest
    if isinstance(manifest.get("description"), str):
        manifest = {**manifest, "description": for_agent(manifest["description"])}
    return {
        **resolved.__dict__,
        "manifest": manifest,
        "body": for_agent(resolved.body),
        "files": files,
        "deprecation": deprecation,
    }


class DiffView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="What changed from version a to version b",
        description="Manifest field changes with capability and risk changes flagged, and a "
        "unified diff of every file that differs.",
        responses={200: DiffOutput, 404: NOT_FOUND},
    )
    def get(self, request: Request, slug: str, a: int, b: int) -> Response:
        tenant = api_context(request).tenant
        skill = selectors.skill_get_or_404(tenant=tenant, slug=slug)
        old = selectors.skill_version_get_or_404(tenant=tenant, skill=skill, number=a)
        new = selectors.skill_version_get_or_404(tenant=tenant, skill=skill, number=b)
        return Response(DiffOutput(selectors.version_diff(tenant=tenant, old=old, new=new)).data)


class LabelHistoryView(GenericAPIView):
    queryset = LabelMove.objects.none()
    permission_classes = [READERS]
    pagination_class = HistoryPage
    serializer_class = LabelMoveOutput

    @extend_schema(
        summary="Every move of a label, newest first: who, when, from, to and why",
        responses={200: LabelMoveOutput(many=True), 404: NOT_FOUND},
    )
    def get(self, request: Request, slug: str, label: str) -> Response:
        tenant = api_context(request).tenant
        skill = selectors.skill_get_or_404(tenant=tenant, slug=slug)
        moves = selectors.label_history(tenant=tenant, skill=skill, label=label)
        page = self.paginate_queryset(moves)
        return self.get_paginated_response(LabelMoveOutput(page, many=True).data)


class CatalogView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Level 1: the production skills about a task, found by meaning",
        description="Name, description, version, capabilities, required tools, credential "
        "slots and data labels of each production skill about the task (`q`), best first: "
        "by similarity in meaning (vectors computed at publish time), task words, risk, "
        "preconditions and past success on `task_type`, lower after negative transfer; "
        "`why` gives the signals. A task no skill is about finds nothing. For an agent, "
        "skills needing a memdesk capability its token lacks, or a tool or runtime "
        "capability it was not granted, are left out; with `tools`, so are skills needing "
        "another tool; each is listed in `excluded` with the reason. `conflicts` lists "
        "what two skills returned (or already `loaded`) would do to each other's data. "
        "Each entry returned counts as a level-1 load.",
        parameters=[CatalogInput],
        responses={200: CatalogOutput, 400: VALIDATION_ERROR},
    )
    def get(self, request: Request) -> Response:
        context = api_context(request)
        params = CatalogInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        tools = data.get("tools")
        is_agent = context.actor.kind == ActorKind.AGENT
        catalog = selectors.skill_catalog(
            tenant=context.tenant,
            query=data["q"],
            tools=frozenset(tools) if tools is not None else None,
            loaded=data["loaded"],
            limit=data["limit"],
            grants=selectors.token_grants_of(tenant=context.tenant, actor=context.actor)
            if is_agent
            else None,
            token_capabilities=context.actor.capabilities,
            task_type=data["task_type"],
        )
        services.skill_loads_record(
            tenant=context.tenant,
            actor=context.actor,
            version_ids=[entry.version_id for entry in catalog.entries],
            level=LoadLevel.CATALOG,
        )
        return Response(CatalogOutput(catalog).data)


class BodyView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Level 2: a version's SKILL.md body and its file listing",
        description="Published and deprecated versions only (like resolve by version); counts "
        "as a level-2 load by the caller. Files are listed, not sent: read them at their "
        "`url` (level 3).",
        parameters=[OVERRIDE_PARAMETER],
        responses={
            200: BodyOutput,
            404: NOT_FOUND,
            409: NOT_INSTANTIABLE,
            410: OpenApiResponse(description="`version_revoked`"),
        },
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        resolved = selectors.skill_resolve(tenant=context.tenant, slug=slug, number=number)
        require_ready_instance(request, resolved)
        services.skill_loads_record(
            tenant=context.tenant,
            actor=context.actor,
            version_ids=[resolved.version_id],
            level=LoadLevel.BODY,
        )
        headers = {"ETag": f'"{resolved.content_hash}"', "Cache-Control": "private, no-cache"}
        if resolved.status == VersionStatus.DEPRECATED:
            headers["Warning"] = (
                f'299 - "deprecated: version {resolved.number} of {slug} is deprecated"'
            )
        return Response(BodyOutput(resolved_body(resolved)).data, headers=headers)


class LoadListView(GenericAPIView):
    queryset = SkillLoad.objects.none()
    permission_classes = [READERS]
    pagination_class = LoadPage
    serializer_class = LoadOutput

    @extend_schema(
        summary="Who loaded a version, at which level, how often",
        responses={200: LoadOutput(many=True), 404: NOT_FOUND},
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        version = version_or_404(request, slug, number)
        loads = selectors.version_loads(tenant=api_context(request).tenant, version=version)
        page = self.paginate_queryset(loads)
        return self.get_paginated_response(LoadOutput(page, many=True).data)


class InstantiateView(APIView):
    permission_classes = [capability_required("skills:read")]

    @extend_schema(
        summary="Instantiate a version for this task: check inputs, bindings and grants",
        description="Binds each credential slot to the *name* of a secret the agent holds "
        "elsewhere and the manifest's inputs to this task's values, and checks: every "
        "required input given with its type, every slot bound, every required tool granted "
        "to the token (and at hand, when `tools` is sent) and not retired, every memdesk "
        "capability the skill declares held by the token, every other capability granted "
        "to the token (and at hand, when `capabilities` is sent), and the version runnable. "
        "Answers 200 `ready` or `blocked` with every reason and the new `instance`, which "
        "replaces the caller's earlier instances of the version; audited with the secret "
        "and input names, never values.",
        request=InstantiateInput,
        responses={
            200: InstantiationOutput,
            400: OpenApiResponse(description="`validation_error`, `secret_detected`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            410: OpenApiResponse(description="`version_revoked`"),
        },
    )
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        version = version_or_404(request, slug, number)
        data = InstantiateInput(data=request.data)
        data.is_valid(raise_exception=True)
        instance, answer = services.skill_version_instantiate(
            tenant=context.tenant, version=version, actor=context.actor, **data.validated_data
        )
        return Response(
            InstantiationOutput(
                {
                    "skill": slug,
                    "number": version.number,
                    "content_hash": version.content_hash,
                    "instance": instance.pk,
                    "state": answer.state,
                    "reasons": answer.reasons,
                    "bindings": data.validated_data["bindings"],
                }
            ).data
        )


class RetiredToolPage(CursorPage):
    ordering = "-id"


class RetiredToolListView(GenericAPIView):
    queryset = RetiredTool.objects.none()
    permission_classes = [READERS]
    pagination_class = RetiredToolPage
    serializer_class = RetiredToolOutput

    @extend_schema(summary="Tools retired in this tenant", responses=RetiredToolOutput(many=True))
    def get(self, request: Request) -> Response:
        tools = selectors.retired_tools(tenant=api_context(request).tenant)
        page = self.paginate_queryset(tools)
        return self.get_paginated_response(RetiredToolOutput(page, many=True).data)


class RetireToolView(APIView):
    permission_classes = [ADMINS]

    @extend_schema(
        summary="Retire a tool: every version needing it becomes incompatible (admins)",
        description="A version holding production gives the label back to the newest other "
        "published version. New uploads needing the tool are refused with `409 tool_retired`.",
        request=RetireToolInput,
        responses={
            200: RetirementOutput,
            400: OpenApiResponse(description="`reason_required`, `validation_error`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            409: OpenApiResponse(description="`tool_already_retired`"),
        },
    )
    @idempotent
    def post(self, request: Request, name: str) -> Response:
        context = api_context(request)
        data = RetireToolInput(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.tool_retire(
            tenant=context.tenant,
            name=name,
            reason=data.validated_data["reason"],
            actor=context.actor,
        )
        return Response(
            RetirementOutput(
                {
                    "tool": result.tool,
                    "incompatible": [
                        {
                            "skill": version.skill.slug,
                            "number": version.number,
                            "previous_status": previous,
                        }
                        for version, previous in result.incompatible
                    ],
                }
            ).data
        )
