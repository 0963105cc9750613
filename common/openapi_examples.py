"""Request and response examples for every operation of the OpenAPI schema.

A drf-spectacular post-processing hook attaches them by operationId, so the
views stay as they are and the examples live in one place: one request example
per body and one per success answer. tests/common/test_openapi_examples.py
checks that every operation has them and that each validates against its schema.
"""

from __future__ import annotations

import copy
from typing import Any

# --- the values the examples share ----------------------------------------------------------

EVENT_ID = "0f6b8c2e-4c1d-4d8e-9a57-3b1e5d2c9a10"
CLAIM_ID = "5a3e2f10-8b7c-4c6d-a1e2-9f8d7c6b5a40"
OLD_CLAIM_ID = "3c2b1a09-7f6e-4d5c-b4a3-2e1f0d9c8b70"
DERIVED_ID = "7d6c5b4a-3e2f-4a1b-9c8d-7e6f5a4b3c20"
RECEIPT_ID = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c60"
TRACE_ID = "2b1a0f9e-8d7c-4b6a-9f4e-3d2c1b0a9f80"
DELETION_ID = "4d3c2b1a-0f9e-4d8c-8b6a-5f4e3d2c1b90"
HASH = "sha256:8f14e45fceea167a5a36dedd4bea2543d5b5b4f6b8c1e0c2a1b3d4e5f6a7b8c9"
HASH_V2 = "sha256:1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
NOW = "2026-08-16T01:20:30Z"
LATER = "2026-08-16T01:25:30Z"

ADA = {"kind": "user", "id": "3", "label": "ada"}
ABE = {"kind": "user", "id": "4", "label": "abe"}
PUBLISHER = {"kind": "agent", "id": "7", "label": "publisher"}

SOURCE = {
    "event": EVENT_ID,
    "uri": "",
    "observed_at": None,
    "digest": "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
    "added_at": NOW,
}
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
    "input_fingerprint": "sha256:weekly-2026-33",
    "stage": "published",
    "stage_complete": True,
    "retry_count": 0,
    "max_retries": 3,
    "allowed_next_stages": [],
    "effects": [RECEIPT_ID],
    "expires_at": None,
    "created_at": NOW,
    "updated_at": LATER,
}
MANIFEST = {
    "name": "pdf-tools",
    "description": "Fill in PDF forms.",
    "version": "1.0",
    "risk": "low",
    "capabilities": [],
}
VERSION = {
    "skill": "pdf-tools",
    "number": 1,
    "content_hash": HASH,
    "status": "published",
    "allowed_next": ["deprecated", "revoked"],
    "manifest": MANIFEST,
    "author": ADA,
    "created_at": NOW,
    "submitted_at": NOW,
    "approved_at": NOW,
    "approved_by": ABE,
    "approved_changes": [],
    "rejected_at": None,
    "reject_reason": "",
    "published_at": LATER,
    "deprecated_at": None,
    "deprecate_reason": "",
    "revoked_at": None,
    "revoke_reason": "",
    "incompatible_at": None,
    "incompatible_reason": "",
}
DRAFT = {
    **VERSION,
    "number": 2,
    "content_hash": HASH_V2,
    "status": "draft",
    "allowed_next": ["in_review"],
    "author": PUBLISHER,
    "submitted_at": None,
    "approved_at": None,
    "approved_by": None,
    "published_at": None,
}
CHECKS = {
    "selection": True,
    "loading": True,
    "action_trajectory": True,
    "final_state": True,
    "safety_refusal": True,
}
EVALUATION_CASE = {
    "id": "fill-1",
    "input": {"form": "forms/visa.pdf", "values": {"name": "Ada"}},
    "expected": {"filled": True},
    "trajectory_summary": "selected pdf-tools, loaded the body, filled 1 field, returned the file",
    "result": "passed",
    "checks": CHECKS,
    "cost": {"tokens": 1840, "seconds": 4.2, "tool_calls": 3},
}
EVALUATOR = {"kind": "agent", "id": "9", "label": "ci-evaluator"}
APPROVALS = {"approvals": [{**ABE, "at": NOW}], "approvals_required": 1}
EVALUATION = {
    "id": 31,
    "category": "normal",
    "passed": True,
    "content_hash": HASH,
    "counts": True,
    "details": {"suite": "regression-12"},
    "environment": {"model": "example-model-1"},
    "actor": EVALUATOR,
    "independent": True,
    "cases": [EVALUATION_CASE],
    "at": NOW,
}
CATALOG_ENTRY = {
    "skill": "pdf-tools",
    "name": "PDF tools",
    "description": "Fill in PDF forms.",
    "version": 1,
    "content_hash": HASH,
    "status": "published",
    "risk": "low",
    "capabilities": [],
    "required_tools": ["Read"],
    "credentials": [],
    "consumes": ["form:private"],
    "produces": ["document:private"],
    "score": 2,
    "body_url": "/api/v1/skills/pdf-tools/versions/1/body",
}
LABEL_MOVE = {
    "id": 5,
    "skill": "pdf-tools",
    "label": "production",
    "from_version": None,
    "to_version": 1,
    "cause": "publish",
    "actor": ABE,
    "reason": "",
    "at": LATER,
}
SKILL = {
    "slug": "pdf-tools",
    "name": "PDF tools",
    "created_at": NOW,
    "created_by": ADA,
    "production": {"number": 1, "content_hash": HASH, "status": "published", "since": LATER},
    "latest_version": 1,
    "in_review": 0,
}
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
PLATFORM = {
    "id": 1,
    "name": "blog",
    "base_url": "https://blog.example/api/",
    "allow_private": False,
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
    "requirements": ["external_id", "evidence.url"],
    "created_by": "ada",
    "created_at": NOW,
    "updated_at": NOW,
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
    "counts": {"claims": 1, "events": 1, "deletions": 1},
}


