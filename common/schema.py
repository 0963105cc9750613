"""The API's OpenAPI documentation shared by every app, declared once.

The error responses views name in `extend_schema` (each says which stable
problem `code`s it answers), and the post-processing hook that documents the
limits every operation shares.
"""

from __future__ import annotations

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


def document_limits(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """Add `429 throttled` to every operation, and `413 payload_too_large` to writes."""
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.setdefault(
                "429",
                {
                    "description": "`throttled`: too many requests; wait `Retry-After` seconds.",
                    "headers": {"Retry-After": {"schema": {"type": "integer"}, "required": True}},
                    "content": _CONTENT,
                },
            )
            if method in _BODY_METHODS:
                responses.setdefault(
                    "413",
                    {
                        "description": "`payload_too_large`: the body is over the size limit.",
                        "content": _CONTENT,
                    },
                )
    return result
