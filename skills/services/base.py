"""What every skills service shares: guards, row locks, the audit row, package limits."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.selectors import person_of
from accounts.services import audit_record
from common.problems import InvalidTransition, Problem
from reviews.models import Queue
from reviews.services import review_cancel_for_target
from skills.cache import resolve_generation_bump
from skills.models import (
    VERSION_MACHINE,
    Skill,
    SkillVersion,
    VersionStatus,
    allowed_version_targets,
)
from skills.package.budget import ScanBudget

REVIEW_TARGET = "skill_version"
# Paths under /api/v1/skills/ that are not skills.
RESERVED_SLUGS = frozenset({"catalog", "credentials", "drafts", "grants", "load", "tools"})


def allowed_next(status: str) -> list[str]:
    """The moves a caller may ask for; `incompatible` only follows a retired tool."""
    return [
        target for target in allowed_version_targets(status) if target != VersionStatus.INCOMPATIBLE
    ]


def package_limits() -> dict[str, int]:
    return {
        "max_file_bytes": settings.SKILL_PACKAGE_MAX_FILE_BYTES,
        "max_total_bytes": settings.SKILL_PACKAGE_MAX_TOTAL_BYTES,
        "max_files": settings.SKILL_PACKAGE_MAX_FILES,
        "max_compression_ratio": settings.SKILL_PACKAGE_MAX_COMPRESSION_RATIO,
        "ratio_exempt_bytes": settings.SKILL_PACKAGE_RATIO_EXEMPT_BYTES,
    }


def scan_budget() -> ScanBudget:
    return ScanBudget(
        max_text_lines=settings.SKILL_SCAN_MAX_TEXT_LINES,
        max_script_bytes=settings.SKILL_SCAN_MAX_SCRIPT_BYTES,
        max_ast_nodes=settings.SKILL_SCAN_MAX_AST_NODES,
        max_ast_depth=settings.SKILL_SCAN_MAX_AST_DEPTH,
        max_seconds=settings.SKILL_SCAN_MAX_SECONDS,
    )


def upload_max_bytes() -> int:
    # A zip may be a little larger than what it unpacks to (headers, stored
    # members); anything beyond this cannot pass the unpacked-size check.
    limits = package_limits()
    return limits["max_total_bytes"] + 64 * limits["max_files"] + 1_000_000


def actor_fields(actor: Actor, prefix: str) -> dict[str, str]:
    return {
        f"{prefix}_kind": actor.kind,
        f"{prefix}_id": actor.id,
        f"{prefix}_label": actor.label,
    }


def is_author(actor: Actor, *, tenant: Tenant, version: SkillVersion) -> bool:
    """Whether the person behind `actor` is the person who uploaded `version`.

    Compares people, not tokens or sessions: an admin's two tokens and their
    session are one person (docs/people-and-duties.md).
    """
    return actor.person == person_of(
        tenant=tenant, kind=version.author_kind, actor_id=version.author_id
    )


def require_reason(reason: str, *, doing: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise Problem(
            "reason_required",
            f"Say why you {doing}; the reason is kept in the history.",
            errors={"reason": ["A reason is required."]},
        )
    return reason


def require_admin(actor: Actor, *, doing: str) -> None:
    if not actor.is_admin:
        raise Problem(
            "role_required",
            f"Only a signed-in admin may {doing}; agent tokens never can.",
            status_code=403,
            roles=["admin"],
        )


def guard(version: SkillVersion, to: str) -> None:
    if not VERSION_MACHINE.allows(version.status, to):
        raise InvalidTransition(
            f"Version {version.number} is {version.status} and cannot become {to}.",
            allowed=allowed_next(version.status),
        )


def lock_version(*, tenant: Tenant, version: SkillVersion) -> tuple[Skill, SkillVersion]:
    skill = Skill.objects.select_for_update().get(tenant=tenant, pk=version.skill_id)
    locked = SkillVersion.objects.select_for_update().get(tenant=tenant, pk=version.pk)
    locked.skill = skill
    return skill, locked


def cancel_publication_review(*, tenant: Tenant, version: SkillVersion) -> None:
    """Close the version's open publication review: it left the state a person decides on."""
    review_cancel_for_target(
        tenant=tenant,
        target_type=REVIEW_TARGET,
        target_id=version.pk,
        queue=Queue.SKILL_PUBLICATION,
    )


def bump_after_commit(skill: Skill) -> None:
    tenant_id, slug = skill.tenant_id, skill.slug
    transaction.on_commit(lambda: resolve_generation_bump(tenant_id=tenant_id, slug=slug))


def audit(
    *,
    tenant: Tenant,
    actor: Actor,
    verb: str,
    version: SkillVersion,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> None:
    audit_record(
        tenant=tenant,
        actor=actor,
        verb=verb,
        target_type=REVIEW_TARGET,
        target_id=version.pk,
        reason=reason,
        data={"skill": version.skill.slug, "number": version.number, **(data or {})},
    )
