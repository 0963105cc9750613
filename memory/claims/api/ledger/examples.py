"""Request and response examples for the ledger's operations (events).

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import LATER, NOW
from memory.claims.api.example_values import EVENT_ID
from memory.receipts.api.receipts.examples import CHECKPOINT, RECEIPT, RUN_ID

EVENT: dict[str, Any] = {
    "id": EVENT_ID,
    "subject": "user:alice",
    "run_id": "run-42",
    "agent": "publisher",
    "kind": "user_statement",
    "text": "I moved to Shanghai last year",
    "body": {},
    "source_uri": "chat://s1/m7",
    "observed_at": NOW,
    "recorded_at": NOW,
    "digest": "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
    "sensitivity": "normal",
    "echo_of": [],
    "stage": "",
    "input_fingerprint": "",
    "policy_version": "",
    "idempotency_key": "",
    "effect": None,
    "evidence": [],
    "redacted": False,
}

# A step of a run: the push of the publish run's commit, verified by a read.
STEP = {
    **EVENT,
    "id": "5b2f8c1e-7d4a-4c9b-9e3f-0a1b2c3d4e5f",
    "subject": "project:blog",
    "kind": "verified",
    "text": "The commit is on origin/main",
    "source_uri": "git://blog/main",
    "digest": "sha256:0c1f4e5d6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f",
    "stage": "push",
    "input_fingerprint": "sha256:weekly-2026-33",
    "policy_version": "publish-policy-3",
    "idempotency_key": "pub-2026-08-16-a",
    "effect": {"system": "git", "operation": "push", "reference": "4f9a2c1"},
    "evidence": [{"uri": "https://git.example/blog/commit/4f9a2c1", "observed_at": NOW}],
}

RUN = {
    "id": RUN_ID,
    "run_id": "run-42",
    "agent": "publisher",
    "input_digest": "sha256:weekly-2026-33",
    "summary": "Weekly digest from posts/2026-33.md to main",
    "policy_version": "publish-policy-3",
    "source_versions": {"post": "sha256:1b4f0e98", "template": "v12"},
    "created_at": NOW,
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "events_create": {
        "request": {
            "subject": "user:alice",
            "run_id": "run-42",
            "agent": "publisher",
            "kind": "user_statement",
            "text": "I moved to Shanghai last year",
            "body": {},
            "source_uri": "chat://s1/m7",
            "observed_at": NOW,
            "echo_of": [],
        },
        "responses": {"201": EVENT},
    },
    "events_retrieve": {"responses": {"200": EVENT}},
    "runs_create": {
        "request": {
            "run_id": "run-42",
            "input_digest": "sha256:weekly-2026-33",
            "summary": "Weekly digest from posts/2026-33.md to main",
            "policy_version": "publish-policy-3",
            "source_versions": {"post": "sha256:1b4f0e98", "template": "v12"},
        },
        "responses": {"201": RUN, "200": RUN},
    },
    "runs_retrieve": {
        "responses": {
            "200": {
                **RUN,
                "receipts": [RECEIPT],
                "checkpoints": [CHECKPOINT],
                "events": [{**STEP, "run_id": "run-42"}],
                "events_url": "/api/v1/events?run_id=run-42",
            }
        }
    },
    "events_list": {"responses": {"200": {"results": [STEP, EVENT], "next": None}}},
    "events_search_retrieve": {
        "responses": {
            "200": {
                "mode": "discovery",
                "results": [
                    {
                        "run_id": "run-42",
                        "subjects": ["user:alice"],
                        "agents": ["publisher"],
                        "events": 200,
                        "hits": 1,
                        "score": 0.66,
                        "first_at": NOW,
                        "last_at": LATER,
                        "snippet": "I moved to Shanghai last year",
                        "matched": ["shanghai"],
                        "window": [
                            {
                                "id": EVENT_ID,
                                "subject": "user:alice",
                                "run_id": "run-42",
                                "position": 50,
                                "kind": "user_statement",
                                "agent": "publisher",
                                "text": "I moved to Shanghai last year",
                                "observed_at": NOW,
                                "recorded_at": NOW,
                                "roles": ["hit"],
                                "skipped_before": 46,
                            }
                        ],
                    }
                ],
                "next": None,
            }
        }
    },
}
