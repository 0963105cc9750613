"""The write gate: pure functions from a candidate claim to a verdict.

Nothing here touches the database. The service gathers the facts the gate
needs (the active claim on the same identity, whether every source echoes
injected memory) and stores whatever the gate decides, with its reasons.
The rules are data (`GATE_RULES`) so an admin can read what each reason means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.screen import (
    SecretFinding,
    find_secrets_in_text,
    find_secrets_in_value,
    judge_injection,
    strings_in,
)
from common.screen.injection import SIGNALS, THRESHOLD, InjectionSignal
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
        "The content reads like an instruction to the agent, not a fact about the subject: "
        f"its injection signals weigh {THRESHOLD} or more (see `injection_signals`).",
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
# The signals `instruction_injection` adds up, and the score that quarantines.
INJECTION_SIGNALS: tuple[InjectionSignal, ...] = SIGNALS
INJECTION_THRESHOLD = THRESHOLD


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
    # Identity fields, judged for injection with the content.
    subject: str = ""
    scope: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    decision: str
    reasons: tuple[str, ...]
    status: str
    conflict_with: tuple[Any, ...] = ()
    supersede: Any = None
    merge_into: Any = None
    secrets: tuple[SecretFinding, ...] = field(default=())
    # The injection signals that fired, when the reason is instruction_injection.
    signals: tuple[str, ...] = field(default=())


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


def content_strings(candidate: Candidate) -> list[str]:
    """Every string of the candidate, in reading order: text, value, then identity."""
    return [
        candidate.text,
        *strings_in(candidate.value),
        candidate.predicate,
        candidate.subject,
        *strings_in(candidate.scope),
    ]


def _content_rules(candidate: Candidate) -> Verdict | None:
    """Rules that hold whatever else memdesk knows: secrets, injection, self-echo."""
    secrets = find_secrets(candidate)
    if secrets:
        return _verdict("secret_detected", secrets=tuple(secrets))
    injection = judge_injection(content_strings(candidate))
    if injection.is_injection:
        return _verdict("instruction_injection", signals=injection.signals)
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
