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

# A deletion's status as the person who asked for it reads it.
DELETION_STATES = {
    "pending": "waiting to start",
    "propagating": "erasing",
    "verifying": "checking",
    "needs_review": "an editor is checking",
    "completed": "done",
    "failed": "did not finish",
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

# What a deletion touched, counted in words: (one, many) so "1 memory erased" reads right.
ARTIFACT_WORDS = {
    "claims": ("memory erased", "memories erased"),
    "events": ("conversation record redacted", "conversation records redacted"),
    "hot_memory": ("quick-access summary cleared", "quick-access summaries cleared"),
    "tombstones": (
        "marker kept so a restored backup forgets again",
        "markers kept so a restored backup forgets again",
    ),
    "derived_claims": (
        "memory derived from it erased or withdrawn",
        "memories derived from it erased or withdrawn",
    ),
    "full_text_index": ("search index entry cleared", "search index entries cleared"),
    "trigram_index": ("fuzzy-search entry cleared", "fuzzy-search entries cleared"),
    "quoted_elsewhere": ("quote in notes and logs scrubbed", "quotes in notes and logs scrubbed"),
    "recall_traces": ("recall log redacted", "recall logs redacted"),
    "review_items": ("review item closed", "review items closed"),
}

# A ledger event's kind as the page about it is titled (kinds are free text agents choose).
EVENT_TITLES = {
    "user_statement": "What you said",
    "tool_result": "What a tool told an agent",
    "agent_step": "What an agent noted",
    "redacted": "An erased record",
}


# A history entry (an audit verb) as the memory's owner reads it.
HISTORY_WORDS = {
    "claim.accepted": "Accepted: agents may recall it",
    "claim.candidate": "Waiting for a reviewer",
    "claim.needs_review": "Sent to a reviewer",
    "claim.quarantined": "Held back for a reviewer",
    "claim.conflict": "Found to disagree with another memory",
    "claim.conflicted": "Found to disagree with another memory",
    "claim.rejected": "Turned down by a reviewer",
    "claim.superseded": "Replaced by a newer version",
    "claim.invalidated": "No longer used",
    "claim.merged": "Merged with a memory saying the same",
    "claim.refreshed": "Confirmed again",
    "claim.erased": "Erased",
    "claims.derived_invalidated": "Memories worked out from it withdrawn",
    "memory.corrected": "Corrected",
    "deletion.requested": "Deletion asked for",
    "deletion.propagating": "Erasing every copy",
    "deletion.verifying": "Searching again for what was erased",
    "deletion.completed": "Finished: nothing was found",
    "deletion.needs_review": "Possible copy found: an editor is checking",
    "deletion.failed": "Did not finish: an editor was asked to look",
    "deletion.acknowledged": "Checked by an editor",
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


# Where a memory came from when it is not something the person said, by the uri's scheme.
SOURCE_WORDS = {
    "email": "an email",
    "chat": "a conversation",
    "http": "a web page",
    "https": "a web page",
    "file": "a document",
    "tool": "a tool an agent used",
}


def source_words(uri: str) -> str:
    """`email://inbox/4411` → "an email"; a scheme memdesk has no word for: "another system"."""
    scheme = uri.partition("://")[0].lower() if "://" in uri else ""
    return SOURCE_WORDS.get(scheme, "another system")


def event_title(kind: str) -> str:
    return EVENT_TITLES.get(kind, "What an agent recorded")


def history_words(verb: str) -> str:
    """An audit verb in words; one memdesk has no words for yet reads as its last part."""
    if verb in HISTORY_WORDS:
        return HISTORY_WORDS[verb]
    return verb.rsplit(".", 1)[-1].replace("_", " ").capitalize()


def artifact_lines(artifacts: dict[str, dict[str, int]]) -> list[str]:
    """One line per kind of thing the deletion changed (nothing for what it left alone)."""
    lines = []
    for kind, counts in artifacts.items():
        total = sum(n for n in counts.values() if isinstance(n, int))
        if total and kind in ARTIFACT_WORDS:
            one, many = ARTIFACT_WORDS[kind]
            lines.append(f"{total} {one if total == 1 else many}")
    return lines


def export_report(report: dict[str, Any]) -> dict[str, Any]:
    """A deletion's report as an export holds it: each probe's result, not the SQL it ran
    (an export holds the person's data, not memdesk's queries)."""
    probes = report.get("probes")
    if not isinstance(probes, list):
        return report
    return {
        **report,
        "probes": [
            {key: value for key, value in probe.items() if key != "query"}
            if isinstance(probe, dict)
            else probe
            for probe in probes
        ],
    }


def deletion_reason_words(code: str) -> str:
    """Why a deletion waits in the editors' queue, in an editor's words: a probe that found
    something names the place it searched, a match names the column it was in."""
    kind, _, detail = code.partition(":")
    if kind == "dirty" and detail:
        return f"possible copy: {PROBE_PLACES.get(detail, detail.replace('_', ' ')).lower()}"
    if kind == "found" and detail:
        return f"matched in {detail}"
    return f"failed: {code.replace('_', ' ')}"
