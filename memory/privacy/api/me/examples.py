"""Request and response examples for the /me endpoints and deletion reports.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import CLAIM_ID, DERIVED_ID, HASH, LATER, NOW, OLD_CLAIM_ID, page
from memory.claims.api.example_values import EVENT_ID, SOURCE, TRACE_ID

DELETION_ID = "4d3c2b1a-0f9e-4d8c-8b6a-5f4e3d2c1b90"

ME_MEMORY = {
    "id": CLAIM_ID,
    "subject": "user:alice",
    "kind": "fact",
    "predicate": "home_city",
    "scope": {"project": "crm"},
    "value": "Shanghai",
    "text": "Alice lives in Shanghai",
    "status": "active",
    "authority": "user_explicit",
    "revision": 1,
    "supersedes": None,
    "valid_from": None,
    "valid_to": None,
    "recorded_at": NOW,
    "refresh_after": None,
    "expires_at": None,
    "last_used_at": LATER,
    "use_count": 3,
    "sources": [
        {
            "event": EVENT_ID,
            "event_kind": "user_statement",
            "event_source_uri": "chat://s1/m7",
            "uri": "",
            "observed_at": None,
        }
    ],
}

DELETION_ACCEPTED = {"deletion": DELETION_ID, "deletions": [DELETION_ID]}

EXPORT_ID = "6e5d4c3b-2a1f-4e0d-9c8b-7a6f5e4d3c21"

EXPORT = {
    "id": EXPORT_ID,
    "status": "running",
    "subjects": ["user:alice"],
    "rows_done": 1500,
    "rows_total": 4210,
    "progress": 0.356,
    "size_bytes": 0,
    "digest": "",
    "error_code": "",
    "created_at": NOW,
    "finished_at": None,
    "expires_at": "2026-08-17T01:20:30Z",
    "download": None,
}

EXPORT_READY = {
    **EXPORT,
    "status": "ready",
    "rows_done": 4210,
    "progress": 1.0,
    "size_bytes": 1843120,
    "digest": HASH,
    "finished_at": LATER,
    "download": f"/api/v1/me/exports/{EXPORT_ID}/download",
}

EXPORT_DOCUMENT = {
    "format": "memdesk-export/1",
    "generated_at": LATER,
    "tenant": "acme",
    "user": "alice",
    "subjects": ["user:alice"],
    "consents": [
        {"subject": "user:alice", "sensitivity": "health", "granted": True, "changed_at": NOW}
    ],
    "claims": [
        {
            "id": CLAIM_ID,
            "subject": "user:alice",
            "kind": "fact",
            "predicate": "home_city",
            "scope": {"project": "crm"},
            "value": "Shanghai",
            "text": "Alice lives in Shanghai",
            "status": "active",
            "authority": "user_explicit",
            "basis": "reported",
            "revision": 1,
            "supersedes": None,
            "valid_from": None,
            "valid_to": None,
            "available_at": NOW,
            "recorded_at": NOW,
            "refresh_after": None,
            "expires_at": None,
            "gate": {"decision": "accepted", "reasons": ["user_explicit_reported"]},
            "agent": "publisher",
            "last_used_at": LATER,
            "use_count": 3,
            "sources": [
                {
                    "event": EVENT_ID,
                    "event_kind": "user_statement",
                    "uri": "",
                    "observed_at": None,
                    "digest": SOURCE["digest"],
                }
            ],
            "history": [
                {
                    "at": NOW,
                    "verb": "claim.accepted",
                    "actor": {"kind": "agent", "label": "publisher"},
                    "reason": "",
                }
            ],
        }
    ],
    "events": [
        {
            "id": EVENT_ID,
            "subject": "user:alice",
            "kind": "user_statement",
            "run_id": "run-42",
            "agent": "publisher",
            "text": "I moved to Shanghai last year",
            "body": {},
            "source_uri": "chat://s1/m7",
            "observed_at": NOW,
            "recorded_at": NOW,
            "digest": SOURCE["digest"],
            "sensitivity": "personal",
            "redacted": False,
        }
    ],
    "deletions": [
        {
            "id": DELETION_ID,
            "scope": "claim",
            "cause": "asked",
            "subject": "user:alice",
            "claim": OLD_CLAIM_ID,
            "events": [],
            "recall_traces": [],
            "status": "completed",
            "created_at": NOW,
            "finished_at": LATER,
            "report": {"scope": "claim", "clean": True, "artifacts": {"claims": {"erased": 1}}},
        }
    ],
    "recall_traces": [
        {
            "id": TRACE_ID,
            "kind": "recall",
            "subject": "user:alice",
            "query": "where does alice live",
            "filters": {"scope": {"project": "crm"}, "limit": 10},
            "excluded": {"out_of_scope": 0, "inactive": 1},
            "chosen": [CLAIM_ID],
            "budget_chars": 4000,
            "used_chars": 23,
            "created_at": NOW,
            "redacted": False,
        }
    ],
    "recall_uses": [
        {
            "trace": TRACE_ID,
            "claim": CLAIM_ID,
            "position": 0,
            "cited": True,
            "harmful": False,
            "run_id": "run-42",
            "task_id": "",
            "reported_at": LATER,
        }
    ],
    "review_decisions": [
        {
            "id": 12,
            "review_item": 7,
            "queue": "candidates",
            "claim": CLAIM_ID,
            "verdict": "approve",
            "reason_code": "verified",
            "note": "Confirmed with Alice on the phone.",
            "payload": {},
            "actor": {"kind": "user", "label": "editor"},
            "at": NOW,
            "scrubbed": False,
        }
    ],
    "audit": [
        {
            "at": NOW,
            "verb": "claim.accepted",
            "target_type": "claim",
            "target_id": CLAIM_ID,
            "actor": {"kind": "agent", "label": "publisher"},
            "reason": "",
            "data": {"revision": 1, "supersedes": None},
        }
    ],
    "counts": {
        "claims": 1,
        "events": 1,
        "deletions": 1,
        "recall_traces": 1,
        "recall_uses": 1,
        "review_decisions": 1,
        "audit": 1,
    },
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "me_memories_list": {"responses": {"200": page(ME_MEMORY)}},
    "me_memory_get": {"responses": {"200": ME_MEMORY}},
    "me_memory_correct": {
        "request": {"value": "Hangzhou", "text": "Alice lives in Hangzhou"},
        "responses": {
            "201": {
                **ME_MEMORY,
                "id": DERIVED_ID,
                "value": "Hangzhou",
                "text": "Alice lives in Hangzhou",
                "revision": 2,
                "supersedes": CLAIM_ID,
                "use_count": 0,
                "last_used_at": None,
            }
        },
    },
    "me_memory_delete": {"responses": {"202": DELETION_ACCEPTED}},
    "me_memories_delete_all": {"responses": {"202": DELETION_ACCEPTED}},
    "me_consents_list": {
        "responses": {
            "200": {
                "results": [
                    {
                        "subject": "user:alice",
                        "sensitivity": "health",
                        "label": "Health",
                        "description": (
                            "Health: diagnoses, conditions, medication, treatment, pregnancy."
                        ),
                        "granted": False,
                        "changed_at": None,
                    }
                ],
                "next": None,
            }
        }
    },
    "me_consents_set": {
        "request": {"consents": {"health": False}, "subject": "user:alice"},
        "responses": {
            "200": {
                "results": [
                    {
                        "subject": "user:alice",
                        "sensitivity": "health",
                        "label": "Health",
                        "description": (
                            "Health: diagnoses, conditions, medication, treatment, pregnancy."
                        ),
                        "granted": False,
                        "changed_at": NOW,
                    }
                ],
                "next": None,
                "deletions": [DELETION_ID],
            }
        },
    },
    "me_export": {"responses": {"200": EXPORT_DOCUMENT, "202": EXPORT}},
    "me_exports_create": {"responses": {"202": EXPORT}},
    "me_export_get": {"responses": {"200": EXPORT_READY}},
    "me_export_download": {"responses": {"200": EXPORT_DOCUMENT}},
    "deletion_get": {
        "responses": {
            "200": {
                "id": DELETION_ID,
                "scope": "claim",
                "cause": "asked",
                "subject": "user:alice",
                "claim": CLAIM_ID,
                "events": [],
                "recall_traces": [],
                "status": "completed",
                "attempts": 1,
                "error_code": "",
                "created_at": NOW,
                "started_at": NOW,
                "finished_at": LATER,
                "report": {
                    "scope": "claim",
                    "target": {"claim": CLAIM_ID},
                    "artifacts": {"claims": 1, "events": 1, "embeddings": 1, "cache_keys": 2},
                    "probes": [
                        {
                            "name": "recall",
                            "query": "Shanghai",
                            "result": {"items": 0},
                            "clean": True,
                        }
                    ],
                    "clean": True,
                    "terms": {"count": 1},
                    "residual_copies": [],
                    "timings_ms": {"propagate": 42, "verify": 17},
                },
            }
        }
    },
}
