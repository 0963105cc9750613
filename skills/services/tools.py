"""Retiring a tool (its skills become incompatible); instantiating a version's credential slots."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from common.transitions import move_row
from skills.models import (
    INCOMPATIBLE_FROM,
    VERSION_MACHINE,
    RetiredTool,
    SkillVersion,
    VersionStatus,
)
from skills.package.manifest import TOOL_NAME
from skills.services.base import (
    actor_fields,
    audit,
    bump_after_commit,
    guard,
    lock_version,
    require_admin,
    require_reason,
)
from skills.services.instances import instances_of_version_invalidate
from skills.services.labels import production_falls_back


@dataclass(frozen=True)
class ToolRetirement:
    tool: RetiredTool
    # (version, the status it had) for every version the retirement made incompatible.
    incompatible: list[tuple[SkillVersion, str]]


def tool_retire(*, tenant: Tenant, name: str, reason: str, actor: Actor) -> ToolRetirement:
    """Record that agents no longer have ``name``; every version needing it becomes incompatible.

    A version holding production gives the label back to the newest other
    published version, as on revoke. Rare and administrative: versions are
    moved one by one through the guarded transition, each with its audit row.
    """
    require_admin(actor, doing="retire a tool")
    reason = require_reason(reason, doing="retire this tool")
    if not TOOL_NAME.fullmatch(name):
        raise Problem(
            "validation_error",
            "A tool name is 1-100 letters, digits, `_`, `.`, `:` or `-`.",
            errors={"name": ["Not a tool name."]},
        )
    with transaction.atomic():
        try:
            with transaction.atomic():
                tool = RetiredTool.objects.create(
                    tenant=tenant, name=name, reason=reason[:1000], **actor_fields(actor, "actor")
                )
        except IntegrityError as exc:
            raise Problem(
                "tool_already_retired", f"{name} is retired already.", status_code=409
            ) from exc
        affected = (
            SkillVersion.objects.filter(
                tenant=tenant, manifest__tools__contains=[name], status__in=INCOMPATIBLE_FROM
            )
            .order_by("skill_id", "number")
            .values_list("pk", flat=True)
        )
        moved = []
        for version_id in list(affected):
            version = SkillVersion.objects.get(tenant=tenant, pk=version_id)
            skill, locked = lock_version(tenant=tenant, version=version)
            previous = locked.status
            guard(locked, VersionStatus.INCOMPATIBLE)
            # Incompatible for good: the machine closes its open publication review.
            move_row(
                VERSION_MACHINE,
                locked,
                to=VersionStatus.INCOMPATIBLE,
                tenant=tenant,
                actor=actor,
                changes={
                    "incompatible_at": timezone.now(),
                    "incompatible_reason": f"tool {name} retired: {reason}"[:1000],
                },
            )
            move = production_falls_back(
                tenant=tenant,
                skill=skill,
                leaving=locked,
                actor=actor,
                reason=locked.incompatible_reason,
            )
            instances_of_version_invalidate(
                tenant=tenant, actor=actor, version=locked, reason=locked.incompatible_reason
            )
            audit(
                tenant=tenant,
                actor=actor,
                verb="skill_version.incompatible",
                version=locked,
                reason=locked.incompatible_reason,
                data={
                    "tool": name,
                    "from": previous,
                    "label_move": move.pk if move else None,
                },
            )
            bump_after_commit(skill)
            moved.append((locked, previous))
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="skill_tool.retired",
            target_type="skill_tool",
            target_id=tool.pk,
            reason=reason,
            data={"tool": name, "versions": [v.pk for v, _ in moved]},
        )
    return ToolRetirement(tool=tool, incompatible=moved)
