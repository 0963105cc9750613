"""The receipts domain's models: receipts, their transitions and reads, checkpoints,
recovery leases and the log of recovery's answers, platforms and operation policies.
Their app label is `memory` (docs/architecture.md, "One label, one migration history")."""

from memory.receipts.models.checkpoint_defaults import CheckpointDefaults
from memory.receipts.models.leases import RecoveryLease
from memory.receipts.models.platforms import AbsenceProof, OperationPolicy, Platform
from memory.receipts.models.receipts import (
    Checkpoint,
    Receipt,
    ReceiptKind,
    ReceiptState,
    ReceiptTransition,
)
from memory.receipts.models.recovery_log import RecoveryAnswerRecord, RecoveryVerdict, VerdictSource
from memory.receipts.models.runs import Run

__all__ = [
    "AbsenceProof",
    "Checkpoint",
    "CheckpointDefaults",
    "OperationPolicy",
    "Platform",
    "Receipt",
    "ReceiptKind",
    "ReceiptState",
    "ReceiptTransition",
    "RecoveryAnswerRecord",
    "RecoveryLease",
    "RecoveryVerdict",
    "Run",
    "VerdictSource",
]
