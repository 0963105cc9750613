"""RFC 9457 problem details for every API error, each with a stable `code`.

Views raise `Problem` (or a DRF exception); the exception handler turns either
into `application/problem+json`. Codes are part of the API contract: add new
ones, never rename.
"""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

PROBLEM_CONTENT_TYPE = "application/problem+json"
TYPE_BASE = "https://memdesk.dev/problems/"

# DRF's own exception codes, renamed where DRF's wording is vague.
_DRF_CODES = {
    "not_authenticated": "not_authenticated",
    "authentication_failed": "authentication_failed",
    "permission_denied": "permission_denied",
    "not_found": "not_found",
    "method_not_allowed": "method_not_allowed",
    "not_acceptable": "not_acceptable",
    "unsupported_media_type": "unsupported_media_type",
    "parse_error": "malformed_json",
    "throttled": "throttled",
    "invalid": "validation_error",
}


class Problem(exceptions.APIException):
    """An API error with a stable machine code and optional extra members."""

    status_code: int = status.HTTP_400_BAD_REQUEST

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status_code: int = 400,
        title: str | None = None,
        errors: dict[str, list[str]] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail=detail, code=code)
        self.status_code = status_code
        self.code = code
        self.title = title or code.replace("_", " ").capitalize()
        self.errors = errors
        self.extra = extra


def problem_body(
    *,
    status_code: int,
    code: str,
    title: str,
    detail: str,
    instance: str | None = None,
    errors: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": TYPE_BASE + code,
        "title": title,
        "status": status_code,
        "detail": detail,
        "code": code,
    }
    if instance:
        body["instance"] = instance
    if errors:
        body["errors"] = errors
    body.update(extra)
    return body


def _flatten_errors(detail: Any) -> dict[str, list[str]]:
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for field, messages in detail.items():
            if isinstance(messages, dict):
                for sub, sub_messages in _flatten_errors(messages).items():
                    flat[f"{field}.{sub}"] = sub_messages
            elif isinstance(messages, list):
                flat[str(field)] = [
                    m if isinstance(m, str) else str(_flatten_errors(m)) for m in messages
                ]
            else:
                flat[str(field)] = [str(messages)]
        return flat
    if isinstance(detail, list):
        return {"non_field_errors": [str(m) for m in detail]}
    return {"non_field_errors": [str(detail)]}


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Imported here: rest_framework.views reads the parser settings at import,
    # and common.parsers needs this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        # Django refuses to buffer a body over DATA_UPLOAD_MAX_MEMORY_SIZE.
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = Problem(
            "payload_too_large",
            f"The body is too large; this endpoint accepts at most {limit} bytes.",
            status_code=413,
            title="Payload too large",
            limit=limit,
        )

    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response

    request = context.get("request")
    instance = request.path if request is not None else None
    if isinstance(exc, Problem):
        body = problem_body(
            status_code=exc.status_code,
            code=exc.code,
            title=exc.title,
            detail=str(exc.detail),
            instance=instance,
            errors=exc.errors,
            **exc.extra,
        )
    elif isinstance(exc, exceptions.ValidationError):
        errors = _flatten_errors(exc.detail)
        body = problem_body(
            status_code=response.status_code,
            code="validation_error",
            title="Invalid request",
            detail="The request body is not valid; see `errors` for each field.",
            instance=instance,
            errors=errors,
        )
    elif isinstance(exc, exceptions.Throttled):
        # DRF sets `wait` in Throttled.__init__; its stubs leave the attribute out.
        wait = retry_after_seconds(exc.wait)  # type: ignore[attr-defined]
        body = throttled_body(wait, instance=instance)
        response["Retry-After"] = str(wait)
    else:
        raw_codes = exc.get_codes()
        raw = raw_codes if isinstance(raw_codes, str) else "error"
        code = _DRF_CODES.get(raw, raw)
        body = problem_body(
            status_code=response.status_code,
            code=code,
            title=code.replace("_", " ").capitalize(),
            detail=str(exc.detail),
            instance=instance,
        )
    response.data = body
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def retry_after_seconds(wait: float | None) -> int:
    return max(1, math.ceil(wait or 1))


def throttled_body(wait: int, *, instance: str | None) -> dict[str, Any]:
    """The 429 answer, the same from a DRF throttle and from the pre-authentication one."""
    return problem_body(
        status_code=429,
        code="throttled",
        title="Too many requests",
        detail=f"Too many requests; try again in {wait} seconds.",
        instance=instance,
        retry_after=wait,
    )


def throttled_response(request: HttpRequest, wait_seconds: float | None) -> JsonResponse:
    """A 429 problem for code paths outside DRF (the throttle before authentication)."""
    wait = retry_after_seconds(wait_seconds)
    response = JsonResponse(
        throttled_body(wait, instance=request.path), status=429, content_type=PROBLEM_CONTENT_TYPE
    )
    response["Retry-After"] = str(wait)
    return response


def problem_response(
    request: HttpRequest, *, status_code: int, code: str, title: str, detail: str
) -> JsonResponse:
    """A problem response for code paths outside DRF (Django's 404/500 handlers)."""
    return JsonResponse(
        problem_body(
            status_code=status_code, code=code, title=title, detail=detail, instance=request.path
        ),
        status=status_code,
        content_type=PROBLEM_CONTENT_TYPE,
    )


class InvalidTransition(Problem):
    """A state change the state machine does not allow from the current state."""

    def __init__(
        self, detail: str, *, allowed: list[str], code: str = "illegal_transition"
    ) -> None:
        super().__init__(code, detail, status_code=409, allowed=allowed)


def not_found(what: str = "resource") -> Problem:
    return Problem("not_found", f"No such {what}.", status_code=404, title="Not found")
