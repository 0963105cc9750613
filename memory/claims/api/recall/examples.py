"""Request and response examples for recall and its traces.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import CLAIM_ID, LATER, NOW, OLD_CLAIM_ID
from memory.claims.api.example_values import SOURCE, TRACE_ID

_EXCLUDED = {
    "out_of_scope": 0,
    "not_yet_valid": 0,
    "no_longer_valid": 0,
    "after_cutoff": 0,
    "event_after_cutoff": 0,
    "inactive": 1,
    "expired": 0,
    "stale": 0,
}

_SIGNALS = {"fulltext": {"rank": 1, "score": 0.61}, "recency": {"rank": 1}}

_REPLAYED = {
    "id": CLAIM_ID,
    "subject": "user:alice",
    "predicate": "home_city",
    "text": "Alice lives in Shanghai",
    "rank": 0.61,
    "position": 0,
    "stale": False,
}

TRACE = {
    "id": TRACE_ID,
    "kind": "recall",
    "subject": "user:alice",
    "query": "where does alice live",
    "filters": {"scope": {}, "limit": 1, "include_stale": False},
    "created_at": NOW,
    "redacted": False,
    "duration_ms": 4.2,
    "semantic": "numpy",
    "abstention": {
        "judged": True,
        "abstained": False,
        "best": 0.552,
        "floor": 0.134,
        "strong": 0.208,
        "reason": None,
        "asked": 0.443,
    },
    "legal_set": {"legal": 2, "excluded": {**_EXCLUDED, "over_budget": 0, "no_match": 1}},
    "rendered_context": "Alice lives in Shanghai",
    "context_tokens": 4,
    "budget": {"budget_chars": 4000, "used_chars": 23, "over_budget": 0, "below_limit": 1},
    "returned": [
        {
            "id": CLAIM_ID,
            "rank": 0.61,
            "signals": _SIGNALS,
            "chars": 23,
            "predicate": "home_city",
            "text": "Alice lives in Shanghai",
            "status": "active",
            "subject": "user:alice",
            "position": 0,
            "used": True,
            "cited": True,
            "prompt_position": 0,
            "relevance": "strong",
        }
    ],
    "cut": [
        {
            "id": OLD_CLAIM_ID,
            "rank": 0.12,
            "signals": {"recency": {"rank": 2}},
            "chars": 22,
            "predicate": "employer",
            "text": "Alice works at Acme",
            "status": "active",
            "subject": "user:alice",
            "reason": "below_limit",
        }
    ],
    "uses": [
        {
            "claim": CLAIM_ID,
            "position": 0,
            "cited": True,
            "harmful": False,
            "run_id": "run-42",
            "task_id": "",
            "reported_at": LATER,
        }
    ],
}

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "recall_create": {
        "request": {
            "subject": "user:alice",
            "scope": {"project": "crm"},
            "query": "where does alice live",
            "kinds": ["fact", "preference"],
            "limit": 10,
            "budget_chars": 4000,
            "include_stale": False,
        },
        "responses": {
            "200": {
                "items": [
                    {
                        "id": CLAIM_ID,
                        "subject": "user:alice",
                        "kind": "fact",
                        "predicate": "home_city",
                        "value": "Shanghai",
                        "text": "Alice lives in Shanghai",
                        "scope": {"project": "crm"},
                        "authority": "user_explicit",
                        "valid_from": None,
                        "valid_to": None,
                        "available_at": NOW,
                        "stale": False,
                        "sources": [SOURCE],
                        "conflict": {
                            "id": "31",
                            "other": OLD_CLAIM_ID,
                            "other_side_summary": "Alice lives in Beijing",
                        },
                        "relevance": "strong",
                        "why": {
                            "rank": 0.61,
                            "matched": ["alice", "live"],
                            "scope_match": "exact",
                            "signals": {"fulltext": {"rank": 1}, "vector": {"rank": 1}},
                            "semantic": "numpy",
                        },
                    }
                ],
                "abstained": False,
                "abstention": None,
                "excluded": {
                    "out_of_scope": 0,
                    "not_yet_valid": 0,
                    "no_longer_valid": 0,
                    "after_cutoff": 0,
                    "event_after_cutoff": 0,
                    "inactive": 1,
                    "expired": 0,
                    "stale": 0,
                },
                "trace_id": TRACE_ID,
                "trace_url": f"/api/v1/recall/traces/{TRACE_ID}",
                "traces": {"user:alice": TRACE_ID},
            }
        },
    },
    "recall_traces_retrieve": {"responses": {"200": TRACE}},
    "recall_traces_used_create": {
        "request": {
            "items": [{"id": CLAIM_ID, "position": 0, "cited": True, "harmful": False}],
            "run_id": "run-42",
            "task_id": "publish-alice",
        },
        "responses": {
            "201": {
                "trace_id": TRACE_ID,
                "recorded": [CLAIM_ID],
                "already_reported": [],
                "unused": [OLD_CLAIM_ID],
            },
            "200": {
                "trace_id": TRACE_ID,
                "recorded": [],
                "already_reported": [CLAIM_ID],
                "unused": [OLD_CLAIM_ID],
            },
        },
    },
    "recall_traces_counterfactual_create": {
        "request": {"claim": CLAIM_ID, "change": "hide"},
        "responses": {
            "200": {
                "trace_id": TRACE_ID,
                "claim": CLAIM_ID,
                "change": "hide",
                "recorded": [CLAIM_ID],
                "baseline": {
                    "items": [_REPLAYED],
                    "excluded": {**_EXCLUDED, "no_match": 1},
                },
                "counterfactual": {
                    "items": [
                        {
                            **_REPLAYED,
                            "id": OLD_CLAIM_ID,
                            "predicate": "lived_in",
                            "text": "Alice lived in Beijing",
                            "rank": 0.12,
                        }
                    ],
                    "excluded": {**_EXCLUDED, "hidden": 1},
                },
                "difference": {
                    "removed": [CLAIM_ID],
                    "added": [OLD_CLAIM_ID],
                    "moved": [],
                    "unchanged": False,
                },
            }
        },
    },
}
