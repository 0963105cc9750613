"""The ``skill_publication`` review queue: deciding an item calls the same services as the API.

An item opens when a version is submitted. ``approve`` and ``reject`` run
``skill_version_approve`` / ``skill_version_reject`` inside the decision's
transaction, so four-eyes, admin-only approval of new capabilities and the
audit trail are identical whichever door the admin came through.
"""

from __future__ import annotations

from typing import Any

from accounts.actors import Actor
from common.problems import Problem
from reviews.models import Queue, ReasonCode, ReviewItem
from reviews.registry import QueuePolicy, register_queue
from skills import selectors, services
from skills.models import SkillVersion
from skills.presenters import SkillPublicationPresenter


def _version(item: ReviewItem) -> SkillVersion:
    version = selectors.skill_version_by_id(tenant=item.tenant, version_id=int(item.target_id))
    if version is None:
        raise Problem(
            "target_changed", "The skill version under review no longer exists.", status_code=409
        )
    return version


def _reason(reason_code: str, note: str) -> str:
    label = ReasonCode(reason_code).label if reason_code in ReasonCode.values else reason_code
    return ": ".join(part for part in (label, note.strip()) if part)


class SkillPublicationHandler:
    def current_version(self, *, item: ReviewItem) -> str:
        version = selectors.skill_version_by_id(tenant=item.tenant, version_id=int(item.target_id))
        return version.status if version is not None else ""

    def apply(
        self,
        *,
        item: ReviewItem,
        verdict: str,
        reason_code: str,
        note: str,
        payload: dict[str, Any],
        actor: Actor,
    ) -> None:
        version = _version(item)
        if verdict == "approve":
            services.skill_version_approve(
                tenant=item.tenant,
                version=version,
                actor=actor,
                reason=_reason(reason_code, note),
                review_item_id=item.pk,
            )
        elif verdict == "reject":
            services.skill_version_reject(
                tenant=item.tenant,
                version=version,
                actor=actor,
                reason=_reason(reason_code, note),
                review_item_id=item.pk,
            )
        else:  # pragma: no cover - review_decide checks verdicts against the policy
            raise Problem("invalid_verdict", f"`{verdict}` is not a skill_publication verdict.")


def register() -> None:
    register_queue(
        Queue.SKILL_PUBLICATION,
        QueuePolicy(
            handler=SkillPublicationHandler(),
            verdicts=("approve", "reject"),
            roles=("admin",),
            presenter=SkillPublicationPresenter(),
        ),
    )
