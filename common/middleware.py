"""One structured log line per request, with the tenant-free facts operators need."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from common.log_redaction import path_for_log
from common.problems import problem_response

logger = logging.getLogger("memdesk.request")


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
        started = time.perf_counter()
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        logger.info(
            "request",
            extra={
                "request_id": request_id,
                "method": request.method,
                "path": path_for_log(request.path),
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return response


class ApiUrlGuardMiddleware:
    """Refuse a NUL character anywhere in an /api/ URL with a 400 problem.

    PostgreSQL text cannot hold NUL, so a path or query parameter carrying one
    would otherwise fail deep inside a query with a 500. (NUL in JSON bodies is
    refused by `common.parsers`.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/") and (
            "\x00" in request.path
            or any("\x00" in key or "\x00" in value for key, value in _query_items(request))
        ):
            return problem_response(
                request,
                status_code=400,
                code="nul_character",
                title="Malformed request",
                detail="The URL contains a NUL character (%00).",
            )
        return self.get_response(request)


def _query_items(request: HttpRequest) -> list[tuple[str, str]]:
    return [(key, value) for key, values in request.GET.lists() for value in values]
