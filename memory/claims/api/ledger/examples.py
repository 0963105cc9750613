"""Request and response examples for the ledger's operations (events).

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import LATER, NOW
from memory.claims.api.example_values import EVENT_ID

EVENT = {
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
    "redacted": False,
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
