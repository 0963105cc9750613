"""Request and response examples for receipts, checkpoints and recovery.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import HASH, LATER, NOW, PUBLISHER, page

RECEIPT_ID = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c60"
RUN_ID = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"

RECONCILER = {
    "adapter": "http",
    "platform": "blog",
    "lookup_path": "articles?key={idempotency_key}",
    "absence_proof": "status_404",
    "external_id_field": "id",
}

RECEIPT = {
    "id": RECEIPT_ID,
    "operation": "articles.create",
    "target": "https://blog.example/api/articles",
    "intent": {"title": "Alice moved to Shanghai", "slug": "alice-moved"},
    "intent_fingerprint": HASH,
    "idempotency_key": "pub-2026-08-16-a",
    "state": "planned",
    "external_id": "",
    "error_code": "",
    "reconciler": RECONCILER,
    "run_id": "run-42",
    "run": RUN_ID,
    "policy_version": "publish-policy-3",
    "kind": "effect",
    "compensates": None,
    "agent": "publisher",
    "submitted_at": None,
    "submit_lease_expires_at": None,
    "reconcile_attempts": 0,
    "next_reconcile_at": None,
    "created_at": NOW,
    "updated_at": NOW,
}

SUCCEEDED = {
    **RECEIPT,
    "state": "succeeded",
    "external_id": "article-8812",
    "submitted_at": NOW,
    "updated_at": LATER,
}

CHECKPOINT = {
    "task_key": "publish-weekly-digest",
    "run_id": "run-42",
    "run": RUN_ID,
    "input_fingerprint": "sha256:weekly-2026-33",
    "stage": "published",
    "stage_complete": True,
    "retry_count": 0,
    "max_retries": 3,
    "allowed_next_stages": [],
    "effects": [RECEIPT_ID],
    "expires_at": "2026-08-17T01:20:30Z",
    "resume_after": None,
    "created_at": NOW,
    "updated_at": LATER,
}

RELEASED_LEASE = {
    "task_key": "publish-weekly-digest",
    "holder": "run-43",
    "decision": "resume",
    "reason": "incomplete_stage",
    "acquired_at": NOW,
    "expires_at": "2026-08-16T01:35:30Z",
    "released_at": "2026-08-16T01:24:02Z",
    "folded_triggers": 0,
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
RECOVERY_ANSWER = {
    "id": 4711,
    "task_key": "publish-weekly-digest",
    "run_id": "",
    "decision": "no_op",
    "reason": "already_verified",
    "folded": False,
    "latency_seconds": 0.042,
    "from_trigger": True,
    "answered_at": NOW,
    "verdict": {"expected": "no_op", "source": "replay", "by": "publisher", "note": ""},
    "correct": True,
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "receipts_create": {
        "request": {
            "operation": "articles.create",
            "target": "https://blog.example/api/articles",
            "intent": {"title": "Alice moved to Shanghai", "slug": "alice-moved"},
            "idempotency_key": "pub-2026-08-16-a",
            "reconciler": RECONCILER,
            "run": RUN_ID,
        },
        "responses": {"201": RECEIPT, "200": SUCCEEDED},
    },
    "receipts_list": {"responses": {"200": page(SUCCEEDED)}},
    "receipts_retrieve": {
        "responses": {
            "200": {
                **SUCCEEDED,
                "transitions": [
                    {"actor": PUBLISHER, "at": NOW, "from": "", "to": "planned"},
                    {"actor": PUBLISHER, "at": NOW, "from": "planned", "to": "submitted"},
                    {
                        "actor": PUBLISHER,
                        "at": LATER,
                        "from": "submitted",
                        "to": "succeeded",
                        "evidence": {"status": 201},
                    },
                ],
                "reads": [],
                "compensations": [],
            }
        }
    },
    "receipts_transitions_create": {
        "request": {
            "to": "succeeded",
            "external_id": "article-8812",
            "evidence": {"status": 201},
        },
        "responses": {"200": SUCCEEDED},
    },
    "checkpoints_update": {
        "request": {
            "run_id": "run-42",
            "input_fingerprint": "sha256:weekly-2026-33",
            "stage": "published",
            "stage_complete": True,
            "retry_count": 0,
            "max_retries": 3,
            "allowed_next_stages": [],
            "effects": [RECEIPT_ID],
        },
        "responses": {"200": CHECKPOINT},
    },
    "checkpoints_retrieve": {"responses": {"200": CHECKPOINT}},
    "recovery_create": {
        "request": {
            "task_key": "publish-weekly-digest",
            "input_fingerprint": "sha256:weekly-2026-33",
            "triggered_at": NOW,
        },
        "responses": {
            "200": {
                "decision": "no_op",
                "reason": "already_verified",
                "checkpoint": CHECKPOINT,
                "effects": [SUCCEEDED],
                "lease": None,
                "folded": False,
                "answer_id": 4711,
                "compensations": [],
            }
        },
    },
    "recovery_release_create": {
        "request": {"task_key": "publish-weekly-digest", "run_id": "run-43"},
        "responses": {"200": RELEASED_LEASE},
    },
    "recovery_answers_list": {
        "responses": {
            "200": {
                "next": None,
                "results": [RECOVERY_ANSWER],
            }
        }
    },
    "recovery_answers_verdict_create": {
        "request": {"expected": "no_op", "note": ""},
        "responses": {"200": RECOVERY_ANSWER},
    },
}
