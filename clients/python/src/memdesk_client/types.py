"""The shapes memdesk answers with (API contract v1).

JSON objects are `TypedDict`s, so they stay plain dicts at run time and keep
any field a newer memdesk adds. Recall and hot memory, which agents read field
by field, are dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Checkpoint",
    "Claim",
    "ClaimDetail",
    "Event",
    "HotMemory",
    "Page",
    "RecallItem",
    "RecallResult",
    "Receipt",
    "ReceiptDetail",
    "ReceiptState",
    "Recovery",
    "ResolvedSkill",
    "ReviewRef",
    "Skill",
    "Source",
    "Verdict",
    "Why",
]

ReceiptState = Literal[
    "planned",
    "awaiting_approval",
    "submitted",
    "succeeded",
    "rejected",
    "outcome_unknown",
    "reconciling",
    "safe_to_retry",
    "manual_review",
]
Decision = Literal[
    "accepted",
    "merged",
    "needs_review",
    "conflict",
    "superseded_previous",
    "quarantined",
    "rejected",
]
RecoveryDecision = Literal[
    "in_progress", "wait", "fresh", "resume", "verify_only", "no_op", "escalate", "compensate"
]


class Source(TypedDict, total=False):
    event: str | None
    uri: str
    observed_at: str | None
    digest: str
    added_at: str


class Event(TypedDict):
    id: str
    subject: str
    kind: str
    digest: str
    recorded_at: str
    observed_at: str
    redacted: bool
    run_id: NotRequired[str]
    agent: NotRequired[str]
    text: NotRequired[str]
    body: NotRequired[Any]
    source_uri: NotRequired[str]
    sensitivity: NotRequired[str]
    echo_of: NotRequired[list[str]]
    # A step of a run (docs/protocol.md): empty, null or [] on an ordinary event.
    stage: NotRequired[str]
    input_fingerprint: NotRequired[str]
    policy_version: NotRequired[str]
    idempotency_key: NotRequired[str]
    effect: NotRequired[dict[str, str] | None]
    evidence: NotRequired[list[dict[str, Any]]]


class ReviewRef(TypedDict):
    id: int
    queue: str


class Verdict(TypedDict):
    """The write gate's answer to a proposed claim."""

    id: str | None
    status: str
    decision: Decision
    reasons: list[str]
    revision: int | None
    merged_into: str | None
    conflict_with: list[str]
    review_item: ReviewRef | None


class Claim(TypedDict):
    id: str
    subject: str
    kind: str
    predicate: str
    authority: str
    basis: str
    status: str
    recorded_at: str
    available_at: str
    sources: list[Source]
    gate: dict[str, Any]
    scope: NotRequired[dict[str, Any]]
    value: NotRequired[Any]
    text: NotRequired[str]
    valid_from: NotRequired[str | None]
    valid_to: NotRequired[str | None]
    refresh_after: NotRequired[str | None]
    expires_at: NotRequired[str | None]
    revision: NotRequired[int]
    supersedes: NotRequired[str | None]
    conflicts_with: NotRequired[list[str]]
    agent: NotRequired[str]
    last_used_at: NotRequired[str | None]
    use_count: NotRequired[int]


class ClaimDetail(Claim):
    history: list[dict[str, Any]]
    derived_from: list[dict[str, Any]]
    derivatives: list[dict[str, Any]]
    superseded_by: str | None


class Receipt(TypedDict):
    id: str
    operation: str
    target: str
    intent: Any
    intent_fingerprint: str
    idempotency_key: str
    state: ReceiptState
    created_at: str
    updated_at: str
    external_id: NotRequired[str]
    error_code: NotRequired[str]
    reconciler: NotRequired[Any]
    run_id: NotRequired[str]
    run: NotRequired[str | None]
    policy_version: NotRequired[str]
    kind: NotRequired[Literal["effect", "compensation"]]
    compensates: NotRequired[str | None]
    agent: NotRequired[str]
    submitted_at: NotRequired[str | None]
    submit_lease_expires_at: NotRequired[str | None]
    reconcile_attempts: NotRequired[int]
    next_reconcile_at: NotRequired[str | None]


