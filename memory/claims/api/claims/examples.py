"""Request and response examples for the claims operations, the gate's rules and hot memory.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import CLAIM_ID, DERIVED_ID, NOW, OLD_CLAIM_ID, page
from memory.claims.api.example_values import EVENT_ID, SOURCE, TRACE_ID

CANDIDATE = {
    "subject": "user:alice",
    "kind": "fact",
    "predicate": "home_city",
    "value": "Shanghai",
    "text": "Alice lives in Shanghai",
    "scope": {"project": "crm"},
    "authority": "user_explicit",
    "basis": "reported",
    "sources": [{"event": EVENT_ID}],
}

CLAIM = {
    "id": CLAIM_ID,
    "subject": "user:alice",
    "kind": "fact",
    "predicate": "home_city",
    "scope": {"project": "crm"},
    "value": "Shanghai",
    "text": "Alice lives in Shanghai",
    "authority": "user_explicit",
    "basis": "reported",
    "valid_from": None,
    "valid_to": None,
    "available_at": NOW,
    "recorded_at": NOW,
    "refresh_after": None,
    "expires_at": None,
    "status": "active",
    "revision": 1,
    "supersedes": None,
    "conflicts_with": [],
    "sources": [SOURCE],
    "gate": {"decision": "accepted", "reasons": ["user_explicit_reported"]},
    "agent": "publisher",
    "last_used_at": None,
    "use_count": 0,
}

VERDICT = {
    "id": CLAIM_ID,
    "status": "active",
    "decision": "accepted",
    "reasons": ["user_explicit_reported"],
    "revision": 1,
    "merged_into": None,
    "conflict_with": [],
    "review_item": None,
    "sensitivity": "normal",
    "consent_required": [],
}

NEEDS_REVIEW = {
    "id": DERIVED_ID,
    "status": "candidate",
    "decision": "needs_review",
    "reasons": ["agent_inferred_needs_review"],
    "revision": 1,
    "merged_into": None,
    "conflict_with": [],
    "review_item": {"id": 12, "queue": "candidates"},
    "sensitivity": "normal",
    "consent_required": [],
}

# The batch answer has no serializer; the agent API (docs/api.md) gives its shape. Items are
# left open: each is a VerdictOut or `{"error": problem}`.
BATCH_RESULT = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {
            "type": "array",
            "description": "One verdict (VerdictOut) per item, in order; "
            '`{"error": problem}` in the place of an item that was refused.',
            "items": {"type": "object", "additionalProperties": True},
        }
    },
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "claims_create": {"request": CANDIDATE, "responses": {"201": VERDICT}},
    "claims:batch_create": {
        "request": {
            "items": [
                CANDIDATE,
                {**CANDIDATE, "predicate": "employer", "value": "Acme", "text": "Works at Acme"},
            ]
        },
        "responses": {"200": {"results": [VERDICT, NEEDS_REVIEW]}},
    },
    "claims_list": {
        "responses": {
            "200": page(
                CLAIM,
                next_url="https://memdesk.example/api/v1/claims?cursor=cD0yMDI2&limit=1",
            )
        }
    },
    "claims_retrieve": {
        "responses": {
            "200": {
                **CLAIM,
                "history": [
                    {
                        "id": CLAIM_ID,
                        "predicate": "home_city",
                        "status": "active",
                        "revision": 1,
                        "recorded_at": NOW,
                    }
                ],
                "derived_from": [],
                "derivatives": [],
                "superseded_by": None,
                "value_signals": {
                    "returned": 12,
                    "reported": 10,
                    "used": 7,
                    "cited": 3,
                    "harmful": 0,
                    "unused": 3,
                },
            }
        }
    },
    "claims_invalidate_create": {
        "request": {"reason": "Alice moved again; the city is out of date."},
        "responses": {"200": {**CLAIM, "status": "invalidated"}},
    },
    "claims_derive_create": {
        "request": {
            **CANDIDATE,
            "predicate": "timezone",
            "value": "Asia/Shanghai",
            "text": "Alice's time zone is Asia/Shanghai",
            "authority": "agent_inferred",
            "basis": "inference",
            "derived_from": [CLAIM_ID],
        },
        "responses": {"201": NEEDS_REVIEW},
    },
    "gate_rules_retrieve": {
        "responses": {
            "200": {
                "results": [
                    {
                        "code": "secret_detected",
                        "decision": "rejected",
                        "description": "A secret in the text or value; only its digest is kept.",
                    }
                ],
                "next": None,
                "sensitivity_rules": [
                    {
                        "sensitivity": "health",
                        "description": "Health: diagnoses, conditions, medication, treatment, "
                        "pregnancy.",
                        "needs_consent": True,
                        "patterns": ["\\b(?:diagnos\\w*|diabet\\w*)\\b"],
                    }
                ],
                "ephemeral_rules": [
                    {
                        "kind": "session_id",
                        "description": "A session id: it names one login, not the person.",
                        "patterns": ["\\b(?:session[ _-]?id)\\b"],
                    }
                ],
                "injection_threshold": 3,
                "injection_signals": [
                    {
                        "code": "override_instructions",
                        "description": "Asks to ignore or replace earlier instructions.",
                        "weight": 3,
                        "patterns": ["ignore (all )?previous instructions"],
                    }
                ],
            }
        }
    },
    "claims_archive_create": {
        "request": {"reason": "nobody has needed it for a year"},
        "responses": {"200": {**CLAIM, "status": "archived"}},
    },
    "claims_restore_create": {
        "request": {"reason": "asked about again"},
        "responses": {"200": CLAIM},
    },
    "claims_merge_create": {
        "request": {"pending": DERIVED_ID, "reason": "both lists are right"},
        "responses": {
            "201": {
                **CLAIM,
                "predicate": "drinks",
                "scope": {},
                "value": ["tea", "coffee", "mate"],
                "text": "drinks: tea, coffee, mate",
                "authority": "agent_inferred",
                "revision": 3,
                "supersedes": OLD_CLAIM_ID,
                "gate": {"decision": "merged", "reasons": ["typed_merge_set"]},
            }
        },
    },
    "subjects_hot_memory_retrieve": {
        "responses": {
            "200": {
                "subject": "user:alice",
                "text": "- home_city: Alice lives in Shanghai\n- prefers: tea over coffee",
                "budget_chars": 4000,
                "chars": 63,
                "claims": [CLAIM_ID],
                "trace_id": TRACE_ID,
            }
        }
    },
}

# Answers that have no serializer, by operationId: the schema the example goes under.
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {"claims:batch_create": BATCH_RESULT}
