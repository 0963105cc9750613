"""What discovery needs written: a version's vector (at publish time, and for versions
published before vectors were kept) and agents' use reports."""

from __future__ import annotations

from django.db import transaction

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import Problem
from skills.discovery import discovery_document
from skills.embedding import embed_document, embedder_model
from skills.models import SkillEmbedding, SkillUseReport, SkillVersion
from skills.selectors.versions import LOADABLE_STATUSES
from skills.services.base import actor_fields, audit
from skills.usage_models import UseOutcome

Vector = tuple[str, str, bytes]


def version_vector(version: SkillVersion) -> Vector | None:
    """The version's discovery vector (model, document digest, packed), computed now."""
    return embed_document(
        discovery_document(name=version.skill.name, manifest=version.manifest, body=version.body)
    )


def version_vector_store(*, tenant: Tenant, version: SkillVersion, vector: Vector | None) -> None:
    if vector is None:
        return
    model, digest, packed = vector
    SkillEmbedding.objects.update_or_create(
        tenant=tenant,
        version=version,
        defaults={"model": model, "document_digest": digest, "packed": packed},
    )


def skill_versions_embed() -> int:
    """Give every loadable version a vector of the current embedder (versions published
    before vectors were kept, or under another model). Returns how many were embedded."""
    model = embedder_model()
    if model is None:
        return 0
    todo = (
        SkillVersion.objects.filter(status__in=LOADABLE_STATUSES)
        .exclude(embedding__model=model)
        .select_related("skill", "tenant")
    )
    done = 0
    for version in todo:
        vector = version_vector(version)
        with transaction.atomic():
            version_vector_store(tenant=version.tenant, version=version, vector=vector)
        done += vector is not None
    return done


def skill_use_report(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    task_type: str,
    outcome: str,
    without_skill: str = "",
    steps: int | None = None,
    steps_without_skill: int | None = None,
) -> SkillUseReport:
    """Record how a loaded version did on one task. Failing where the no-skill path
    succeeded, or taking more steps than it, is negative transfer: discovery ranks the
    skill lower for that task type."""
    if version.status not in LOADABLE_STATUSES:
        raise Problem(
            "version_not_published",
            f"Version {version.number} is {version.status}; reports are about versions "
            "agents may load.",
            status_code=409,
        )
    negative = (outcome == UseOutcome.FAILURE and without_skill == UseOutcome.SUCCESS) or (
        outcome == without_skill
        and steps is not None
        and steps_without_skill is not None
        and steps > steps_without_skill
    )
    with transaction.atomic():
        report = SkillUseReport.objects.create(
            tenant=tenant,
            version=version,
            task_type=task_type,
            outcome=outcome,
            without_skill=without_skill,
            steps=steps,
            steps_without_skill=steps_without_skill,
            negative_transfer=negative,
            **actor_fields(actor, "actor"),
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.use_reported",
            version=version,
            data={"task_type": task_type, "outcome": outcome, "negative_transfer": negative},
        )
    return report
