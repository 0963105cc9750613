"""How the review console shows deletions that need a person: list rows and the report."""

from __future__ import annotations

from typing import Any

from accounts.selectors import audit_trail
from memory.privacy.models.lifecycle import DeletionRequest
from memory.privacy.plain import artifact_lines, deletion_reason_words, probe_rows
from reviews.models import ReviewItem


def _what(deletion: DeletionRequest) -> str:
    if deletion.scope == "records":
        return "records"
    return "one memory" if deletion.claim_id else "everything"


class DeletionPresenter:
    """Deletions that failed or left something behind: the report with its probes."""

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        if not items:
            return {}
        deletions = DeletionRequest.objects.select_related("subject").filter(
            tenant_id=items[0].tenant_id, pk__in=[i.target_id for i in items]
        )
        by_id = {str(d.pk): d for d in deletions}
        return {
            item.pk: {
                "title": f"Deletion of {_what(d)} about {d.subject.key}",
                "status": d.status,
                "reasons": [deletion_reason_words(code) for code in item.reason_codes],
            }
            for item in items
            if (d := by_id.get(item.target_id)) is not None
        }

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        deletion = (
            DeletionRequest.objects.select_related("subject")
            .filter(tenant_id=item.tenant_id, pk=item.target_id)
            .first()
        )
        report = deletion.report if deletion else {}
        return "memory/review/deletion.html", {
            "deletion": deletion,
            "decide_fields": "memory/review/deletion_fields.html",
            "probes": report.get("probes", []),
            "artifacts": report.get("artifacts", {}),
            "places": probe_rows(report.get("probes", [])),
            "touched": artifact_lines(report.get("artifacts", {})),
            "horizon": report.get("horizon", {}),
            "engineer": True,
            "plain_actors": False,
            "finished": True,
            "audit": list(
                audit_trail(tenant=item.tenant, target_type="deletion", target_id=item.target_id)
            ),
        }
