"""The one interface every reconciler implements: read the outside world, never write it.

A reconciler answers a single question for a receipt whose outcome is
unknown: did the side effect happen? It looks, and reports what it saw as a
`LookupResult`; deciding what that means for the receipt (succeeded, retry
later, ask a person) is the reconciliation service's job, so every adapter
gets the same attempt cap, backoff, fencing and audit trail.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from memory.receipts.models.receipts import ReadOutcome

# Settings every adapter accepts, on top of its own. `key_retention_seconds` is
# kept for older clients and decides nothing: the platform's registration does.
COMMON_FIELDS = frozenset({"adapter", "key_retention_seconds"})


class ReconcilerConfigError(ValueError):
    """A receipt's `reconciler` block cannot work; `errors` maps field → messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class PlatformAccess:
    """The registered platform a lookup reads from, as the reconciler needs it."""

    name: str
    base_url: str
    allow_private: bool
    # How the platform proves absence, and the lookup by key that proves it
    # (path and query under `base_url`), as its admin registered them.
    absence_proof: str = "none"
    lookup_template: str = ""


@dataclass(frozen=True)
class LookupTarget:
    """What a reconciler may know about the receipt it settles (a snapshot, not a row)."""

    receipt_id: UUID
    operation: str
    target: str
    idempotency_key: str
    external_id: str
    config: dict[str, Any]
    attempt: int
    platform: PlatformAccess | None = None
    # What the agent said it would do, so a record found by a search can be
    # told apart from another effect filed under the same key.
    intent: Any = None
    intent_fingerprint: str = ""


@dataclass(frozen=True)
class LookupResult:
    outcome: ReadOutcome
    external_id: str = ""
    # Why the read was not conclusive, or why a person must decide.
    error_code: str = ""
    # What was observed: status codes, digests, urls. Never response bodies,
    # which may hold personal data or credentials of the outside system.
    evidence: dict[str, Any] = field(default_factory=dict)


class Reconciler(ABC):
    name: ClassVar[str]
    # The adapter's own configuration keys; anything else is refused so a typo
    # (`absence_prof`) cannot silently weaken what counts as proof.
    fields: ClassVar[frozenset[str]] = frozenset()

    def validate(self, config: dict[str, Any]) -> dict[str, Any]:
        """Return the normalised configuration, or raise `ReconcilerConfigError`."""
        errors: dict[str, list[str]] = {}
        unknown = sorted(set(config) - COMMON_FIELDS - self.fields)
        for key in unknown:
            errors[key] = [f"Unknown setting for the {self.name} reconciler."]
        normalised: dict[str, Any] = {"adapter": self.name}
        retention = config.get("key_retention_seconds")
        if retention is not None:
            if isinstance(retention, bool) or not isinstance(retention, int) or retention <= 0:
                errors["key_retention_seconds"] = ["Give a positive number of seconds."]
            else:
                normalised["key_retention_seconds"] = retention
        normalised.update(self.validate_adapter(config, errors))
        if errors:
            raise ReconcilerConfigError(errors)
        return normalised

    def validate_adapter(self, config: dict[str, Any], errors: dict[str, list[str]]) -> dict:
        """Check the adapter's own keys, adding to `errors`; return their normalised values."""
        return {}

    @abstractmethod
    def lookup(self, target: LookupTarget) -> LookupResult:
        """Read the outside system once. Must not write to it, must not raise for its errors."""
