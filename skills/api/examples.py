"""Request and response examples for the skills operations.

`config/openapi.py` attaches them to the schema by operationId.
"""

from __future__ import annotations

from typing import Any

from common.openapi_examples import (
    CLAIM_ID,
    DERIVED_ID,
    HASH,
    LATER,
    NOW,
    OLD_CLAIM_ID,
    PUBLISHER,
    page,
)

HASH_V2 = "sha256:1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"

ADA = {"kind": "user", "id": "3", "label": "ada"}

ABE = {"kind": "user", "id": "4", "label": "abe"}

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
    "baseline": {"result": "failed", "cost": {"tokens": 1500, "seconds": 3.1, "tool_calls": 4}},
}

EVALUATOR = {"kind": "agent", "id": "9", "label": "ci-evaluator"}
ENVIRONMENT = {"model": "example-model-1", "tools": {"Read": "1.2"}, "runtime": "python 3.12"}
APPROVALS = {"approvals": [{**ABE, "at": NOW}], "approvals_required": 1}

EVALUATION = {
    "id": 31,
    "category": "normal",
    "kind": "regression",
    "paired_with": None,
    "passed": True,
    "content_hash": HASH,
    "counts": True,
    "details": {"suite": "regression-12"},
    "environment": ENVIRONMENT,
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
    "score": 0.71,
    "why": {
        "semantic": 0.64,
        "matched": ["pdf", "form"],
        "risk": "low",
        "preconditions": 1,
        "reports": 12,
        "success_rate": 0.917,
        "negative_transfer": 0,
        "beats_baseline": True,
    },
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

# operationId → examples: "request" is the body; "responses" maps each success status
# to its answer.
EXAMPLES: dict[str, dict[str, Any]] = {
    "skills_list": {"responses": {"200": page(SKILL)}},
    "skills_create": {
        "request": {"slug": "pdf-tools", "name": "PDF tools"},
        "responses": {"201": {**SKILL, "production": None, "latest_version": None, "in_review": 0}},
    },
    "skills_retrieve": {"responses": {"200": SKILL}},
    "skills_versions_list": {"responses": {"200": page(DRAFT, VERSION)}},
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
                "baseline": {
                    "verdict": "beats",
                    "beats": True,
                    "cases": 12,
                    "passed": 12,
                    "baseline_passed": 7,
                    "mean_tokens": 1840.0,
                    "baseline_mean_tokens": 1500.0,
                    "cost_factor": 1.5,
                },
                "controls": [
                    {**EVALUATION, "id": 40, "kind": "unseen_task"},
                    {
                        **EVALUATION,
                        "id": 41,
                        "kind": "paired_composition",
                        "paired_with": {"skill": "blog-publish", "number": 3},
                    },
                ],
                "draft_sources": [],
            }
        }
    },
    "skills_versions_files_retrieve": {
        "responses": {"200": "# Guide\n\nPress the blue button.\n"},
    },
    "skills_versions_evaluations_list": {"responses": {"200": page(EVALUATION)}},
    "skills_versions_evaluations_create": {
        "request": {
            "category": "normal",
            "passed": True,
            "content_hash": HASH,
            "details": {"suite": "regression-12"},
            "environment": ENVIRONMENT,
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
                        "reason": "tools_not_granted",
                        "missing_tools": ["http_post"],
                        "missing_capabilities": [],
                    }
                ],
                "conflicts": [],
                "semantic": "on",
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
            "200": page(
                {"level": 2, "loader": PUBLISHER, "count": 31, "first_at": NOW, "last_at": LATER}
            )
        }
    },
    "skills_versions_instantiate_create": {
        "request": {
            "bindings": {"site_token": "vault:blog/token"},
            "inputs": {"article": "a-117"},
            "tools": ["http_post"],
            "capabilities": ["network"],
        },
        "responses": {
            "200": {
                "skill": "blog-publish",
                "number": 3,
                "content_hash": HASH,
                "instance": "6f1c2a0e-4b7d-4c1e-9a53-2d8e7f0b1c44",
                "state": "blocked",
                "reasons": [
                    {
                        "code": "slot_unbound",
                        "detail": "Bind the credential slot image_store to the name of a secret "
                        "you hold.",
                        "slot": "image_store",
                        "tool": None,
                        "capability": None,
                        "input": None,
                    }
                ],
                "bindings": {"site_token": "vault:blog/token"},
            }
        },
    },
    "skills_tools_list": {
        "responses": {
            "200": page(
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
    "skills_labels_history_list": {"responses": {"200": page(LABEL_MOVE)}},
}

GRANT = {
    "id": 7,
    "token": 12,
    "token_name": "publisher",
    "kind": "tool",
    "name": "http_post",
    "at": NOW,
}
BODY = EXAMPLES["skills_versions_body_retrieve"]["responses"]["200"]

EXAMPLES.update(
    {
        "skills_grants_list": {"responses": {"200": page(GRANT)}},
        "skills_grants_create": {
            "request": {"token": 12, "kind": "tool", "name": "http_post"},
            "responses": {"201": GRANT},
        },
        "skills_grants_destroy": {
            "responses": {"200": {"invalidated": ["6f1c2a0e-4b7d-4c1e-9a53-2d8e7f0b1c44"]}}
        },
        "skills_credentials_changed_create": {
            "request": {"secret": "vault:blog/token", "reason": "rotated after the audit"},
            "responses": {"200": {"invalidated": ["6f1c2a0e-4b7d-4c1e-9a53-2d8e7f0b1c44"]}},
        },
        "skills_versions_reports_create": {
            "request": {
                "task_type": "form-filling",
                "outcome": "failure",
                "without_skill": "success",
                "steps": 9,
                "steps_without_skill": 5,
            },
            "responses": {
                "201": {
                    "id": 3,
                    "task_type": "form-filling",
                    "outcome": "failure",
                    "without_skill": "success",
                    "negative_transfer": True,
                    "at": NOW,
                }
            },
        },
        "skills_load_create": {
            "request": {"skills": [{"skill": "pdf-tools"}], "budget_chars": 8000},
            "responses": {
                "200": {"skills": [BODY], "total_chars": 75, "budget_chars": 8000, "conflicts": []}
            },
        },
    }
)
