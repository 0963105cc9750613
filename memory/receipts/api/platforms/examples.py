"""Request and response examples for platforms and operation policies.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import NOW

ABSENCE_PROOF = {
    "absence_proof": "status_lookup",
    "lookup_template": "articles?key={idempotency_key}",
    "key_retention_seconds": 86400,
    "consistency_delay_seconds": 30,
}
PLATFORM = {
    "id": 1,
    "name": "blog",
    "base_url": "https://blog.example/api/",
    "allow_private": False,
    **ABSENCE_PROOF,
    "known_absent_key": "control-never-written",
    "known_present_key": "control-2026-01",
    "controls_checked_at": NOW,
    "verifier_unhealthy_since": None,
    "verifier_unhealthy_reason": "",
    "created_by": "ada",
    "created_at": NOW,
}

OPERATION_POLICY = {
    "id": 3,
    "platform": "blog",
    "operation": "articles.create",
    "require_external_id": True,
    "evidence_fields": ["url"],
    "require_verifying_read": False,
    "approval_required": False,
    "compensate_on_failure": False,
    "requirements": ["external_id", "evidence.url"],
    "created_by": "ada",
    "created_at": NOW,
    "updated_at": NOW,
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "platforms_list": {"responses": {"200": [PLATFORM]}},
    "platforms_policies_list": {"responses": {"200": [OPERATION_POLICY]}},
    "platforms_policies_create": {
        "request": {
            "operation": "articles.create",
            "require_external_id": True,
            "evidence_fields": ["url"],
            "require_verifying_read": False,
        },
        "responses": {"201": OPERATION_POLICY, "200": OPERATION_POLICY},
    },
    "platforms_create": {
        "request": {"name": "blog", "base_url": "https://blog.example/api/", **ABSENCE_PROOF},
        "responses": {"201": PLATFORM, "200": PLATFORM},
    },
    "platforms_controls_update": {
        "request": {
            "known_absent_key": "control-never-written",
            "known_present_key": "control-2026-01",
        },
        "responses": {"200": PLATFORM},
    },
    "platforms_absence_proof_update": {
        "request": ABSENCE_PROOF,
        "responses": {"200": PLATFORM},
    },
}
