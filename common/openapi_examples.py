"""The values every app's OpenAPI examples share: ids, times, actors, a page.

Each app keeps the request and response examples of its operations beside their
serializers (`memory/*/api/*/examples.py`, `reviews/api/examples.py`,
`skills/api/examples.py`); `config/openapi.py` attaches them all to the schema by
operationId. tests/clients/test_openapi_examples.py checks that every operation has
them and that each validates against its schema.
"""

from __future__ import annotations

from typing import Any

CLAIM_ID = "5a3e2f10-8b7c-4c6d-a1e2-9f8d7c6b5a40"

OLD_CLAIM_ID = "3c2b1a09-7f6e-4d5c-b4a3-2e1f0d9c8b70"

DERIVED_ID = "7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c20"

HASH = "sha256:8f14e45fceea167a5a36dedd4bea2543d5b5b4f6b8c1e0c2a1b3d4e5f6a7b8c9"

NOW = "2026-08-16T01:20:30Z"

LATER = "2026-08-16T01:25:30Z"

PUBLISHER = {"kind": "agent", "id": "7", "label": "publisher"}


def page(*results: Any, next_url: str | None = None) -> dict[str, Any]:
    return {"results": list(results), "next": next_url}
