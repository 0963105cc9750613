"""Download my data: everything memdesk holds about the signed-in person's subjects.

`GET /me/export` answers a small export at once; a larger one, and every
`POST /me/exports`, is made by a worker: follow `GET /me/exports/{id}` and
download it from `GET /me/exports/{id}/download`. Only the person who asked
may read an export: anyone else gets `404`, an agent token `403`.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import api_context
from common.idempotency import idempotent
from common.problems import Problem, not_found
from common.schema import NOT_FOUND, PERSON_REQUIRED
from memory.privacy.api.me.serializers import ExportDocumentOut, ExportOut
from memory.privacy.api.me.views import PersonRequired
from memory.privacy.models import DataExport, ExportStatus
from memory.privacy.selectors.me import me_export_get
from memory.privacy.services.exports import (
    export_document,
    export_is_small,
    export_request,
    export_scope,
)


def _document_response(content: str, *, at: Any) -> HttpResponse:
    response = HttpResponse(content, content_type="application/json")
    response["Content-Disposition"] = (
        f'attachment; filename="memdesk-export-{at:%Y%m%d-%H%M%S}.json"'
    )
    # Personal data: no shared cache keeps a copy.
    response["Cache-Control"] = "private, no-store"
    return response


def _accepted(export: DataExport) -> Response:
    return Response(
        ExportOut(export).data,
        status=status.HTTP_202_ACCEPTED,
        headers={"Location": f"/api/v1/me/exports/{export.pk}"},
    )


def _request(request: Request) -> Response:
    context = api_context(request)
    scope = export_scope(tenant=context.tenant, user=request.user)
    export, _ = export_request(
        tenant=context.tenant, actor=context.actor, user=request.user, scope=scope
    )
    return _accepted(export)


class MeExportView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={
            200: ExportDocumentOut,
            202: ExportOut,
            403: PERSON_REQUIRED,
        },
        operation_id="me_export",
        summary="Download my data",
        description="Everything memdesk holds about the subjects linked to the signed-in "
        "user: memories with sources and history, ledger events, deletions and their "
        "reports. Up to `EXPORT_INLINE_MAX_ROWS` rows the document is the answer (`200`, "
        "an attachment, never stored); a larger one is made by a worker: `202` with the "
        "export and a `Location` to follow. Errors: `person_required`.",
    )
    def get(self, request: Request) -> Any:
        context = api_context(request)
        scope = export_scope(tenant=context.tenant, user=request.user)
        if export_is_small(tenant=context.tenant, scope=scope):
            content = export_document(tenant=context.tenant, user=request.user, scope=scope)
            return _document_response(content, at=timezone.now())
        return _request(request)


class MeExportListView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        request=None,
        responses={202: ExportOut, 403: PERSON_REQUIRED},
        operation_id="me_exports_create",
        summary="Ask for an export of my data",
        description="A worker makes the export whatever its size; follow "
        "`GET /api/v1/me/exports/{id}` (progress as rows done of rows total). Asking again "
        "while one is being made returns it. It can be downloaded until `expires_at`, and a "
        "deletion of what it holds erases it. Accepts `Idempotency-Key`. "
        "Errors: `person_required`.",
    )
    @idempotent
    def post(self, request: Request) -> Response:
        return _request(request)


def _export_or_404(request: Request, export_id: Any) -> DataExport:
    context = api_context(request)
    export = me_export_get(tenant=context.tenant, user=request.user, export_id=export_id)
    if export is None:
        raise not_found("export")
    return export


class MeExportDetailView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={200: ExportOut, 403: PERSON_REQUIRED, 404: NOT_FOUND},
        operation_id="me_export_get",
        summary="An export's progress",
        description="Status (`pending` → `running` → `ready` | `failed`; later `expired`, or "
        "`erased` by a deletion), rows done of rows total, and the download link once "
        "ready. Errors: `person_required`, `not_found` (not yours).",
    )
    def get(self, request: Request, export_id: Any) -> Response:
        return Response(ExportOut(_export_or_404(request, export_id)).data)


class MeExportDownloadView(APIView):
    permission_classes = [PersonRequired]

    @extend_schema(
        responses={
            200: ExportDocumentOut,
            403: PERSON_REQUIRED,
            404: NOT_FOUND,
            409: OpenApiResponse(description="Problem details: export_not_ready"),
            410: OpenApiResponse(description="Problem details: export_gone"),
        },
        operation_id="me_export_download",
        summary="Download a finished export",
        description="The JSON document, as an attachment. Errors: `person_required`, "
        "`not_found`, `export_not_ready` (still being made, or failed), `export_gone` "
        "(expired, or erased by a deletion: ask for a new one).",
    )
    def get(self, request: Request, export_id: Any) -> Any:
        export = _export_or_404(request, export_id)
        if export.status in (ExportStatus.EXPIRED, ExportStatus.ERASED) or (
            export.expires_at <= timezone.now()
        ):
            raise Problem(
                "export_gone",
                "This export is no longer kept"
                + (" (a deletion erased it)" if export.status == ExportStatus.ERASED else "")
                + ". Ask for a new one.",
                status_code=410,
                export_status=export.status,
            )
        if export.status != ExportStatus.READY or not export.content:
            raise Problem(
                "export_not_ready",
                f"This export is {export.status}; download it once it is ready.",
                status_code=409,
                export_status=export.status,
            )
        return _document_response(export.content, at=export.finished_at or export.created_at)
