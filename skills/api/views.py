"""The skills API: thin views over skills.services and skills.selectors.

Who may call what (docs/api.md): agents with ``skills:write`` create
skills, upload and submit versions; agents with ``evaluations:write`` record
evaluations; agents with ``skills:read`` read and resolve. Console sessions:
editors, admins and auditors read; admins also upload and submit, and only
admins approve, reject, publish, roll back, revoke and deprecate — agent
tokens get ``403 role_required`` there whatever their capabilities.

``admin_approval_required`` (403) is raised by the approve service when a
non-admin person approves a version that adds a capability or raises risk to
high. Since only admins pass the approve endpoint's permission check, over
HTTP it cannot happen today; it guards every other caller of the service.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import agent_or_people, api_context, capability_required, role_required
from accounts.models import Role
from common.hidden_chars import for_agent
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.parsers import LimitedMultiPartParser
from common.problems import Problem
from common.schema import (
    CAPABILITY_OR_ROLE_REQUIRED,
    ILLEGAL_TRANSITION,
    NOT_FOUND,
    VALIDATION_ERROR,
)
from skills import selectors, services
from skills.api.serializers import (
    BodyOutput,
    CatalogInput,
    CatalogOutput,
    DiffOutput,
    DraftInput,
    DraftOutput,
    EvaluationInput,
    EvaluationOutput,
    InstantiateInput,
    InstantiationOutput,
    LabelMoveOutput,
    LoadOutput,
    ReasonInput,
    ResolveInput,
    ResolveOutput,
    RetiredToolOutput,
    RetirementOutput,
    RetireToolInput,
    RevokeOutput,
    RollbackInput,
    SkillCreateInput,
    SkillOutput,
    VersionApprovalOutput,
    VersionDetailOutput,
    VersionOutput,
    VersionUploadInput,
)
from skills.inert import inert_file_response
from skills.models import (
    EvaluationRun,
    LabelMove,
    LoadLevel,
    RetiredTool,
    Skill,
    SkillLoad,
    SkillVersion,
    VersionStatus,
)

INSTANCE_HEADER = "X-Skill-Instance"
INSTANCE_MAX_LENGTH = 200


READERS = agent_or_people("skills:read", Role.EDITOR, Role.ADMIN, Role.AUDITOR)
WRITERS = agent_or_people("skills:write", Role.ADMIN)
EVALUATORS = capability_required("evaluations:write")
ADMINS = role_required("admin")


class SkillPage(CursorPage):
    ordering = "slug"


class VersionPage(CursorPage):
    ordering = "-number"


class HistoryPage(CursorPage):
    ordering = "-id"


class EvaluationPage(CursorPage):
    ordering = "-id"


class LoadPage(CursorPage):
    ordering = "-id"


def _skill(request: Request, slug: str) -> Skill:
    return selectors.skill_get_or_404(tenant=api_context(request).tenant, slug=slug)


def _version(request: Request, slug: str, number: int) -> SkillVersion:
    tenant = api_context(request).tenant
    skill = selectors.skill_get_or_404(tenant=tenant, slug=slug)
    return selectors.skill_version_get_or_404(tenant=tenant, skill=skill, number=number)


def _methods(request: Request, *, read: type, write: type) -> list[permissions.BasePermission]:
    return [read()] if request.method in permissions.SAFE_METHODS else [write()]


# --- skills -----------------------------------------------------------------------------------


class SkillListView(GenericAPIView):
    queryset = Skill.objects.none()
    pagination_class = SkillPage
    serializer_class = SkillOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return _methods(self.request, read=READERS, write=WRITERS)

    @extend_schema(
        summary="List skills with their production version", responses=SkillOutput(many=True)
    )
    def get(self, request: Request) -> Response:
        skills = selectors.skill_list(tenant=api_context(request).tenant)
        page = self.paginate_queryset(skills)
        return self.get_paginated_response(SkillOutput(page, many=True).data)

    @extend_schema(
        summary="Create a skill",
        request=SkillCreateInput,
        responses={
            201: SkillOutput,
            400: VALIDATION_ERROR,
            403: CAPABILITY_OR_ROLE_REQUIRED,
            409: OpenApiResponse(description="`skill_exists`"),
        },
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = SkillCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        skill = services.skill_create(
            tenant=context.tenant, actor=context.actor, **data.validated_data
        )
        return Response(SkillOutput(skill).data, status=201)


class SkillDetailView(APIView):
    permission_classes = [READERS]

    @extend_schema(summary="A skill", responses={200: SkillOutput, 404: NOT_FOUND})
    def get(self, request: Request, slug: str) -> Response:
        return Response(SkillOutput(_skill(request, slug)).data)


# --- versions ---------------------------------------------------------------------------------


class VersionListView(GenericAPIView):
    throttle_scope = "skill_upload"
    # Packages arrive as multipart uploads; every other body in the API is JSON.
    parser_classes = [LimitedMultiPartParser]
    queryset = SkillVersion.objects.none()
    pagination_class = VersionPage
    serializer_class = VersionOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return _methods(self.request, read=READERS, write=WRITERS)

    @extend_schema(
        summary="List a skill's versions, newest first", responses=VersionOutput(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        skill = _skill(request, slug)
        versions = selectors.skill_versions(tenant=api_context(request).tenant, skill=skill)
        page = self.paginate_queryset(versions)
        return self.get_paginated_response(VersionOutput(page, many=True).data)

    @extend_schema(
        summary="Upload a skill package as a new draft version",
        description="Byte-identical content (same content hash) returns the existing version "
        "with 200. Package errors are 400 with one of the codes: package_invalid, "
        "package_too_large, path_unsafe, skill_md_missing, file_not_allowed, file_too_large, "
        "compression_ratio_exceeded, secret_detected, frontmatter_invalid, name_mismatch, "
        "capability_undeclared.",
        request={"multipart/form-data": VersionUploadInput},
        responses={
            201: VersionOutput,
            200: VersionOutput,
            400: OpenApiResponse(description="A package error code (see description)."),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
        },
    )
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        context = api_context(request)
        skill = _skill(request, slug)
        data = VersionUploadInput(data=request.data)
        data.is_valid(raise_exception=True)
        package = data.validated_data["package"]
        if package.size > services.upload_max_bytes():
            raise Problem(
                "package_too_large",
                f"The upload is {package.size} bytes; the limit is {services.upload_max_bytes()}.",
            )
        version, created = services.skill_version_upload(
            tenant=context.tenant, skill=skill, data=package.read(), actor=context.actor
        )
        return Response(VersionOutput(version).data, status=201 if created else 200)


class VersionDetailView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="A version: manifest, body, files, evaluation matrix and pins",
        responses={200: VersionDetailOutput, 404: NOT_FOUND},
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        tenant = api_context(request).tenant
        version = _version(request, slug, number)
        context = {
            "files": list(selectors.version_files(tenant=tenant, version=version)),
            "matrix": selectors.evaluation_matrix(tenant=tenant, version=version),
            "instances": selectors.pins_recent_count(tenant=tenant, version=version),
            "changes": selectors.sensitive_changes_against_production(
                tenant=tenant, version=version
            ),
            "loads": selectors.version_load_totals(tenant=tenant, version=version),
            "cost_curve": selectors.cost_curve(tenant=tenant, skill=version.skill),
            "draft_sources": list(selectors.draft_sources(tenant=tenant, version=version)),
            "withheld": selectors.content_withheld(version=version),
            "approvals": selectors.approval_progress(tenant=tenant, version=version),
        }
        return Response(VersionDetailOutput(version, context=context).data)


class VersionFileView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Level 3: read one file of a version on demand",
        description="Any version but a revoked one, so evaluators can read drafts; each read "
        "counts as a level-3 load of the version by the caller. The bytes "
        "come as an attachment, `text/plain; charset=utf-8` when they are UTF-8 and "
        "`application/octet-stream` otherwise (never a type guessed from the name), with "
        "`X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox; "
        "default-src 'none'`: a package's files are data and never run in memdesk's origin.",
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            404: NOT_FOUND,
            410: OpenApiResponse(description="`version_revoked`, `draft_source_deleted`"),
        },
    )
    def get(self, request: Request, slug: str, number: int, path: str) -> HttpResponse:
        tenant = api_context(request).tenant
        version = _version(request, slug, number)
        if version.status == VersionStatus.REVOKED:
            raise Problem(
                "version_revoked",
                f"Version {number} of {slug} was revoked; its files may not be loaded.",
                status_code=410,
                number=number,
            )
        if selectors.content_withheld(version=version):
            raise Problem(
                "draft_source_deleted",
                f"Version {number} of {slug} was drafted from a memory that has been deleted; "
                "its files are no longer served.",
                status_code=410,
            )
        file = selectors.version_file_get(tenant=tenant, version=version, path=path)
        if file is None:
            raise Problem("not_found", "No such file in this version.", status_code=404)
        services.skill_loads_record(
            tenant=tenant,
            actor=api_context(request).actor,
            version_ids=[version.pk],
            level=LoadLevel.FILE,
        )
        return inert_file_response(path=file.path, content=bytes(file.content), sha256=file.sha256)


# --- evaluations ------------------------------------------------------------------------------


class EvaluationListView(GenericAPIView):
    queryset = EvaluationRun.objects.none()
    pagination_class = EvaluationPage
    serializer_class = EvaluationOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return _methods(self.request, read=READERS, write=EVALUATORS)

    @extend_schema(
        summary="A version's evaluation runs, newest first", responses=EvaluationOutput(many=True)
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        version = _version(request, slug, number)
        runs = selectors.evaluation_runs(tenant=api_context(request).tenant, version=version)
        page = self.paginate_queryset(runs)
        return self.get_paginated_response(EvaluationOutput(page, many=True).data)

    @extend_schema(
        summary="Record one regression result, case by case",
        description="The result counts for publishing only when `content_hash` is the "
        "version's (a result for another hash is stored with `counts: false`), it comes from "
        "an evaluator other than the version's author, and its `cases` (each with the five "
        "checks and its cost) all pass and cover the package's evals/evals.json cases of the "
        "category; otherwise the matrix shows the category `unverified`.",
        request=EvaluationInput,
        responses={
            201: EvaluationOutput,
            400: OpenApiResponse(description="`validation_error`, `secret_detected`"),
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(
                description="`evaluator_is_author` (a token of the author's own owner too), "
                "`evaluator_unaccountable` (a token acting for nobody)"
            ),
        },
    )
    @idempotent
    def post(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        version = _version(request, slug, number)
        data = EvaluationInput(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.evaluation_record(
            tenant=context.tenant, version=version, actor=context.actor, **data.validated_data
        )
        return Response(EvaluationOutput(run).data, status=201)


# --- lifecycle actions ------------------------------------------------------------------------


class _ReasonedVersionAction(APIView):
    """An admin's lifecycle step on one version: a reason in, the version out."""

    permission_classes = [ADMINS]
    service: Any

    def act(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        version = self.service(
            tenant=context.tenant,
            version=_version(request, slug, number),
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
            tenant=context.tenant, version=_version(request, slug, number), actor=context.actor
        )
        return Response(VersionOutput(version).data)


class ApproveView(_ReasonedVersionAction):
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
            version=_version(request, slug, number),
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        progress = selectors.approval_progress(tenant=context.tenant, version=version)
        return Response(VersionApprovalOutput(version, context={"approvals": progress}).data)


class RejectView(_ReasonedVersionAction):
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


class PublishView(_ReasonedVersionAction):
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


class DeprecateView(_ReasonedVersionAction):
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
            version=_version(request, slug, number),
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
            skill=_skill(request, slug),
            to_number=data.validated_data["to"],
            actor=context.actor,
            reason=data.validated_data["reason"],
        )
        return Response(LabelMoveOutput(move).data)


