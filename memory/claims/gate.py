"""The write gate: pure functions from a candidate claim to a verdict.

Nothing here touches the database. The service gathers the facts the gate
needs (the active claim on the same identity, whether every source echoes
injected memory) and stores whatever the gate decides, with its reasons.
The rules are data (`GATE_RULES`) so an admin can read what each reason means.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from common.screen import (
    SecretFinding,
    find_secrets_in_text,
    find_secrets_in_value,
    judge_injection,
    strings_in,
)
from common.screen.injection import InjectionResult
from common.screen.injection_signals import SIGNALS, THRESHOLD, InjectionSignal
from common.screen.learned import REVIEW, Bands
from memory.claims.models.claims import (
    AUTHORITY_RANK,
    Authority,
    Basis,
    ClaimKind,
    ClaimStatus,
    GateDecision,
)
from memory.claims.models.ledger import Sensitivity
from memory.claims.sensitivity import EPHEMERAL_RULES, SENSITIVITY_RULES

# Where evidence comes from (docs/trust.md). An agent chooses an
# event's `kind` freely, so a kind counts only together with who recorded the
# event: a person in the console, or a token whose ceiling reaches that far.
# `user_correction` is what the console writes when an end user corrects a memory.
USER_CHANNEL_KINDS: frozenset[str] = frozenset(
    {"user_statement", "user_message", "user_correction"}
)
TOOL_RESULT_KINDS: frozenset[str] = frozenset({"tool_result"})

# An experience may shape future work only once its result was
# observed, so its outcome is one of a fixed vocabulary, and it carries evidence
# of that outcome: a tool result in its sources, or a receipt (`value.receipt`)
# whose settled state shows it, settled by someone other than the agent itself.
EXPERIENCE_OUTCOMES: frozenset[str] = frozenset({"success", "failure", "partial"})
OUTCOME_RECEIPT_STATES: dict[str, frozenset[str]] = {
    "success": frozenset({"succeeded"}),
    "partial": frozenset({"succeeded"}),
    "failure": frozenset({"rejected"}),
}


def _kinds(kinds: frozenset[str]) -> str:
    return ", ".join(f"`{kind}`" for kind in sorted(kinds))


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
        "ephemeral_value",
        GateDecision.REJECTED,
        "The content holds a value that is only good for a moment: "
        + ", ".join(f"{rule.kind} ({rule.description})" for rule in EPHEMERAL_RULES)
        + " Only its digest is kept.",
    ),
    GateRule(
        "consent_required",
        GateDecision.REJECTED,
        "The content is of a sensitive class ("
        + ", ".join(
            f"`{rule.sensitivity}`"
            for rule in SENSITIVITY_RULES
            if rule.sensitivity != Sensitivity.PERSONAL
        )
        + ", or `sensitive` named by the agent) the subject has not consented to; "
        "`consent_required` in the answer names the class. Only its digest is kept. The "
        "agent's `sensitivity` hint can raise the class the rules found, never lower it.",
    ),
    GateRule(
        "instruction_injection",
        GateDecision.QUARANTINED,
        "The content reads like an instruction to the agent, not a fact about the subject: "
        f"its injection signals weigh {THRESHOLD} or more (see `injection_signals`), or the "
        "learned injection head scores one of its readings in the quarantine band.",
    ),
    GateRule(
        "injection_suspected",
        GateDecision.NEEDS_REVIEW,
        "The learned injection head scores a reading of the content in the review band: it "
        "may be an instruction to the agent. It waits for an editor, score and reading shown.",
    ),
    GateRule(
        "injection_in_context",
        GateDecision.NEEDS_REVIEW,
        "Read together with the subject's recent claims, the content completes an instruction "
        "to the agent that neither part is alone (an order split across claims).",
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
        "An experience needs an observed outcome: `value.outcome` is one of "
        f"{_kinds(EXPERIENCE_OUTCOMES)}.",
    ),
    GateRule(
        "experience_without_evidence",
        GateDecision.NEEDS_REVIEW,
        "An experience's outcome needs evidence: a tool result among its sources, or "
        "`value.receipt` naming a receipt the token may see that settled that way "
        "(`succeeded` for success or partial, `rejected` for failure).",
    ),
    GateRule(
        "self_reported_outcome",
        GateDecision.NEEDS_REVIEW,
        "The receipt the experience cites shows its outcome only on the word of whoever "
        "cites it: the same person (this token, another token of its owner, or the owner "
        "signed in) reported that the effect succeeded (or was rejected). An editor decides; "
        "a reconciler's read, a platform or another person settling the receipt is "
        "independent evidence.",
    ),
    GateRule(
        "supersedes_stronger",
        GateDecision.CONFLICT,
        "The candidate names an active claim of higher authority as the one it corrects: "
        "a weaker claim never replaces a stronger one without a person.",
    ),
    GateRule(
        "authority_capped",
        GateDecision.NEEDS_REVIEW,
        "The candidate asked for more authority than its token's ceiling; it is judged and "
        "stored at the ceiling, so inferred facts wait for an editor.",
    ),
    GateRule(
        "user_channel_required",
        GateDecision.NEEDS_REVIEW,
        "`user_explicit` needs a source event from the user channel (kind "
        f"{_kinds(USER_CHANNEL_KINDS)}, about the claim's own subject, recorded by a person "
        "or a token whose ceiling is `user_explicit`); without one the claim keeps only what "
        "its other evidence supports. An event about another subject stays a source but "
        "proves nothing here.",
    ),
    GateRule(
        "tool_source_required",
        GateDecision.NEEDS_REVIEW,
        "`tool_verified` needs a tool result among the sources (kind "
        f"{_kinds(TOOL_RESULT_KINDS)}, about the claim's own subject, recorded by a token "
        "whose ceiling is at least `tool_verified`); without one the claim is stored as "
        "`agent_inferred`.",
    ),
    GateRule(
        "basis_unverified",
        GateDecision.NEEDS_REVIEW,
        "`basis: verified` needs a tool result among the sources; without one the basis is "
        "stored as `reported`. The decision follows the claim's other rules.",
    ),
    GateRule("user_explicit_verified", GateDecision.ACCEPTED, "Stated by the user."),
    GateRule("tool_verified", GateDecision.ACCEPTED, "Verified by a tool against its source."),
    GateRule(
        "experience_with_outcome",
        GateDecision.ACCEPTED,
        "An experience with an observed outcome and evidence of it.",
    ),
)
RULES_BY_CODE = {rule.code: rule for rule in GATE_RULES}
# Reasons whose claim is stored without its text, value, sources or indexes.
WITHHOLDS_CONTENT: frozenset[str] = frozenset(
    {"secret_detected", "ephemeral_value", "consent_required"}
)


def withholds_content(reasons: tuple[str, ...] | list[str]) -> bool:
    return not WITHHOLDS_CONTENT.isdisjoint(reasons)


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
    # Who speaks and with what evidence. The defaults trust nothing: a caller
    # that forgets to say gets the weakest reading, never the strongest.
    ceiling: str = Authority.AGENT_INFERRED
    user_channel_source: bool = False
    tool_source: bool = False
    # The state of the receipt named in an experience's `value.receipt`, if any, and
    # whether someone other than the candidate's author settled it there.
    outcome_receipt_state: str | None = None
    outcome_independent: bool = False
    # Identity fields, judged for injection with the content.
    subject: str = ""
    scope: dict[str, str] = field(default_factory=dict)
    # What the sensitivity rules found (memory/claims/sensitivity.py), and the
    # classes the subject consented to.
    sensitivity: str = Sensitivity.NORMAL
    consent_classes: tuple[str, ...] = ()
    consented: frozenset[str] = frozenset()
    ephemeral: tuple[str, ...] = ()
    # The credentials in the text and the value, when the caller's screen found them
    # already (see `find_secrets`); None: the gate looks itself.
    secrets: tuple[SecretFinding, ...] | None = None
    # The injection judgement of `content_strings`, when the caller's screen made it
    # already (a batch scores all its candidates at once); None: the gate judges itself.
    injection: InjectionResult | None = None
    # The tenant's calibrated bands for the learned head; None: the head's own.
    injection_bands: Bands | None = None
    # Whether the content, joined with the subject's recent claims, reads as an order
    # that neither does alone (the service judges the context; see `claim_submit`).
    injection_in_context: bool = False


@dataclass(frozen=True)
class Verdict:
    decision: str
    reasons: tuple[str, ...]
    status: str
    conflict_with: tuple[Any, ...] = ()
    supersede: Any = None
    merge_into: Any = None
    secrets: tuple[SecretFinding, ...] = field(default=())
    # The authority and basis the claim is stored with, after the trust model.
    authority: str = ""
    basis: str = ""
    # The injection signals that fired, when the reason is instruction_injection.
    signals: tuple[str, ...] = field(default=())
    sensitivity: str = Sensitivity.NORMAL
    consent_classes: tuple[str, ...] = ()
    # The classes without consent, when the reason is consent_required.
    consent_missing: tuple[str, ...] = ()
    # The kinds of ephemeral value, when the reason is ephemeral_value.
    ephemeral: tuple[str, ...] = ()
    # How the injection screen judged the content (rules, learned score, band, readings).
    injection: InjectionResult | None = None


_STATUS_FOR: dict[str, ClaimStatus] = {
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
    if candidate.secrets is not None:
        return list(candidate.secrets)
    return find_secrets_in_text(candidate.text) + find_secrets_in_value(candidate.value)


def content_strings(candidate: Candidate) -> list[str]:
    """Every string of the candidate, in reading order: text, value, then identity."""
    return strings_of_content(
        text=candidate.text,
        value=candidate.value,
        predicate=candidate.predicate,
        subject=candidate.subject,
        scope=candidate.scope,
    )


def strings_of_content(
    *, text: str, value: Any, predicate: str, subject: str, scope: dict[str, str]
) -> list[str]:
    return [text, *strings_in(value), predicate, subject, *strings_in(scope)]


def injection_of(candidate: Candidate) -> InjectionResult:
    if candidate.injection is not None:
        return candidate.injection
    return judge_injection(content_strings(candidate), bands=candidate.injection_bands)


def _suspicion(candidate: Candidate, verdict: Verdict) -> Verdict:
    """A verdict that would let a suspected instruction in unseen waits for an editor instead."""
    injection = injection_of(candidate)
    suspected = [
        code
        for code, holds in (
            ("injection_suspected", injection.band == REVIEW),
            ("injection_in_context", candidate.injection_in_context),
        )
        if holds
    ]
    if not suspected:
        return replace(verdict, injection=injection)
    if verdict.decision in (GateDecision.ACCEPTED, GateDecision.SUPERSEDED_PREVIOUS):
        return Verdict(
            decision=GateDecision.NEEDS_REVIEW,
            reasons=(*suspected, *verdict.reasons),
            status=ClaimStatus.CANDIDATE,
            injection=injection,
        )
    return replace(verdict, reasons=(*verdict.reasons, *suspected), injection=injection)


def _content_rules(candidate: Candidate) -> Verdict | None:
    """Rules that hold whatever else memdesk knows: secrets, injection, self-echo."""
    secrets = find_secrets(candidate)
    if secrets:
        return _verdict("secret_detected", secrets=tuple(secrets))
    if candidate.ephemeral:
        return _verdict("ephemeral_value", ephemeral=candidate.ephemeral)
    missing = tuple(c for c in candidate.consent_classes if c not in candidate.consented)
    if missing:
        return _verdict("consent_required", consent_missing=missing)
    injection = injection_of(candidate)
    if injection.is_injection:
        return _verdict("instruction_injection", signals=injection.signals, injection=injection)
    if candidate.source_count and candidate.sources_all_echo:
        return _verdict("self_reinforcement")
    return None


def _identity_rules(candidate: Candidate, active: ActiveClaimFacts) -> Verdict:
    """Same identity as an active claim: merge, supersede, or leave it to an editor."""
    if candidate.value == active.value:
        return _verdict("duplicate", merge_into=active.id)
    new_rank = AUTHORITY_RANK[Authority(candidate.authority)]
    old_rank = AUTHORITY_RANK[Authority(active.authority)]
    if candidate.supersedes is not None and str(candidate.supersedes) == str(active.id):
        if new_rank < old_rank:
            return _verdict("supersedes_stronger", conflict_with=(active.id,))
        return _verdict("explicit_supersedes", supersede=active.id)
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
        return _experience_rules(candidate)
    if candidate.authority in (Authority.AGENT_INFERRED, Authority.REPORTED):
        return _verdict("unverified_authority")
    if candidate.authority == Authority.USER_EXPLICIT:
        return _verdict("user_explicit_verified")
    return _verdict("tool_verified")


def experience_outcome(value: Any) -> str | None:
    """The outcome an experience claims, if it is one of the fixed vocabulary."""
    outcome = value.get("outcome") if isinstance(value, dict) else None
    return outcome if isinstance(outcome, str) and outcome in EXPERIENCE_OUTCOMES else None


def _experience_rules(candidate: Candidate) -> Verdict:
    outcome = experience_outcome(candidate.value)
    if outcome is None:
        return _verdict("experience_without_outcome")
    receipt_shows_it = candidate.outcome_receipt_state in OUTCOME_RECEIPT_STATES[outcome]
    if candidate.tool_source or (receipt_shows_it and candidate.outcome_independent):
        return _verdict("experience_with_outcome")
    if receipt_shows_it:
        return _verdict("self_reported_outcome")
    return _verdict("experience_without_evidence")


def effective_authority(candidate: Candidate) -> tuple[str, str, tuple[str, ...]]:
    """The authority and basis the evidence supports, and the reasons for any lowering.

    What the candidate says about itself is an upper bound, never a grant: the
    token's ceiling bounds it, `user_explicit` needs the user channel, and both
    `tool_verified` and `basis: verified` need a tool result.
    """
    reasons: list[str] = []
    authority = Authority(candidate.authority)
    ceiling = Authority(candidate.ceiling)
    if AUTHORITY_RANK[authority] > AUTHORITY_RANK[ceiling]:
        authority = ceiling
        reasons.append("authority_capped")
    if authority == Authority.USER_EXPLICIT and not candidate.user_channel_source:
        authority = Authority.TOOL_VERIFIED if candidate.tool_source else Authority.AGENT_INFERRED
        reasons.append("user_channel_required")
    if authority == Authority.TOOL_VERIFIED and not candidate.tool_source:
        authority = Authority.AGENT_INFERRED
        reasons.append("tool_source_required")
    basis = Basis(candidate.basis)
    if basis == Basis.VERIFIED and not candidate.tool_source:
        basis = Basis.REPORTED
        reasons.append("basis_unverified")
    return authority.value, basis.value, tuple(reasons)


def evaluate(candidate: Candidate, *, active: ActiveClaimFacts | None) -> Verdict:
    """Judge one candidate. `active` is the active claim on the same identity, if any.

    The rules see the candidate at the authority and basis its evidence
    supports; the verdict carries them, and why they were lowered, after the
    reasons for the decision itself.
    """
    authority, basis, lowered = effective_authority(candidate)
    # Judged once: the content rules and the suspicion after the trust rules both read it.
    judged = replace(candidate, authority=authority, basis=basis, injection=injection_of(candidate))
    sensitivity: dict[str, Any] = {
        "sensitivity": candidate.sensitivity,
        "consent_classes": candidate.consent_classes,
    }
    verdict = _content_rules(judged)
    if verdict is not None:
        # Rejected or quarantined for what it says: who said it changes nothing.
        return replace(verdict, authority=authority, basis=basis, **sensitivity)
    verdict = _suspicion(judged, _judge(judged, active=active))
    return replace(
        verdict,
        reasons=(*verdict.reasons, *lowered),
        authority=authority,
        basis=basis,
        **sensitivity,
    )


def _judge(candidate: Candidate, *, active: ActiveClaimFacts | None) -> Verdict:
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
