"""Labels (production, staging, …) and how they move between versions of one skill."""

from __future__ import annotations

from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from skills.models import (
    PRODUCTION,
    LabelMove,
    LabelMoveCause,
    Skill,
    SkillLabel,
    SkillVersion,
    VersionStatus,
)
from skills.services.base import (
    actor_fields,
    bump_after_commit,
)
from skills.services.instances import instances_of_version_invalidate


def production_falls_back(
    *, tenant: Tenant, skill: Skill, leaving: SkillVersion, actor: Actor, reason: str
) -> LabelMove | None:
    """If ``leaving`` holds production, point it at the newest other published version.

    With none left the label is cleared, and a label resolve answers
    ``label_not_set`` rather than serve a version that may not run.
    """
    label = label_named(tenant=tenant, skill=skill)
    if label is None or label.version_id != leaving.pk:
        return None
    fallback = (
        SkillVersion.objects.filter(tenant=tenant, skill=skill, status=VersionStatus.PUBLISHED)
        .exclude(pk=leaving.pk)
        .order_by("-number")
        .first()
    )
    return move_label(
        tenant=tenant,
        skill=skill,
        to=fallback,
        actor=actor,
        reason=reason,
        cause=LabelMoveCause.REVOKE,
    )


def label_named(*, tenant: Tenant, skill: Skill, name: str = PRODUCTION) -> SkillLabel | None:
    return (
        SkillLabel.objects.select_for_update().filter(tenant=tenant, skill=skill, name=name).first()
    )


def number_of(version: SkillVersion | None) -> int | None:
    return version.number if version is not None else None


def move_label(
    *,
    tenant: Tenant,
    skill: Skill,
    to: SkillVersion | None,
    actor: Actor,
    reason: str,
    cause: str,
    name: str = PRODUCTION,
) -> LabelMove:
    """Point a label at ``to`` and append the move. The caller holds the skill lock."""
    now = timezone.now()
    label = label_named(tenant=tenant, skill=skill, name=name)
    from_version = label.version if label is not None else None
    if label is None:
        SkillLabel.objects.create(tenant=tenant, skill=skill, name=name, version=to, moved_at=now)
    else:
        label.version = to
        label.moved_at = now
        label.save(update_fields=["version", "moved_at"])
    move = LabelMove.objects.create(
        tenant=tenant,
        skill=skill,
        label=name,
        from_version=from_version,
        to_version=to,
        cause=cause,
        reason=reason[:1000],
        **actor_fields(actor, "actor"),
    )
    if from_version is not None and from_version != to:
        # Its instances were checked as the version this label served; no longer.
        instances_of_version_invalidate(
            tenant=tenant,
            actor=actor,
            version=from_version,
            reason=f"the {name} label moved from v{from_version.number} to "
            f"{f'v{to.number}' if to is not None else 'nothing'}: {reason}",
        )
    bump_after_commit(skill)
    return move
