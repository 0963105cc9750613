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

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import agent_or_people, api_context, capability_required, role_required
from accounts.models import Role
from common.idempotency import idempotent
from common.pagination import CursorPage
from common.parsers import LimitedMultiPartParser
from common.problems import Problem
from common.schema import (
    CAPABILITY_OR_ROLE_REQUIRED,
    NOT_FOUND,
    VALIDATION_ERROR,
)
from skills import selectors, services
from skills.api.evaluation_serializers import EvaluationInput
from skills.api.loading_serializers import DraftInput, DraftOutput
from skills.api.serializers import (
    EvaluationOutput,
    SkillCreateInput,
    SkillOutput,
    VersionDetailOutput,
    VersionOutput,
    VersionUploadInput,
)
from skills.inert import inert_file_response
from skills.models import (
    EvaluationRun,
    LoadLevel,
    Skill,
    SkillVersion,
    VersionStatus,
)

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


def skill_or_404(request: Request, slug: str) -> Skill:
    return selectors.skill_get_or_404(tenant=api_context(request).tenant, slug=slug)


def version_or_404(request: Request, slug: str, number: int) -> SkillVersion:
    tenant = api_context(request).tenant
    skill = selectors.skill_get_or_404(tenant=tenant, slug=slug)
    return selectors.skill_version_get_or_404(tenant=tenant, skill=skill, number=number)


def permissions_for(
    request: Request, *, read: type, write: type
) -> list[permissions.BasePermission]:
    return [read()] if request.method in permissions.SAFE_METHODS else [write()]


# --- skills -----------------------------------------------------------------------------------


class SkillListView(GenericAPIView):
    queryset = Skill.objects.none()
    pagination_class = SkillPage
    serializer_class = SkillOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return permissions_for(self.request, read=READERS, write=WRITERS)

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
        return Response(SkillOutput(skill_or_404(request, slug)).data)


# --- versions ---------------------------------------------------------------------------------


class VersionListView(GenericAPIView):
    throttle_scope = "skill_upload"
    # Packages arrive as multipart uploads; every other body in the API is JSON.
    parser_classes = [LimitedMultiPartParser]
    queryset = SkillVersion.objects.none()
    pagination_class = VersionPage
    serializer_class = VersionOutput

    def get_permissions(self) -> list[permissions.BasePermission]:
        return permissions_for(self.request, read=READERS, write=WRITERS)

    @extend_schema(
        summary="List a skill's versions, newest first", responses=VersionOutput(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        skill = skill_or_404(request, slug)
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
        skill = skill_or_404(request, slug)
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
        version = version_or_404(request, slug, number)
        matrix = selectors.evaluation_matrix(tenant=tenant, version=version)
        context = {
            "files": list(selectors.version_files(tenant=tenant, version=version)),
            "matrix": matrix,
            "instances": selectors.pins_recent_count(tenant=tenant, version=version),
            "changes": selectors.sensitive_changes_against_production(
                tenant=tenant, version=version
            ),
            "loads": selectors.version_load_totals(tenant=tenant, version=version),
            "cost_curve": selectors.cost_curve(tenant=tenant, skill=version.skill),
            "draft_sources": list(selectors.draft_sources(tenant=tenant, version=version)),
            "withheld": selectors.content_withheld(version=version),
            "approvals": selectors.approval_progress(tenant=tenant, version=version),
            "controls": selectors.evaluation_controls(tenant=tenant, version=version),
        }
        context["baseline"] = selectors.baseline_comparison(
            matrix=matrix, cost_factor=settings.SKILL_BASELINE_COST_FACTOR
        )
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
        version = version_or_404(request, slug, number)
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
        return permissions_for(self.request, read=READERS, write=EVALUATORS)

    @extend_schema(
        summary="A version's evaluation runs, newest first", responses=EvaluationOutput(many=True)
    )
    def get(self, request: Request, slug: str, number: int) -> Response:
        version = version_or_404(request, slug, number)
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
            400: OpenApiResponse(
                description="`validation_error`, `secret_detected`, `environment_required`"
            ),
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
        version = version_or_404(request, slug, number)
        data = EvaluationInput(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.evaluation_record(
            tenant=context.tenant, version=version, actor=context.actor, **data.validated_data
        )
        return Response(EvaluationOutput(run).data, status=201)


# --- lifecycle actions ------------------------------------------------------------------------


# --- loading, diffs and history ---------------------------------------------------------------


# --- catalog and progressive loading ----------------------------------------------------------


# --- tools and instantiation ------------------------------------------------------------------


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
