"""The claims domain's models: subjects and ledger events, claims and their sources,
recall traces, embeddings, the screen's examples. Their app label is `memory`
(docs/architecture.md, "One label, one migration history")."""

from memory.claims.models.claims import (
    AUTHORITY_RANK,
    AUTHORITY_RANK_SQL,
    CLAIM_MACHINE,
    CLAIM_TRANSITIONS,
    Authority,
    Basis,
    Claim,
    ClaimKind,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    GateDecision,
    RecallTrace,
    RecallUse,
    TraceKind,
    allowed_claim_targets,
    claim_sources_for,
)
from memory.claims.models.embeddings import ClaimEmbedding, EventEmbedding
from memory.claims.models.ledger import PROTOCOL_KINDS, Event, Sensitivity, Subject
from memory.claims.models.outbox import PendingTrace
from memory.claims.models.screening import ExampleLabel, ScreenCalibration, ScreenExample

__all__ = [
    "AUTHORITY_RANK",
    "AUTHORITY_RANK_SQL",
    "CLAIM_MACHINE",
    "CLAIM_TRANSITIONS",
    "PROTOCOL_KINDS",
    "Authority",
    "Basis",
    "Claim",
    "ClaimEmbedding",
    "ClaimKind",
    "ClaimRole",
    "ClaimSource",
    "ClaimStatus",
    "Event",
    "EventEmbedding",
    "ExampleLabel",
    "GateDecision",
    "PendingTrace",
    "RecallTrace",
    "RecallUse",
    "ScreenCalibration",
    "ScreenExample",
    "Sensitivity",
    "Subject",
    "TraceKind",
    "allowed_claim_targets",
    "claim_sources_for",
]
