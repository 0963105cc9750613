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
from memory.models.ledger import Event, Sensitivity, Subject
from memory.models.receipts import Checkpoint, Receipt, ReceiptState, ReceiptTransition

__all__ = [
    "AUTHORITY_RANK",
    "AUTHORITY_RANK_SQL",
    "Authority",
    "Basis",
    "Checkpoint",
    "Claim",
    "ClaimKind",
    "ClaimSource",
    "ClaimStatus",
    "Event",
    "GateDecision",
    "RecallTrace",
    "Receipt",
    "ReceiptState",
    "ReceiptTransition",
    "Sensitivity",
    "Subject",
]
