"""The API's OpenAPI documentation shared by every app, declared once.

The error responses views name in `extend_schema` (each says which stable
problem `code`s it answers), and the post-processing hook that documents the
problems every operation can answer, so the schema lists every status the API
gives (docs/api.md, "The contract's test").
"""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.utils import OpenApiResponse

NOT_AUTHENTICATED = OpenApiResponse(description="Problem details: not_authenticated")
CAPABILITY_REQUIRED = OpenApiResponse(description="Problem details: capability_required")
ROLE_REQUIRED = OpenApiResponse(description="Problem details: role_required")
CAPABILITY_OR_ROLE_REQUIRED = OpenApiResponse(
    description="Problem details: capability_required (agent tokens), role_required (people)"
)
PERSON_REQUIRED = OpenApiResponse(description="Problem details: person_required, no_membership")
NOT_FOUND = OpenApiResponse(description="Problem details: not_found (also another tenant's)")
VALIDATION_ERROR = OpenApiResponse(
    description="Problem details: validation_error, or another code the description names"
)
ILLEGAL_TRANSITION = OpenApiResponse(
    description="Problem details: illegal_transition, with the `allowed` next statuses"
)
# Who may call: an agent token with a capability, or an admin's session.
AGENT_AUTH = {401: NOT_AUTHENTICATED, 403: CAPABILITY_REQUIRED}
ADMIN_AUTH = {401: NOT_AUTHENTICATED, 403: ROLE_REQUIRED}

PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details with a stable machine `code`.",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {"type": "object", "additionalProperties": True},
    },
    "additionalProperties": True,
}
_CONTENT = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
_BODY_METHODS = {"post", "put", "patch"}
_ERROR_STATUSES = ("4", "5")


def _answers_anyone(operation: dict[str, Any]) -> bool:
    # drf-spectacular lists `{}` among the security requirements when a caller
    # without credentials gets past the permission classes.
    security = operation.get("security")
    return security is None or {} in security


def _problems(operation: dict[str, Any], method: str) -> dict[str, str]:
    """The problems this operation can answer, whatever its view adds, and why."""
    parameters = operation.get("parameters", [])
    has_body = "requestBody" in operation
    problems: dict[str, str] = {}
    if has_body or any(p.get("in") in {"query", "header"} for p in parameters):
        problems["400"] = (
            "`validation_error` (see `errors`), or another code the description names; "
            "a malformed JSON body is `malformed_json`."
        )
    if not _answers_anyone(operation):
        problems["401"] = "`not_authenticated` or `authentication_failed`: no valid credentials."
        # Every signed-in caller can be refused: a token without the capability,
        # a person without the role or tenant, a session write without its CSRF token.
        problems["403"] = (
            "`capability_required`, `role_required`, `person_required`, `no_membership` "
            "or `permission_denied`: the caller may not do this."
        )
    if any(p.get("in") == "path" for p in parameters):
        problems["404"] = "`not_found`: no such object in the caller's tenant (also another's)."
    if has_body:
        problems["415"] = "`unsupported_media_type`: send the body as the media type listed here."
    if method in _BODY_METHODS:
        problems["413"] = "`payload_too_large`: the body is over the size limit."
    problems["429"] = "`throttled`: too many requests; wait `Retry-After` seconds."
    return problems


def document_problems(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """Document the problem answers each operation can give, as problem+json.

    What decides them is in the operation itself: its security (401, 403), its
    path parameters (404), its body and query (400, 413, 415), and the limits
    every caller shares (429). A view's own description of a status (which
    `code`s it answers) is kept; only a missing body schema is filled in.
    """
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status, description in _problems(operation, method).items():
                responses.setdefault(status, {"description": description})
            for status, answer in responses.items():
                if status.startswith(_ERROR_STATUSES) and not answer.get("content"):
                    answer["content"] = copy.deepcopy(_CONTENT)
            throttled = responses["429"]
            throttled["headers"] = {
                "Retry-After": {"schema": {"type": "integer"}, "required": True}
            }
    return result
