"""Skill drafts built from experience memories, and what happens when such a memory is deleted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import Problem, not_found
from skills import selectors
from skills.drafting import MAX_SOURCES, MIN_SOURCES, Experience, package_zip, skill_md
from skills.models import (
    DraftSource,
    Skill,
    SkillVersion,
)
from skills.services.base import (
    audit,
)
from skills.services.uploads import skill_create, skill_version_upload


def _require_editor(actor: Actor, *, doing: str) -> None:
    if not actor.is_editor:
        raise Problem(
            "role_required",
            f"Only a signed-in editor or admin may {doing}; agent tokens never can.",
            status_code=403,
            roles=["editor", "admin"],
        )


@dataclass(frozen=True)
class Draft:
    version: SkillVersion
    created: bool
    claim_ids: list[str]


def skill_draft_from_experiences(
    *,
    tenant: Tenant,
    actor: Actor,
    slug: str,
    description: str,
    claim_ids: list[str],
    name: str = "",
) -> Draft:
    """Draft a SKILL.md package from experience claims, with lineage to them.

    The claims must be this tenant's active experiences whose outcome was a
    success or a failure, with at least ``MIN_SOURCES`` successes (one run is an
    anecdote, not a procedure); the failures give the pitfalls. The package is
    uploaded through the same checks as any other, as a draft of ``slug`` (created
    if new) authored by ``actor``.
    """
    _require_editor(actor, doing="draft a skill from experiences")
    unique = list(dict.fromkeys(str(claim_id) for claim_id in claim_ids))
    if not MIN_SOURCES <= len(unique) <= MAX_SOURCES:
        raise Problem(
            "validation_error",
            f"Select {MIN_SOURCES} to {MAX_SOURCES} experiences; a procedure needs repeated "
            "successful runs.",
            errors={"claims": [f"{len(unique)} selected."]},
        )
    claims = selectors.experiences_for_draft(tenant=tenant, claim_ids=unique)
    if len(claims) != len(unique):
        raise not_found("memory")
    ineligible = [
        {"claim": str(claim.pk), "reason": reason}
        for claim in claims
        if (reason := selectors.draft_ineligibility(claim)) is not None
    ]
    if ineligible:
        raise Problem(
            "claim_not_eligible",
            "Only active experiences that succeeded or failed can become a skill draft: "
            + ", ".join(f"{item['claim']} ({item['reason']})" for item in ineligible),
            status_code=409,
            claims=ineligible,
        )
    experiences = _experiences(claims, order=unique)
    successes = sum(1 for experience in experiences if experience.succeeded)
    if successes < MIN_SOURCES:
        raise Problem(
            "validation_error",
            f"Select at least {MIN_SOURCES} successful runs; failed runs only add pitfalls.",
            errors={"claims": [f"{successes} successful selected."]},
        )
    description = description.strip()
    data = package_zip(skill_md(slug=slug, description=description, experiences=experiences))
    with transaction.atomic():
        skill = Skill.objects.filter(tenant=tenant, slug=slug).first() or skill_create(
            tenant=tenant, slug=slug, name=name, actor=actor
        )
        version, created = skill_version_upload(tenant=tenant, skill=skill, data=data, actor=actor)
        DraftSource.objects.bulk_create(
            [DraftSource(tenant=tenant, version=version, claim_id=c) for c in unique],
            ignore_conflicts=True,
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.drafted_from_experience",
            version=version,
            data={"claims": unique, "created": created},
        )
    return Draft(version=version, created=created, claim_ids=unique)


def _experiences(claims: list[Any], *, order: list[str]) -> list[Experience]:
    return [
        Experience(
            claim_id=str(claim.pk),
            subject=claim.subject.key,
            predicate=claim.predicate,
            text=claim.text,
            value=claim.value,
        )
        for claim in sorted(claims, key=lambda claim: order.index(str(claim.pk)))
    ]


def draft_package_again(
    *, tenant: Tenant, slug: str, description: str, claim_ids: list[str]
) -> tuple[bytes, list[str]] | None:
    """The package a draft's remaining sources make, for a deletion that took one away:
    the claims still eligible, or None when fewer than ``MIN_SOURCES`` successes remain."""
    claims = [
        claim
        for claim in selectors.experiences_for_draft(tenant=tenant, claim_ids=claim_ids)
        if selectors.draft_ineligibility(claim) is None
    ]
    experiences = _experiences(claims, order=claim_ids)
    if sum(1 for experience in experiences if experience.succeeded) < MIN_SOURCES:
        return None
    text = skill_md(slug=slug, description=description, experiences=experiences)
    return package_zip(text), [experience.claim_id for experience in experiences]


def _claim_id_in(claim_ids: list[str]) -> RawSQL:
    """`claim_id = ANY(<one array>)`: a subject's deletion forgets thousands of claims, and
    an `IN` list with a placeholder each costs more to bind and parse than to run."""
    return RawSQL("claim_id = ANY(%s::uuid[])", (list(claim_ids),), output_field=BooleanField())


def drafts_flag_forgotten_sources(*, tenant_id: int, claim_ids: list[str], deletion_id: Any) -> int:
    """Flag the versions drafted from claims a deletion just erased or invalidated.

    Runs inside the deletion's transaction (memory's ``claims_forgotten``).
    One UPDATE for the lineage rows, then one audit row per flagged version.
    """
    if not claim_ids:
        return 0
    now = timezone.now()
    with transaction.atomic():
        flagged = list(
            DraftSource.objects.filter(
                _claim_id_in(claim_ids), tenant_id=tenant_id, source_deleted_at__isnull=True
            )
            .select_for_update()
            .values_list("pk", "version_id")
        )
        if not flagged:
            return 0
        DraftSource.objects.filter(pk__in=[pk for pk, _ in flagged]).update(
            source_deleted_at=now, deletion_id=deletion_id
        )
        versions = SkillVersion.objects.filter(
            tenant_id=tenant_id, pk__in={version_id for _, version_id in flagged}
        ).select_related("skill", "tenant")
        for version in versions:
            audit(
                tenant=version.tenant,
                actor=Actor.system("deletion"),
                verb="skill_version.source_deleted",
                version=version,
                reason="a memory this draft was built from was deleted",
                data={"deletion": str(deletion_id)},
            )
    return len(flagged)
