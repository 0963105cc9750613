"""How the review console shows a skill version waiting for approval."""

from __future__ import annotations

from typing import Any

from accounts.selectors import audit_trail
from reviews.models import ReviewItem
from skills import selectors
from skills.charts import matrix_rows
from skills.models import SkillVersion
from skills.services import REVIEW_TARGET
from skills.sidebyside import side_by_side


class SkillPublicationPresenter:
    # The version diff and matrix are styled by the skills stylesheet, in the queue page too.
    stylesheets = ("skills/skills.css",)

    def rows(self, *, items: list[ReviewItem]) -> dict[int, dict[str, Any]]:
        if not items:
            return {}
        versions = SkillVersion.objects.select_related("skill").filter(
            skill__tenant_id=items[0].tenant_id, pk__in=[int(i.target_id) for i in items]
        )
        by_id = {str(v.pk): v for v in versions}
        return {
            item.pk: {"title": f"{v.skill.slug} v{v.number}", "status": v.status}
            for item in items
            if (v := by_id.get(item.target_id)) is not None
        }

    def detail(self, *, item: ReviewItem) -> tuple[str, dict[str, Any]]:
        version = selectors.skill_version_by_id(tenant=item.tenant, version_id=int(item.target_id))
        if version is None:
            return "skills/review_version.html", {"version": None}
        skill = version.skill
        matrix = selectors.evaluation_matrix(tenant=item.tenant, version=version)
        context: dict[str, Any] = {
            "skill": skill,
            "version": version,
            # The version page's matrix partial reads its rows, not the matrix itself.
            "matrix": matrix,
            "matrix_rows": matrix_rows(matrix),
            "approval": selectors.approval_progress(tenant=item.tenant, version=version),
            "compare_form": None,
            "diff": None,
            "audit": list(
                audit_trail(tenant=item.tenant, target_type=REVIEW_TARGET, target_id=version.pk)
            ),
        }
        production = selectors.production_version(tenant=item.tenant, skill=skill)
        if production is not None and production.pk != version.pk:
            result = selectors.version_diff(tenant=item.tenant, old=production, new=version)
            context["diff"] = result
            context["file_diffs"] = [
                {
                    **change,
                    "rows": side_by_side(
                        result.old_texts.get(change["path"]), result.new_texts.get(change["path"])
                    ),
                }
                for change in result.files
            ]
        return "skills/review_version.html", context
