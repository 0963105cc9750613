from memory.models.claims import (
    AUTHORITY_RANK,
    AUTHORITY_RANK_SQL,
    Authority,
    Basis,
    Claim,
    ClaimKind,
    ClaimSource,
    ClaimStatus,
    GateDecision,
    RecallTrace,
)
from memory.models.embeddings import ClaimEmbedding
from memory.models.ledger import Event, Sensitivity, Subject
from memory.models.lifecycle import (
    DELETION_TRANSITIONS,
    ConsolidationRun,
    ConsolidationTrigger,
    DeletionRequest,
    DeletionScope,
    DeletionStatus,
    Tombstone,
    TombstoneAction,
    TombstoneTarget,
)
from memory.models.platforms import Platform
from memory.models.receipts import Checkpoint, Receipt, ReceiptState, ReceiptTransition

__all__ = [
    "AUTHORITY_RANK",
    "AUTHORITY_RANK_SQL",
    "DELETION_TRANSITIONS",
    "Authority",
    "Basis",
    "Checkpoint",
    "Claim",
    "ClaimEmbedding",
    "ClaimKind",
    "ClaimSource",
    "ClaimStatus",
    "ConsolidationRun",
    "ConsolidationTrigger",
    "DeletionRequest",
    "DeletionScope",
    "DeletionStatus",
    "Event",
    "GateDecision",
    "Platform",
    "RecallTrace",
    "Receipt",
    "ReceiptState",
    "ReceiptTransition",
    "Sensitivity",
    "Subject",
    "Tombstone",
    "TombstoneAction",
    "TombstoneTarget",
]
