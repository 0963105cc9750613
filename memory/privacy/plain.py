"""What the end user's pages call things: memdesk's words for a person, not an engineer."""

from __future__ import annotations

from typing import Any

# A claim's status as its owner reads it.
MEMORY_STATES = {
    "active": ("in use", "Agents may recall it."),
    "candidate": ("waiting for review", "A reviewer checks it before agents may use it."),
    "quarantined": ("held back", "It looked risky; a reviewer decides whether it is kept."),
    "conflicted": ("disputed", "It disagrees with another memory; a reviewer settles it."),
    "superseded": ("replaced", "A newer version took its place; agents no longer use it."),
    "rejected": ("turned down", "A reviewer decided it should not be remembered."),
    "invalidated": ("no longer used", "It expired or its source was withdrawn."),
}

# Each deletion probe as "where we looked".
PROBE_PLACES = {
    "distinctive_words": "Other memories that repeat its words",
    "claims_table": "The memory itself",
    "claim_sources": "Links to where it came from",
    "full_text_index": "The search index",
    "trigram_index": "The fuzzy-search index",
    "ledger_events": "The conversation records it came from",
    "hot_memory": "Agents' quick-access summaries",
    "recall": "What agents can recall",
    "recall_traces": "Logs of what agents recalled",
    "audit_log": "The history log",
    "idempotency_replies": "Saved answers to repeated requests",
    "review_items": "The review queues",
    "everywhere": "Every other place memdesk stores text",
}

# What a deletion touched, counted in words.
ARTIFACT_WORDS = {
    "claims": "memories erased",
    "events": "conversation records redacted",
    "hot_memory": "quick-access summaries cleared",
    "tombstones": "markers kept so a restored backup forgets again",
    "derived_claims": "memories derived from it erased or withdrawn",
    "full_text_index": "search index entries cleared",
    "trigram_index": "fuzzy-search entries cleared",
    "quoted_elsewhere": "quotes in notes and logs scrubbed",
    "recall_traces": "recall logs redacted",
    "review_items": "review items closed",
}


def memory_state(status: str) -> dict[str, str]:
    word, meaning = MEMORY_STATES.get(status, (status.replace("_", " "), ""))
    return {"word": word, "meaning": meaning}


def probe_rows(probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "place": PROBE_PLACES.get(str(p.get("name")), str(p.get("name", "")).replace("_", " ")),
            "clean": bool(p.get("clean")),
        }
        for p in probes
    ]


def artifact_lines(artifacts: dict[str, dict[str, int]]) -> list[str]:
    """One line per kind of thing the deletion changed (nothing for what it left alone)."""
    lines = []
    for kind, counts in artifacts.items():
        total = sum(n for n in counts.values() if isinstance(n, int))
        if total and kind in ARTIFACT_WORDS:
            lines.append(f"{total} {ARTIFACT_WORDS[kind]}")
    return lines