class ReceiptDetail(Receipt):
    transitions: list[dict[str, Any]]
    reads: list[dict[str, Any]]
    compensations: NotRequired[list[str]]


class Checkpoint(TypedDict):
    task_key: str
    input_fingerprint: str
    stage: str
    created_at: str
    updated_at: str
    run_id: NotRequired[str]
    run: NotRequired[str | None]
    stage_complete: NotRequired[bool]
    retry_count: NotRequired[int]
    max_retries: NotRequired[int]
    allowed_next_stages: NotRequired[list[str]]
    effects: NotRequired[list[str]]
    expires_at: NotRequired[str | None]


class Recovery(TypedDict):
    decision: RecoveryDecision
    reason: str
    checkpoint: Checkpoint | None
    effects: list[Receipt]
    # This answer in memdesk's log, for `judge_recovery`.
    answer_id: int
    compensations: NotRequired[list[Receipt]]


class Skill(TypedDict):
    slug: str
    name: str
    created_at: str
    created_by: dict[str, Any] | None
    production: dict[str, Any] | None
    latest_version: int | None
    in_review: int | None


class ResolvedSkill(TypedDict):
    skill: str
    number: int
    content_hash: str
    status: str
    label: str | None
    manifest: dict[str, Any]
    body: str
    files: list[dict[str, Any]]
    deprecation: dict[str, Any] | None


class Page(TypedDict):
    """One page of a cursor list; `next` is the URL of the following page, or None."""

    results: list[Any]
    next: str | None


@dataclass(frozen=True)
class Why:
    """Why recall returned an item: its rank and each ranking signal."""

    rank: float
    matched: list[str] = field(default_factory=list)
    scope_match: str | None = None
    signals: dict[str, Any] = field(default_factory=dict)
    semantic: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Why:
        return cls(
            rank=float(data.get("rank") or 0.0),
            matched=list(data.get("matched") or []),
            scope_match=data.get("scope_match"),
            signals=dict(data.get("signals") or {}),
            semantic=data.get("semantic"),
        )


@dataclass(frozen=True)
class RecallItem:
    """A claim the agent may use, with the reason it was chosen."""

    id: str
    kind: str
    predicate: str
    value: Any
    text: str
    scope: dict[str, Any]
    authority: str
    valid_from: str | None
    valid_to: str | None
    available_at: str | None
    stale: bool
    sources: list[Source]
    why: Why
    conflict: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecallItem:
        return cls(
            id=data["id"],
            kind=data["kind"],
            predicate=data["predicate"],
            value=data.get("value"),
            text=data.get("text") or "",
            scope=dict(data.get("scope") or {}),
            authority=data.get("authority") or "",
            valid_from=data.get("valid_from"),
            valid_to=data.get("valid_to"),
            available_at=data.get("available_at"),
            stale=bool(data.get("stale")),
            sources=list(data.get("sources") or []),
            why=Why.from_json(data.get("why") or {}),
            conflict=data.get("conflict"),
        )


@dataclass(frozen=True)
class RecallResult:
    items: list[RecallItem]
    excluded: dict[str, int]
    trace_id: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecallResult:
        return cls(
            items=[RecallItem.from_json(item) for item in data.get("items") or []],
            excluded=dict(data.get("excluded") or {}),
            trace_id=str(data.get("trace_id") or ""),
        )


@dataclass(frozen=True)
class HotMemory:
    """A subject's budgeted hot-memory block. `not_modified` is True when memdesk
    answered 304 to the ETag the client sent, and the block is the one it kept."""

    subject: str
    text: str
    budget_chars: int
    chars: int
    claims: list[str]
    etag: str | None
    not_modified: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any], *, etag: str | None) -> HotMemory:
        return cls(
            subject=data["subject"],
            text=data.get("text") or "",
            budget_chars=int(data.get("budget_chars") or 0),
            chars=int(data.get("chars") or 0),
            claims=list(data.get("claims") or []),
            etag=etag,
        )