# --- loading, diffs and history ---------------------------------------------------------------


class ResolveView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Load the version to run: by label (default production) or exact version",
        description="Cached; a label move, revoke or deprecate is visible at once. Send "
        "`X-Skill-Instance` to record which instance runs which version. A deprecated "
        'version answers 200 with `Warning: 299 - "deprecated: ..."`.',
        parameters=[
            ResolveInput,
            OpenApiParameter(INSTANCE_HEADER, str, OpenApiParameter.HEADER, required=False),
        ],
        responses={
            200: ResolveOutput,
            304: OpenApiResponse(description="If-None-Match matched the content hash."),
            400: OpenApiResponse(description="`validation_error`, `instance_invalid`"),
            404: OpenApiResponse(description="`not_found`, `label_not_set`"),
            409: OpenApiResponse(description="`version_not_published`"),
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
        return Response(ResolveOutput(_resolved_body(resolved)).data, headers=headers)


def _resolved_body(resolved: selectors.ResolvedVersion) -> dict[str, Any]:
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


# --- catalog and progressive loading ----------------------------------------------------------


class CatalogView(APIView):
    permission_classes = [READERS]

    @extend_schema(
        summary="Level 1: the production skills matching a task, without their bodies",
        description="Name, description, version, capabilities, required tools, credential "
        "slots and data labels of each production skill whose name, description or "
        "triggers hold one of the task words (`q`), best match first. With `tools`, "
        "skills needing another tool are left out and listed in `excluded` with the "
        "missing tools. `conflicts` lists what two skills returned (or already `loaded`) "
        "would do to each other's data. Each entry returned counts as a level-1 load.",
        parameters=[CatalogInput],
        responses={200: CatalogOutput, 400: VALIDATION_ERROR},
    )
    def get(self, request: Request) -> Response:
        context = api_context(request)
        params = CatalogInput(data=request.query_params)
        params.is_valid(raise_exception=True)
        data = params.validated_data
        tools = data.get("tools")
        catalog = selectors.skill_catalog(
            tenant=context.tenant,
            words=selectors.catalog_words(data["q"]),
            tools=frozenset(tools) if tools is not None else None,
            loaded=data["loaded"],
            limit=data["limit"],
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
        responses={
            200: BodyOutput,
            404: NOT_FOUND,
            409: OpenApiResponse(description="`version_not_published`"),
            410: OpenApiResponse(description="`version_revoked`"),
        },
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        context = api_context(request)
        resolved = selectors.skill_resolve(tenant=context.tenant, slug=slug, number=number)
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
        return Response(BodyOutput(_resolved_body(resolved)).data, headers=headers)


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
        version = _version(request, slug, number)
        loads = selectors.version_loads(tenant=api_context(request).tenant, version=version)
        page = self.paginate_queryset(loads)
        return self.get_paginated_response(LoadOutput(page, many=True).data)


# --- tools and instantiation ------------------------------------------------------------------


class InstantiateView(APIView):
    permission_classes = [capability_required("skills:read")]

    @extend_schema(
        summary="Check whether this agent may run a version with these bindings",
        description="Binds each credential slot to the *name* of a secret the agent holds "
        "elsewhere and checks: every slot bound, every required tool in `tools` and not "
        "retired, every memdesk capability the skill declares held by the token, every "
        "other capability granted by the runtime (`capabilities`), and the version "
        "runnable. Answers 200 `ready` or `blocked` with every reason; the answer is "
        "audited with the secret names, never values.",
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
        version = _version(request, slug, number)
        data = InstantiateInput(data=request.data)
        data.is_valid(raise_exception=True)
        answer = services.skill_version_instantiate(
            tenant=context.tenant, version=version, actor=context.actor, **data.validated_data
        )
        return Response(
            InstantiationOutput(
                {
                    "skill": slug,
                    "number": version.number,
                    "content_hash": version.content_hash,
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


# --- drafts from experience -------------------------------------------------------------------


class DraftView(APIView):
    permission_classes = [role_required(Role.EDITOR)]

    @extend_schema(
        summary="Draft a skill version from experience claims (editors and admins)",
        description="Builds a SKILL.md package from 2-20 active experiences with a successful "
        "outcome (steps every run took become the procedure; the others are listed apart) "
        "and uploads it as a draft of `slug` (created if new) with lineage to the claims. "
        "It then goes through the normal lifecycle. Deleting a source claim later flags the "
        "draft: `409 draft_source_deleted` on submit, approve and publish.",
        request=DraftInput,
        responses={
            201: DraftOutput,
            200: DraftOutput,
            400: VALIDATION_ERROR,
            403: CAPABILITY_OR_ROLE_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="`claim_not_eligible` (with `claims`)"),
        },
    )
    @idempotent
    def post(self, request: Request) -> Response:
        context = api_context(request)
        data = DraftInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        draft = services.skill_draft_from_experiences(
            tenant=context.tenant,
            actor=context.actor,
            slug=values["slug"],
            name=values["name"],
            description=values["description"],
            claim_ids=[str(claim) for claim in values["claims"]],
        )
        return Response(DraftOutput(draft).data, status=201 if draft.created else 200)
