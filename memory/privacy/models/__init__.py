"""The privacy domain's models: deletion requests, tombstones, consolidation runs,
exports, consent and retention. Their app label is `memory`
(docs/architecture.md, "One label, one migration history")."""

from memory.privacy.models.consent import CONSENT_CHOICES, Consent, RetainedRecord, RetentionPolicy
from memory.privacy.models.exports import (
    EXPORT_MACHINE,
    EXPORT_TRANSITIONS,
    DataExport,
    ExportStatus,
)
from memory.privacy.models.lifecycle import (
    DELETION_MACHINE,
    DELETION_TRANSITIONS,
    ConsolidationRun,
    ConsolidationTrigger,
    DeletionCause,
    DeletionRequest,
    DeletionScope,
    DeletionStatus,
    Tombstone,
    TombstoneAction,
    TombstoneTarget,
)

__all__ = [
    "CONSENT_CHOICES",
    "DELETION_MACHINE",
    "DELETION_TRANSITIONS",
    "EXPORT_MACHINE",
    "EXPORT_TRANSITIONS",
    "Consent",
    "ConsolidationRun",
    "ConsolidationTrigger",
    "DataExport",
    "DeletionCause",
    "DeletionRequest",
    "DeletionScope",
    "DeletionStatus",
    "ExportStatus",
    "RetainedRecord",
    "RetentionPolicy",
    "Tombstone",
    "TombstoneAction",
    "TombstoneTarget",
]
