"""The write gate: pure functions from a candidate claim to a verdict.

Nothing here touches the database. The service gathers the facts the gate
needs (the active claim on the same identity, whether every source echoes
injected memory) and stores whatever the gate decides, with its reasons.
The rules are data (`GATE_RULES`) so an admin can read what each reason means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.secrets import SecretFinding, find_secrets_in_text, find_secrets_in_value
from memory.models.claims import AUTHORITY_RANK, Authority, ClaimKind, ClaimStatus, GateDecision


@dataclass(frozen=True)
class GateRule:
    code: str
    decision: str
    description: str


GATE_RULES: tuple[GateRule, ...] = (
    GateRule(
        "secret_detected",
        GateDecision.REJECTED,
        "The text or value contains a credential. Only its digest is kept.",
    ),
    GateRule(
        "instruction_injection",
        GateDecision.QUARANTINED,
        "The content reads like an instruction to the agent, not a fact about the subject.",
    ),
    GateRule(
        "self_reinforcement",
        GateDecision.REJECTED,
        "Every source is an event produced while memory was injected: the agent is quoting itself.",
    ),
    GateRule("duplicate", GateDecision.MERGED, "Same identity and value as an active claim."),
    GateRule(
        "explicit_supersedes",
        GateDecision.SUPERSEDED_PREVIOUS,
        "The candidate names the active claim it corrects.",
    ),
    GateRule(
        "user_correction",
        GateDecision.SUPERSEDED_PREVIOUS,
        "The user stated a new value; the user is the authority on their own facts.",
    ),
    GateRule(
        "higher_authority",
        GateDecision.SUPERSEDED_PREVIOUS,
        "The candidate comes from a more authoritative source than the active claim.",
    ),
    GateRule(
        "newer_observation",
        GateDecision.SUPERSEDED_PREVIOUS,
        "Equal verified authority, and the candidate was observed later than the active claim.",
    ),
    GateRule(
        "contradicts_active",
        GateDecision.CONFLICT,
        "A different value for the same identity without a way to settle it: an editor decides.",
    ),
    GateRule(
        "unverified_authority",
        GateDecision.NEEDS_REVIEW,
        "Inferred or reported facts become active only after an editor approves them.",
    ),
    GateRule(
        "preference_not_user_explicit",
        GateDecision.NEEDS_REVIEW,
        "Preferences are accepted only when the user stated them.",
    ),
    GateRule(
        "experience_without_outcome",
        GateDecision.NEEDS_REVIEW,
        "An experience needs outcome evidence (`value.outcome`) to be trusted.",
    ),
    GateRule("user_explicit_verified", GateDecision.ACCEPTED, "Stated by the user."),
    GateRule("tool_verified", GateDecision.ACCEPTED, "Verified by a tool against its source."),
    GateRule("experience_with_outcome", GateDecision.ACCEPTED, "An experience with its outcome."),
)
RULES_BY_CODE = {rule.code: rule for rule in GATE_RULES}

# Phrases that address the agent rather than describe the subject. English and
# Chinese, since both appear in the agents' ledgers.
INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\bignore\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier)\s+"
        r"(instructions|rules|prompts?)",
        r"\bdisregard\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|system)\b",
        r"\bremember\s+(this|that)\s+as\s+(a\s+)?(permanent|standing|system)\s+"
        r"(instruction|rule)",
        r"\b(permanent|standing)\s+instruction\b",
        r"\bfrom\s+now\s+on,?\s+(you|the\s+assistant|the\s+agent)\s+(must|should|will|shall)\b",
        r"\byou\s+are\s+now\s+(a|an|in)\b",
        r"\b(system|developer)\s+prompt\b",
        r"\boverride\s+(your|the)\s+(instructions|rules|guidelines)\b",
        r"忽略(之前|以前|上面|先前)的?(所有)?(指令|指示|规则)",
        r"(永久|永远)记住(这条|以下)?(指令|规则)",
        r"从现在(开始|起)[\uff0c,]?\s*你(必须|要|应该)",
    )
)


@dataclass(frozen=True)
class ActiveClaimFacts:
    """What the gate needs to know about the active claim on the same identity."""

    id: Any
    value: Any
    authority: str
    available_at: datetime


@dataclass(frozen=True)
class Candidate:
    kind: str
    predicate: str
    value: Any
    text: str
    authority: str
    basis: str
    available_at: datetime
    supersedes: Any = None
    source_count: int = 0
    # True when every source is an event whose `echo_of` is non-empty.
    sources_all_echo: bool = False


@dataclass(frozen=True)
class Verdict:
    decision: str
    reasons: tuple[str, ...]
    status: str
    conflict_with: tuple[Any, ...] = ()
    supersede: Any = None
    merge_into: Any = None
    secrets: tuple[SecretFinding, ...] = field(default=())


_STATUS_FOR = {
    GateDecision.ACCEPTED: ClaimStatus.ACTIVE,
    GateDecision.SUPERSEDED_PREVIOUS: ClaimStatus.ACTIVE,
    GateDecision.NEEDS_REVIEW: ClaimStatus.CANDIDATE,
    GateDecision.CONFLICT: ClaimStatus.CONFLICTED,
    GateDecision.QUARANTINED: ClaimStatus.QUARANTINED,
    GateDecision.REJECTED: ClaimStatus.REJECTED,
    GateDecision.MERGED: ClaimStatus.ACTIVE,
}


def _verdict(code: str, **extra: Any) -> Verdict:
    rule = RULES_BY_CODE[code]
    return Verdict(
        decision=rule.decision, reasons=(code,), status=_STATUS_FOR[rule.decision], **extra
    )


def find_secrets(candidate: Candidate) -> list[SecretFinding]:
    return find_secrets_in_text(candidate.text) + find_secrets_in_value(candidate.value)


def looks_like_instruction(text: str) -> bool:
    return any(pattern.search(text) for pattern in INJECTION_PATTERNS)


def _content_rules(candidate: Candidate) -> Verdict | None:
    """Rules that hold whatever else memdesk knows: secrets, injection, self-echo."""
    secrets = find_secrets(candidate)
    if secrets:
        return _verdict("secret_detected", secrets=tuple(secrets))
    value_text = candidate.value if isinstance(candidate.value, str) else ""
    if looks_like_instruction(candidate.text) or looks_like_instruction(value_text):
        return _verdict("instruction_injection")
    if candidate.source_count and candidate.sources_all_echo:
        return _verdict("self_reinforcement")
    return None


def _identity_rules(candidate: Candidate, active: ActiveClaimFacts) -> Verdict:
    """Same identity as an active claim: merge, supersede, or leave it to an editor."""
    if candidate.value == active.value:
        return _verdict("duplicate", merge_into=active.id)
    if candidate.supersedes is not None and str(candidate.supersedes) == str(active.id):
        return _verdict("explicit_supersedes", supersede=active.id)
    new_rank = AUTHORITY_RANK[Authority(candidate.authority)]
    old_rank = AUTHORITY_RANK[Authority(active.authority)]
    if candidate.authority == Authority.USER_EXPLICIT and old_rank < new_rank:
        return _verdict("user_correction", supersede=active.id)
    if (
        candidate.authority == Authority.USER_EXPLICIT
        and active.available_at < candidate.available_at
    ):
        return _verdict("user_correction", supersede=active.id)
    if new_rank > old_rank and candidate.authority == Authority.TOOL_VERIFIED:
        return _verdict("higher_authority", supersede=active.id)
    if (
        new_rank == old_rank
        and candidate.authority == Authority.TOOL_VERIFIED
        and candidate.available_at > active.available_at
    ):
        return _verdict("newer_observation", supersede=active.id)
    return _verdict("contradicts_active", conflict_with=(active.id,))


def _trust_rules(candidate: Candidate) -> Verdict:
    """No active claim on this identity: is the candidate trustworthy enough on its own?"""
    if candidate.kind == ClaimKind.PREFERENCE and candidate.authority != Authority.USER_EXPLICIT:
        return _verdict("preference_not_user_explicit")
    if candidate.kind == ClaimKind.EXPERIENCE:
        has_outcome = isinstance(candidate.value, dict) and bool(candidate.value.get("outcome"))
        return _verdict("experience_with_outcome" if has_outcome else "experience_without_outcome")
    if candidate.authority in (Authority.AGENT_INFERRED, Authority.REPORTED):
        return _verdict("unverified_authority")
    if candidate.authority == Authority.USER_EXPLICIT:
        return _verdict("user_explicit_verified")
    return _verdict("tool_verified")


def evaluate(candidate: Candidate, *, active: ActiveClaimFacts | None) -> Verdict:
    """Judge one candidate. `active` is the active claim on the same identity, if any."""
    verdict = _content_rules(candidate)
    if verdict is not None:
        return verdict
    trust = _trust_rules(candidate)
    if active is None:
        return trust
    if candidate.value == active.value:
        return _identity_rules(candidate, active)
    if trust.decision == GateDecision.NEEDS_REVIEW and candidate.supersedes is None:
        # A weak candidate contradicting an established fact should not knock
        # that fact out of recall; it waits in the conflicts queue beside it.
        return Verdict(
            decision=GateDecision.CONFLICT,
            reasons=("contradicts_active", *trust.reasons),
            status=ClaimStatus.CONFLICTED,
            conflict_with=(active.id,),
        )
    return _identity_rules(candidate, active)
