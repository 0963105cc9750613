"""The version lifecycle: submit, approve, reject, publish, roll back, revoke, deprecate.

Each service locks the skill row first (then the version), so label moves and version
numbers of one skill are serialised and two admins racing to publish and revoke cannot
interleave. Lifecycle (``VERSION_TRANSITIONS``, beside the model)::

    draft → in_review → approved → published → deprecated
              └→ rejected                 any but rejected/revoked → revoked
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from common.transitions import move_row
from reviews.models import Queue
from reviews.services import review_open
from skills import selectors
from skills.models import (
    PRODUCTION,
    VERSION_MACHINE,
    LabelMove,
    LabelMoveCause,
    Skill,
    SkillApproval,
    SkillVersion,
    VersionStatus,
    approvals_required,
)
from skills.services.base import (
    REVIEW_TARGET,
    actor_fields,
    audit,
    bump_after_commit,
    cancel_publication_review,
    guard,
    is_author,
    lock_version,
    require_admin,
    require_reason,
)
from skills.services.discovery import version_vector, version_vector_store
from skills.services.labels import label_named, move_label, number_of, production_falls_back


def skill_version_submit(*, tenant: Tenant, version: SkillVersion, actor: Actor) -> SkillVersion:
    """draft → in_review, and open a ``skill_publication`` review item for it."""
    with transaction.atomic():
        skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.IN_REVIEW)
        _refuse_if_source_deleted(locked)
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.IN_REVIEW,
            tenant=tenant,
            actor=actor,
            changes={"submitted_at": timezone.now()},
        )
        changes = selectors.sensitive_changes_against_production(tenant=tenant, version=locked)
        item = review_open(
            tenant=tenant,
            queue=Queue.SKILL_PUBLICATION,
            target_type=REVIEW_TARGET,
            target_id=locked.pk,
            target_version=locked.status,
            # Versions that widen what a skill may do go to the top of the queue.
            priority=1 if changes else 0,
            topic=f"{skill.slug} v{locked.number}",
            agent_label=locked.author_label,
            reason_codes=sorted({change["flag"] for change in changes}),
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.submitted",
            version=locked,
            data={"review_item": item.pk, "changes": changes},
        )
    return locked


def skill_version_approve(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    reason: str = "",
    review_item_id: int | None = None,
) -> SkillVersion:
    """Record an admin's approval; in_review → approved once enough people approved.

    One approval suffices, from anyone but the author. A version that adds
    capabilities or raises risk to high needs two, from two people who are
    neither the author nor each other; after the first it stays in review,
    "1 of 2", and its review item stays open (or reopens) for the second.
    People, not tokens or sessions, are compared (``Actor.person``).

    ``review_item_id`` is set when the approval is a ``skill_publication``
    review decision: that item is being closed by the reviews app, and the
    one-open-item-per-target constraint means there is no other to close.
    Approved through the API or console instead, the open item is cancelled
    once the version is approved.
    """
    with transaction.atomic():
        _skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.APPROVED)
        _refuse_if_source_deleted(locked)
        changes = selectors.sensitive_changes_against_production(tenant=tenant, version=locked)
        if not actor.is_admin:
            if changes:
                raise Problem(
                    "admin_approval_required",
                    f"Version {locked.number} adds capabilities or raises risk to high; "
                    "only an admin may approve it.",
                    status_code=403,
                    changes=changes,
                )
            require_admin(actor, doing="approve a skill version")
        if is_author(actor, tenant=tenant, version=locked):
            raise Problem(
                "author_cannot_approve",
                f"You uploaded version {locked.number} (yourself or through a token acting "
                "for you); another admin must approve it.",
                status_code=409,
            )
        required = approvals_required(changes)
        approvals = list(selectors.skill_approvals(tenant=tenant, version=locked))
        if any(approval.person == actor.person for approval in approvals):
            raise Problem(
                "second_approver_required",
                f"You already approved version {locked.number}; it widens what the skill may "
                f"do, so a second admin, neither you nor its author, must approve it too.",
                status_code=409,
                approvals=len(approvals),
                approvals_required=required,
            )
        SkillApproval.objects.create(
            tenant=tenant,
            version=locked,
            person=actor.person,
            reason=reason.strip()[:1000],
            **actor_fields(actor, "actor"),
        )
        count = len(approvals) + 1
        data = {
            "changes": changes,
            "review_item": review_item_id,
            "approvals": count,
            "approvals_required": required,
        }
        if count < required:
            audit(
                tenant=tenant,
                actor=actor,
                verb="skill_version.approval_recorded",
                version=locked,
                reason=reason.strip(),
                data=data,
            )
            return locked
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.APPROVED,
            tenant=tenant,
            actor=actor,
            changes={
                "approved_at": timezone.now(),
                "approved_changes": changes,
                **actor_fields(actor, "approved_by"),
            },
        )
        if review_item_id is None:
            cancel_publication_review(tenant=tenant, version=locked)
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.approved",
            version=locked,
            reason=reason.strip(),
            data=data,
        )
    return locked


def skill_version_reject(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    reason: str,
    review_item_id: int | None = None,
) -> SkillVersion:
    """in_review → rejected. Final: a fixed package is a new upload with a new hash."""
    require_admin(actor, doing="reject a skill version")
    reason = require_reason(reason, doing="reject this version")
    with transaction.atomic():
        _skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.REJECTED)
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.REJECTED,
            tenant=tenant,
            actor=actor,
            changes={"rejected_at": timezone.now(), "reject_reason": reason[:1000]},
        )
        if review_item_id is None:
            cancel_publication_review(tenant=tenant, version=locked)
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.rejected",
            version=locked,
            reason=reason,
            data={"review_item": review_item_id},
        )
    return locked


def skill_version_publish(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str = ""
) -> SkillVersion:
    """approved → published by an admin who is not the author, and move ``production`` to it.

    Refused with ``evaluation_incomplete`` unless the latest result of every
    one of the six categories passed on this exact content hash, and with
    ``baseline_not_beaten`` unless the normal category's cases beat their no-skill
    baseline at no more than ``SKILL_BASELINE_COST_FACTOR`` times its cost.
    """
    require_admin(actor, doing="publish a skill version")
    # Content never changes, so its vector can be computed before the locks are taken.
    vector = version_vector(version)
    with transaction.atomic():
        skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.PUBLISHED)
        _refuse_if_source_deleted(locked)
        if is_author(actor, tenant=tenant, version=locked):
            raise Problem(
                "author_cannot_publish",
                f"You uploaded version {locked.number} (yourself or through a token acting "
                "for you); another admin must publish it.",
                status_code=409,
            )
        matrix = selectors.evaluation_matrix(tenant=tenant, version=locked)
        if not matrix.complete:
            raise Problem(
                "evaluation_incomplete",
                f"Version {locked.number} needs all six evaluation categories passed on "
                f"{locked.content_hash} by an independent evaluator, case by case; missing: "
                f"{', '.join(matrix.missing) or 'none'}, failed: "
                f"{', '.join(matrix.failed) or 'none'}, unverified: "
                f"{', '.join(matrix.unverified) or 'none'}.",
                status_code=409,
                content_hash=locked.content_hash,
                missing=matrix.missing,
                failed=matrix.failed,
                unverified=matrix.unverified,
            )
        comparison = selectors.baseline_comparison(
            matrix=matrix, cost_factor=settings.SKILL_BASELINE_COST_FACTOR
        )
        if not comparison.beats:
            raise Problem(
                "baseline_not_beaten",
                f"Version {locked.number} must beat its no-skill baseline on the normal "
                f"category: {comparison.passed} of {comparison.cases} cases passed with the "
                f"skill, {comparison.baseline_passed} without; mean tokens "
                f"{comparison.mean_tokens:.0f} with, {comparison.baseline_mean_tokens:.0f} "
                f"without (at most {comparison.cost_factor:g} times); verdict "
                f"{comparison.verdict}.",
                status_code=409,
                verdict=comparison.verdict,
                cases=comparison.cases,
                passed=comparison.passed,
                baseline_passed=comparison.baseline_passed,
                mean_tokens=comparison.mean_tokens,
                baseline_mean_tokens=comparison.baseline_mean_tokens,
                cost_factor=comparison.cost_factor,
            )
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.PUBLISHED,
            tenant=tenant,
            actor=actor,
            changes={"published_at": timezone.now()},
        )
        version_vector_store(tenant=tenant, version=locked, vector=vector)
        reason = reason.strip() or f"publish v{locked.number}"
        move = move_label(
            tenant=tenant,
            skill=skill,
            to=locked,
            actor=actor,
            reason=reason,
            cause=LabelMoveCause.PUBLISH,
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.published",
            version=locked,
            reason=reason,
            data={"label_move": move.pk, "from": number_of(move.from_version)},
        )
    return locked


def skill_rollback(
    *, tenant: Tenant, skill: Skill, to_number: int, actor: Actor, reason: str
) -> LabelMove:
    """Move ``production`` to another published version. Only the pointer moves."""
    require_admin(actor, doing="roll a skill back")
    reason = require_reason(reason, doing="roll back")
    with transaction.atomic():
        locked_skill = Skill.objects.select_for_update().get(tenant=tenant, pk=skill.pk)
        target = SkillVersion.objects.filter(
            tenant=tenant, skill=locked_skill, number=to_number
        ).first()
        if target is None:
            raise not_found("skill version")
        current = label_named(tenant=tenant, skill=locked_skill)
        if target.status != VersionStatus.PUBLISHED:
            raise Problem(
                "rollback_target_invalid",
                f"Version {to_number} is {target.status}; production can only point at a "
                "published version that is neither deprecated nor revoked.",
                status_code=409,
                version_status=target.status,
            )
        if current is not None and current.version_id == target.pk:
            raise Problem(
                "rollback_target_invalid",
                f"Version {to_number} already is production.",
                status_code=409,
                version_status=target.status,
            )
        target.skill = locked_skill
        move = move_label(
            tenant=tenant,
            skill=locked_skill,
            to=target,
            actor=actor,
            reason=reason,
            cause=LabelMoveCause.ROLLBACK,
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="skill.rolled_back",
            target_type="skill",
            target_id=locked_skill.pk,
            reason=reason,
            data={
                "label": PRODUCTION,
                "from": number_of(move.from_version),
                "to": target.number,
                "label_move": move.pk,
            },
        )
    return move


@dataclass(frozen=True)
class RevokeResult:
    version: SkillVersion
    # The production move revoke caused, if the version held production.
    label_move: LabelMove | None
    instances_last_24h: int


def skill_version_revoke(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str
) -> RevokeResult:
    """Refuse every future load of this version, pinned or not.

    If it held ``production``, the label falls back to the newest published
    version; with none left the label is cleared and a label resolve answers
    ``label_not_set`` rather than serve a revoked version.
    """
    require_admin(actor, doing="revoke a skill version")
    reason = require_reason(reason, doing="revoke this version")
    with transaction.atomic():
        skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.REVOKED)
        # Revoked for good: the machine closes its open publication review.
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.REVOKED,
            tenant=tenant,
            actor=actor,
            changes={"revoked_at": timezone.now(), "revoke_reason": reason[:1000]},
        )
        move = production_falls_back(
            tenant=tenant, skill=skill, leaving=locked, actor=actor, reason=reason
        )
        instances = selectors.pins_recent_count(tenant=tenant, version=locked)
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.revoked",
            version=locked,
            reason=reason,
            data={
                "label_move": move.pk if move else None,
                "production_now": number_of(move.to_version) if move else None,
                "instances_last_24h": instances,
            },
        )
        # Exact pins are cached too: every resolve must see the revoke at once.
        bump_after_commit(skill)
    return RevokeResult(version=locked, label_move=move, instances_last_24h=instances)


def skill_version_deprecate(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str = ""
) -> SkillVersion:
    """published → deprecated: still loadable, with a ``Warning`` header on every load."""
    require_admin(actor, doing="deprecate a skill version")
    reason = reason.strip()
    with transaction.atomic():
        skill, locked = lock_version(tenant=tenant, version=version)
        guard(locked, VersionStatus.DEPRECATED)
        move_row(
            VERSION_MACHINE,
            locked,
            to=VersionStatus.DEPRECATED,
            tenant=tenant,
            actor=actor,
            changes={"deprecated_at": timezone.now(), "deprecate_reason": reason[:1000]},
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.deprecated",
            version=locked,
            reason=reason,
        )
        bump_after_commit(skill)
    return locked


def _refuse_if_source_deleted(version: SkillVersion) -> None:
    if selectors.sources_deleted(version=version):
        raise Problem(
            "draft_source_deleted",
            f"Version {version.number} was drafted from a memory that has since been deleted; "
            "it cannot move towards production. Draft again from the memories that remain.",
            status_code=409,
        )
