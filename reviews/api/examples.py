"""Request and response examples for the review queues.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import DERIVED_ID, LATER, NOW, page

REVIEW_ITEM = {
    "id": 12,
    "queue": "candidates",
    "status": "claimed",
    "target_type": "claim",
    "target_id": DERIVED_ID,
    "priority": 0,
    "subject_key": "user:alice",
    "topic": "employer",
    "agent_label": "publisher",
    "reason_codes": ["agent_inferred_needs_review"],
    "created_at": NOW,
    "claimed_by": "erin",
    "lease_expires_at": "2026-08-16T01:35:30Z",
    "decided_at": None,
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "reviews_list": {"responses": {"200": page(REVIEW_ITEM)}},
    "reviews_claim_create": {"responses": {"200": REVIEW_ITEM}},
    "reviews_queues_list": {
        "responses": {
            "200": [
                {
                    "queue": "stale",
                    "label": "Stale",
                    "verdicts": [
                        {"verdict": "refresh", "label": "Still true", "needs_reason": False},
                        {"verdict": "invalidate", "label": "No longer true", "needs_reason": True},
                    ],
                    "note_is_reason": False,
                    "reason_codes": [
                        {"code": "verified", "label": "Checked again: still true"},
                        {"code": "other", "label": "Other (explain in the note)"},
                    ],
                    "payload_fields": ["refresh_after"],
                    "roles": ["editor", "admin"],
                }
            ]
        }
    },
    "reviews_decide_create": {
        "request": {"verdict": "reject", "reason_code": "unsupported", "note": ""},
        "responses": {
            "200": {
                "id": 40,
                "verdict": "reject",
                "reason_code": "unsupported",
                "note": "",
                "payload": {},
                "actor_label": "erin",
                "at": LATER,
                "undo_until": "2026-08-16T01:26:00Z",
            }
        },
    },
    "reviews_decisions_undo_create": {
        "responses": {
            "200": {"decision": 40, "actor_label": "erin", "at": LATER, "item": REVIEW_ITEM}
        }
    },
}
