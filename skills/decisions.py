"""The ``skill_publication`` review queue: deciding an item calls the same services as the API.

An item opens when a version is submitted. ``approve`` and ``reject`` run
``skill_version_approve`` / ``skill_version_reject`` inside the decision's
transaction, so four-eyes, admin-only approval of new capabilities and the
audit trail are identical whichever door the admin came through. A version
that widens what the skill may do and has one approval of two goes back to the
queue (``follow_up``) for its second approver.
"""

from __future__ import annotations

from common.problems import Problem
from reviews.models import Queue, ReviewItem
from reviews.registry import OTHER_REASON, DecisionInput, QueuePolicy, register_queue
from reviews.services import review_open
from skills import selectors, services
from skills.models import SkillVersion, VersionStatus
from skills.presenters import SkillPublicationPresenter

# Why an admin approved or turned down a skill version.
SKILL_REASONS = (
    ("matrix_reviewed", "Evaluation matrix reviewed"),
    ("capabilities_ok", "New capabilities are acceptable"),
    ("unsupported", "Not supported by its sources"),
    ("regression", "Regresses on the matrix"),
    ("unsafe_capability", "Asks for capabilities it should not have"),
    OTHER_REASON,
)


# The reason code of an item reopened for a version's second approver.
SECOND_APPROVAL = "second_approval"


def _version(item: ReviewItem) -> SkillVersion:
    version = selectors.skill_version_by_id(tenant=item.tenant, version_id=int(item.target_id))
    if version is None:
        raise Problem(
            "target_changed", "The skill version under review no longer exists.", status_code=409
        )
    return version


def _reason(reason_code: str, note: str) -> str:
    label = dict(SKILL_REASONS).get(reason_code, reason_code)
    return ": ".join(part for part in (label, note.strip()) if part)


class SkillPublicationHandler:
    def current_version(self, *, item: ReviewItem) -> str:
        version = selectors.skill_version_by_id(tenant=item.tenant, version_id=int(item.target_id))
        return version.status if version is not None else ""

    def apply(self, decision: DecisionInput) -> None:
        version = _version(decision.item)
        if decision.verdict == "approve":
            services.skill_version_approve(
                tenant=decision.item.tenant,
                version=version,
                actor=decision.actor,
                reason=_reason(decision.reason_code, decision.note),
                review_item_id=decision.item.pk,
            )
        elif decision.verdict == "reject":
            services.skill_version_reject(
                tenant=decision.item.tenant,
                version=version,
                actor=decision.actor,
                reason=_reason(decision.reason_code, decision.note),
                review_item_id=decision.item.pk,
            )
        else:  # pragma: no cover - review_decide checks verdicts against the policy
            raise Problem(
                "invalid_verdict",
                f"`{decision.verdict}` is not a skill_publication verdict.",
            )

    def follow_up(self, *, item: ReviewItem) -> None:
        """A version still in review after an approval waits for its second approver."""
        version = _version(item)
        if version.status != VersionStatus.IN_REVIEW:
            return
        review_open(
            tenant=item.tenant,
            queue=Queue.SKILL_PUBLICATION,
            target_type=item.target_type,
            target_id=item.target_id,
            target_version=version.status,
            priority=item.priority,
            topic=item.topic,
            agent_label=item.agent_label,
            reason_codes=sorted({*item.reason_codes, SECOND_APPROVAL}),
        )


def register() -> None:
    register_queue(
        Queue.SKILL_PUBLICATION,
        QueuePolicy(
            handler=SkillPublicationHandler(),
            verdicts=("approve", "reject"),
            roles=("admin",),
            presenter=SkillPublicationPresenter(),
            labels={"approve": "Approve", "reject": "Reject"},
            reasons=SKILL_REASONS,
        ),
    )
