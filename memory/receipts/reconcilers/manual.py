"""For systems that cannot be asked: every unknown outcome goes to a person."""

from __future__ import annotations

from memory.receipts.models.receipts import ReadOutcome
from memory.receipts.reconcilers.base import LookupResult, LookupTarget, Reconciler


class ManualReconciler(Reconciler):
    name = "manual"

    def lookup(self, target: LookupTarget) -> LookupResult:
        return LookupResult(
            outcome=ReadOutcome.NEEDS_PERSON,
            error_code="manual_reconciler",
            evidence={"adapter": self.name, "attempt": target.attempt},
        )
