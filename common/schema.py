"""OpenAPI post-processing: the limits every operation shares, documented once."""

from __future__ import annotations

from typing import Any

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