_EXCLUDED = {
    "out_of_scope": 0,
    "not_yet_valid": 0,
    "no_longer_valid": 0,
    "after_cutoff": 0,
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
    "semantic": "pgvector",
    "legal_set": {"legal": 2, "excluded": {**_EXCLUDED, "over_budget": 0, "no_match": 1}},
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


def _page(*results: Any, next_url: str | None = None) -> dict[str, Any]:
    return {"results": list(results), "next": next_url}


# --- operationId → examples -----------------------------------------------------------------
# "request" is the body; "responses" maps each success status to its answer.

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
            "200": _page(
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
                        "why": {
                            "rank": 0.61,
                            "matched": ["alice", "live"],
                            "scope_match": "exact",
                            "signals": {"fulltext": {"rank": 1}, "vector": {"rank": 1}},
                            "semantic": "pgvector",
                        },
                    }
                ],
                "excluded": {
                    "out_of_scope": 0,
                    "not_yet_valid": 0,
                    "no_longer_valid": 0,
                    "after_cutoff": 0,
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
    "receipts_create": {
        "request": {
            "operation": "articles.create",
            "target": "https://blog.example/api/articles",
            "intent": {"title": "Alice moved to Shanghai", "slug": "alice-moved"},
            "idempotency_key": "pub-2026-08-16-a",
            "reconciler": RECONCILER,
            "run_id": "run-42",
        },
        "responses": {"201": RECEIPT, "200": SUCCEEDED},
    },
    "receipts_list": {"responses": {"200": _page(SUCCEEDED)}},
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
            }
        },
    },
    "me_memories_list": {"responses": {"200": _page(ME_MEMORY)}},
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
        "request": {"name": "blog", "base_url": "https://blog.example/api/"},
        "responses": {"201": PLATFORM, "200": PLATFORM},
    },
    "reviews_list": {"responses": {"200": _page(REVIEW_ITEM)}},
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
    "skills_list": {"responses": {"200": _page(SKILL)}},
    "skills_create": {
        "request": {"slug": "pdf-tools", "name": "PDF tools"},
        "responses": {"201": {**SKILL, "production": None, "latest_version": None, "in_review": 0}},
    },
    "skills_retrieve": {"responses": {"200": SKILL}},
    "skills_versions_list": {"responses": {"200": _page(DRAFT, VERSION)}},
    "skills_versions_create": {
        "request": {"package": "(a zip archive whose root holds SKILL.md)"},
        "responses": {"201": DRAFT, "200": DRAFT},
    },
    "skills_versions_retrieve": {
        "responses": {
            "200": {
                **VERSION,
                **APPROVALS,
                "body": "# PDF tools\n\nFill in PDF forms.\n",
                "files": [
                    {"path": "SKILL.md", "sha256": HASH, "size": 96},
                    {"path": "references/guide.md", "sha256": HASH_V2, "size": 31},
                ],
                "evaluation_matrix": {
                    "content_hash": HASH,
                    "complete": True,
                    "missing": [],
                    "failed": [],
                    "unverified": [],
                    "other_hash_runs": 0,
                    "categories": [
                        {"category": "normal", "state": "passed", "doubts": [], "run": EVALUATION}
                    ],
                },
                "instances_last_24h": 4,
                "changes_vs_production": [],
                "loads": {"catalog": 120, "body": 31, "file": 4},
                "cost_curve": [
                    {
                        "version": 1,
                        "cases": 12,
                        "passed": 12,
                        "pass_rate": 1.0,
                        "mean_tokens": 1840.0,
                        "mean_seconds": 4.2,
                        "mean_tool_calls": 3.0,
                    }
                ],
                "draft_sources": [],
            }
        }
    },
    "skills_versions_files_retrieve": {
        "responses": {"200": "# Guide\n\nPress the blue button.\n"},
    },
    "skills_versions_evaluations_list": {"responses": {"200": _page(EVALUATION)}},
    "skills_versions_evaluations_create": {
        "request": {
            "category": "normal",
            "passed": True,
            "content_hash": HASH,
            "details": {"suite": "regression-12"},
            "environment": {"model": "example-model-1"},
            "cases": [EVALUATION_CASE],
        },
        "responses": {"201": EVALUATION},
    },
    "skills_catalog_retrieve": {
        "responses": {
            "200": {
                "results": [CATALOG_ENTRY],
                "excluded": [
                    {
                        "skill": "blog-publish",
                        "version": 3,
                        "reason": "tools_unavailable",
                        "missing_tools": ["http_post"],
                    }
                ],
                "conflicts": [],
            }
        }
    },
    "skills_versions_body_retrieve": {
        "responses": {
            "200": {
                "skill": "pdf-tools",
                "number": 1,
                "content_hash": HASH,
                "status": "published",
                "body": "# PDF tools\n\nFill in PDF forms. See references/guide.md.\n",
                "files": [
                    {
                        "path": "references/guide.md",
                        "sha256": HASH_V2,
                        "size": 31,
                        "url": "/api/v1/skills/pdf-tools/versions/1/files/references/guide.md",
                    }
                ],
                "deprecation": None,
            }
        }
    },
    "skills_versions_loads_list": {
        "responses": {
            "200": _page(
                {"level": 2, "loader": PUBLISHER, "count": 31, "first_at": NOW, "last_at": LATER}
            )
        }
    },
    "skills_versions_instantiate_create": {
        "request": {
            "bindings": {"site_token": "vault:blog/token"},
            "tools": ["http_post"],
            "capabilities": ["network"],
        },
        "responses": {
            "200": {
                "skill": "blog-publish",
                "number": 3,
                "content_hash": HASH,
                "state": "blocked",
                "reasons": [
                    {
                        "code": "slot_unbound",
                        "detail": "Bind the credential slot image_store to the name of a secret "
                        "you hold.",
                        "slot": "image_store",
                        "tool": None,
                        "capability": None,
                    }
                ],
                "bindings": {"site_token": "vault:blog/token"},
            }
        },
    },
    "skills_tools_list": {
        "responses": {
            "200": _page(
                {"name": "http_post", "reason": "moved to webhooks", "actor": ADA, "at": NOW}
            )
        }
    },
    "skills_tools_retire_create": {
        "request": {"reason": "the blog API moved to webhooks"},
        "responses": {
            "200": {
                "tool": {
                    "name": "http_post",
                    "reason": "the blog API moved to webhooks",
                    "actor": ADA,
                    "at": NOW,
                },
                "incompatible": [
                    {"skill": "blog-publish", "number": 3, "previous_status": "published"}
                ],
            }
        },
    },
    "skills_drafts_create": {
        "request": {
            "slug": "deploy-crm",
            "name": "Deploy CRM",
            "description": "Deploy the CRM with a blue-green switch and watch the errors.",
            "claims": [CLAIM_ID, OLD_CLAIM_ID, DERIVED_ID],
        },
        "responses": {
            "201": {
                "version": {**DRAFT, "skill": "deploy-crm", "number": 1, "author": ADA},
                "created": True,
                "sources": [CLAIM_ID, OLD_CLAIM_ID, DERIVED_ID],
            },
            "200": {
                "version": {**DRAFT, "skill": "deploy-crm", "number": 1, "author": ADA},
                "created": False,
                "sources": [CLAIM_ID, OLD_CLAIM_ID, DERIVED_ID],
            },
        },
    },
    "skills_versions_submit_create": {
        "responses": {
            "200": {**DRAFT, "status": "in_review", "allowed_next": ["approved", "rejected"]}
        }
    },
    "skills_versions_approve_create": {
        "request": {"reason": "Evaluations pass; no new capabilities."},
        "responses": {"200": {**VERSION, **APPROVALS, "status": "approved", "published_at": None}},
    },
    "skills_versions_reject_create": {
        "request": {"reason": "The script reaches the network without declaring it."},
        "responses": {
            "200": {
                **DRAFT,
                "status": "rejected",
                "allowed_next": [],
                "rejected_at": LATER,
                "reject_reason": "The script reaches the network without declaring it.",
            }
        },
    },
    "skills_versions_publish_create": {
        "request": {"reason": "Weekly release."},
        "responses": {"200": VERSION},
    },
    "skills_versions_deprecate_create": {
        "request": {"reason": "Superseded by version 2."},
        "responses": {
            "200": {
                **VERSION,
                "status": "deprecated",
                "allowed_next": ["revoked"],
                "deprecated_at": LATER,
                "deprecate_reason": "Superseded by version 2.",
            }
        },
    },
    "skills_versions_revoke_create": {
        "request": {"reason": "The template URL leaks form data."},
        "responses": {
            "200": {
                "version": {
                    **VERSION,
                    "status": "revoked",
                    "allowed_next": [],
                    "revoked_at": LATER,
                    "revoke_reason": "The template URL leaks form data.",
                },
                "production": None,
                "label_move": {
                    **LABEL_MOVE,
                    "from_version": 1,
                    "to_version": None,
                    "cause": "revoke",
                    "reason": "The template URL leaks form data.",
                },
                "instances_last_24h": 4,
            }
        },
    },
    "skills_rollback_create": {
        "request": {"to": 1, "reason": "Version 2 fails on scanned forms."},
        "responses": {
            "200": {
                **LABEL_MOVE,
                "id": 9,
                "from_version": 2,
                "to_version": 1,
                "cause": "rollback",
                "reason": "Version 2 fails on scanned forms.",
            }
        },
    },
    "skills_resolve_retrieve": {
        "responses": {
            "200": {
                "skill": "pdf-tools",
                "number": 1,
                "content_hash": HASH,
                "status": "published",
                "label": "production",
                "manifest": MANIFEST,
                "body": "# PDF tools\n\nFill in PDF forms.\n",
                "files": [
                    {
                        "path": "references/guide.md",
                        "sha256": HASH_V2,
                        "size": 31,
                        "url": "/api/v1/skills/pdf-tools/versions/1/files/references/guide.md",
                    }
                ],
                "deprecation": None,
            }
        }
    },
    "skills_versions_diff_retrieve": {
        "responses": {
            "200": {
                "from_version": {"number": 1, "content_hash": HASH, "status": "published"},
                "to_version": {"number": 2, "content_hash": HASH_V2, "status": "draft"},
                "flags": ["capabilities_added"],
                "capabilities_added": ["network"],
                "capabilities_removed": [],
                "risk": None,
                "manifest": [
                    {"field": "capabilities", "old": [], "new": ["network"], "flag": "capability"}
                ],
                "files": [
                    {
                        "path": "scripts/fetch.py",
                        "change": "added",
                        "diff": "--- /dev/null\n+++ b/scripts/fetch.py\n@@ -0,0 +1 @@\n"
                        "+import httpx\n",
                    }
                ],
            }
        }
    },
    "skills_labels_history_list": {"responses": {"200": _page(LABEL_MOVE)}},
}

# The batch answer has no serializer; the contract (API.md) gives its shape. Items are
# left open: each is a VerdictOut or `{"error": problem}`.
_BATCH_RESULT = {
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


def attach_examples(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """Put each operation's request and response examples into the schema."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            examples = EXAMPLES.get(operation.get("operationId", ""))
            if examples is None:
                continue
            body = operation.get("requestBody", {}).get("content", {})
            if "request" in examples:
                for media in body.values():
                    media["example"] = copy.deepcopy(examples["request"])
            for status, example in examples.get("responses", {}).items():
                answer = operation.get("responses", {}).get(status)
                if answer is None:
                    continue
                content = answer.setdefault("content", {})
                if not content and operation.get("operationId") == "claims:batch_create":
                    content["application/json"] = {"schema": copy.deepcopy(_BATCH_RESULT)}
                for media in content.values():
                    media["example"] = copy.deepcopy(example)
    return result
