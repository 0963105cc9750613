"""How the review console shows receipts in manual review: list rows and evidence panes."""

from __future__ import annotations

from typing import Any

from accounts.selectors import audit_trail
from memory.receipts.models.receipts import Receipt
from memory.receipts.selectors.receipts import receipt_compensations, receipt_for_console
from reviews.models import Decision, ReviewItem


class ReceiptPresenter:
    """Receipts in manual_review: the whole timeline and every reconciliation read."""

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        if not items:
            return {}
        receipts = Receipt.objects.filter(
            tenant_id=items[0].tenant_id, pk__in=[i.target_id for i in items]
        )
        by_id = {str(r.pk): r for r in receipts}
        return {
            item.pk: {"title": f"{r.operation} → {r.target}", "status": r.state}
            for item in items
            if (r := by_id.get(item.target_id)) is not None
        }

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        receipt = receipt_for_console(tenant=item.tenant, receipt_id=item.target_id)
        return "memory/review/receipt.html", {
            "receipt": receipt,
            "compensations": list(receipt_compensations(receipt)) if receipt else [],
            "decide_fields": "memory/review/receipt_fields.html",
            "audit": list(
                audit_trail(tenant=item.tenant, target_type="receipt", target_id=item.target_id)
            ),
        }

    def outcome(self, *, item: ReviewItem, decision: Decision) -> str:
        receipt = Receipt.objects.filter(tenant_id=item.tenant_id, pk=item.target_id).first()
        what = f"{receipt.operation} → {receipt.target}" if receipt else "The receipt"
        settled = {
            "succeeded": "settled as succeeded",
            "safe_to_retry": "settled as safe to retry",
            "rejected": "settled as rejected",
        }.get(decision.verdict, decision.verdict)
        external = (decision.payload or {}).get("external_id")
        return f"{what}: {settled}" + (f" (external id {external})." if external else ".")


class ApprovalPresenter(ReceiptPresenter):
    """Receipts awaiting approval: the intent open, nothing to fill in but the verdict."""

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        template, context = super().detail(item=item)
        return template, context | {"decide_fields": None, "intent_open": True}

    def outcome(self, *, item: ReviewItem, decision: Decision) -> str:
        receipt = Receipt.objects.filter(tenant_id=item.tenant_id, pk=item.target_id).first()
        what = f"{receipt.operation} → {receipt.target}" if receipt else "The receipt"
        if decision.verdict == "approve":
            return f"{what}: approved; the agent may submit it."
        return f"{what}: rejected."
