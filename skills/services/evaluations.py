"""Evaluation runs, the pins agents leave when they resolve a version, load counts."""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import Problem
from common.screen import find_secrets_in_value
from skills import selectors
from skills.cache import pin_touch_due
from skills.models import (
    EvaluationCase,
    EvaluationCategory,
    EvaluationCheck,
    EvaluationKind,
    EvaluationRun,
    SkillLoad,
    SkillPin,
    SkillVersion,
)
from skills.services.base import (
    actor_fields,
    audit,
    is_author,
)


def evaluation_record(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    category: str,
    passed: bool,
    content_hash: str,
    details: dict[str, Any] | None = None,
    environment: dict[str, Any] | None = None,
    cases: list[dict[str, Any]] | None = None,
    kind: str = EvaluationKind.REGRESSION,
    paired_with: dict[str, Any] | None = None,
) -> EvaluationRun:
    """Append one regression result with its cases. It counts only if ``content_hash`` is
    the version's, its evaluator is a known person other than the author, and its cases
    prove it (see
    ``selectors.evaluation_matrix``).

    ``cases`` are dicts with ``case_id``, ``input``, ``expected``,
    ``trajectory_summary``, ``passed``, the five checks (``EvaluationCheck``)
    and ``cost_tokens``, ``cost_seconds``, ``cost_tool_calls``.
    """
    if category not in EvaluationCategory.values:
        raise Problem(
            "validation_error",
            f"`{category}` is not an evaluation category.",
            errors={"category": [f"Choose one of: {', '.join(EvaluationCategory.values)}."]},
        )
    if is_author(actor, tenant=tenant, version=version):
        raise Problem(
            "evaluator_is_author",
            f"You uploaded version {version.number} (yourself or through a token acting for "
            "you); its evaluation must come from a token of another person.",
            status_code=409,
        )
    if not actor.is_accountable:
        raise Problem(
            "evaluator_unaccountable",
            f"This token acts for nobody, so nothing shows it is not the author of version "
            f"{version.number}. An admin issues the evaluator a token acting for a person.",
            status_code=409,
        )
    details, environment, cases = details or {}, environment or {}, cases or []
    _check_environment(environment, version=version)
    _check_cases(cases, passed=passed)
    paired = _paired_version(tenant=tenant, kind=kind, paired_with=paired_with)
    if find_secrets_in_value({"details": details, "environment": environment, "cases": cases}):
        raise Problem(
            "secret_detected",
            "The evaluation details, environment or cases hold what looks like a credential. "
            "Remove it; memdesk never stores secrets.",
        )
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            tenant=tenant,
            version=version,
            content_hash=content_hash,
            category=category,
            passed=passed,
            details=details,
            environment=environment,
            kind=kind,
            paired_skill=paired.skill.slug if paired else "",
            paired_number=paired.number if paired else None,
            independent=True,
            **actor_fields(actor, "actor"),
        )
        EvaluationCase.objects.bulk_create(
            EvaluationCase(tenant=tenant, run=run, position=position, **case)
            for position, case in enumerate(cases)
        )
        audit(
            tenant=tenant,
            actor=actor,
            verb="evaluation.recorded",
            version=version,
            data={
                "evaluation": run.pk,
                "category": category,
                "passed": passed,
                "content_hash": content_hash,
                "counts": content_hash == version.content_hash,
                "cases": len(cases),
                "kind": kind,
                "paired_with": f"{paired.skill.slug} v{paired.number}" if paired else None,
            },
        )
    return run


def _check_environment(environment: dict[str, Any], *, version: SkillVersion) -> None:
    """A result means little without what it ran on: the model and each tool's version."""
    model = environment.get("model")
    tools = environment.get("tools")
    needed = list(version.manifest.get("tools") or [])
    problems = []
    if not isinstance(model, str) or not model.strip():
        problems.append("`model`: the model and its version, e.g. `gpt-4.1-2025-04-14`.")
    if not isinstance(tools, dict) or not all(
        isinstance(name, str) and isinstance(v, str) and v.strip() for name, v in tools.items()
    ):
        problems.append("`tools`: each tool used, by name, with its version (`{}` for none).")
    elif missing := [tool for tool in needed if tool not in tools]:
        problems.append(f"`tools` lacks the version of {', '.join(missing)}, which it needs.")
    if problems:
        raise Problem(
            "environment_required",
            "An evaluation run names what it ran on, so a change in success rate can be "
            "traced to the model, a tool or the skill. " + " ".join(problems),
            errors={"environment": problems},
        )


def _paired_version(
    *, tenant: Tenant, kind: str, paired_with: dict[str, Any] | None
) -> SkillVersion | None:
    if kind not in EvaluationKind.values:
        raise Problem(
            "validation_error",
            f"`{kind}` is not an evaluation kind.",
            errors={"kind": [f"Choose one of: {', '.join(EvaluationKind.values)}."]},
        )
    if (kind == EvaluationKind.PAIRED_COMPOSITION) != (paired_with is not None):
        raise Problem(
            "validation_error",
            "A paired-composition run names the version it ran with in `paired_with`; "
            "no other run does.",
            errors={"paired_with": ["Required exactly for kind paired_composition."]},
        )
    if paired_with is None:
        return None
    paired = (
        SkillVersion.objects.filter(
            tenant=tenant, skill__slug=paired_with["skill"], number=paired_with["number"]
        )
        .select_related("skill")
        .first()
    )
    if paired is None:
        raise Problem(
            "validation_error",
            f"This tenant has no version {paired_with['number']} of {paired_with['skill']}.",
            errors={"paired_with": ["No such skill version."]},
        )
    return paired


def _check_cases(cases: list[dict[str, Any]], *, passed: bool) -> None:
    for index, case in enumerate(cases):
        if case["passed"] and not all(case[check] for check in EvaluationCheck.values):
            failed = [check for check in EvaluationCheck.values if not case[check]]
            raise Problem(
                "validation_error",
                f"Case {index} is marked passed but its {', '.join(failed)} check failed.",
                errors={"cases": [f"cases[{index}]: a passed case passes all five checks."]},
            )
    if cases and passed != all(case["passed"] for case in cases):
        raise Problem(
            "validation_error",
            f"`passed` is {str(passed).lower()} but the cases say otherwise; a run passes "
            "exactly when every case passed.",
            errors={"passed": ["Disagrees with the cases."]},
        )


def skill_pin_record(*, resolved: selectors.ResolvedVersion, tenant: Tenant, instance: str) -> None:
    """Record that ``instance`` loaded the resolved version: one upsert, at most once a minute."""
    if not pin_touch_due(version_id=resolved.version_id, instance=instance):
        return
    SkillPin.objects.bulk_create(
        [
            SkillPin(
                tenant=tenant,
                skill_id=resolved.skill_id,
                version_id=resolved.version_id,
                instance=instance,
                last_seen_at=timezone.now(),
            )
        ],
        update_conflicts=True,
        unique_fields=["tenant", "version", "instance"],
        update_fields=["last_seen_at"],
    )


def skill_loads_record(*, tenant: Tenant, actor: Actor, version_ids: list[int], level: int) -> None:
    """Count one load of each version at ``level`` by ``actor``: one statement for all.

    A counter row per (version, level, loader), bumped in place, so a catalog
    listing fifty skills costs one upsert, not fifty.
    """
    if not version_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {SkillLoad._meta.db_table}
                (tenant_id, version_id, level, loader_kind, loader_id, loader_label, count,
                 first_at, last_at)
            SELECT %s, v, %s, %s, %s, %s, 1, now(), now() FROM unnest(%s::bigint[]) AS v
            ON CONFLICT (tenant_id, version_id, level, loader_kind, loader_id)
            DO UPDATE SET count = {SkillLoad._meta.db_table}.count + 1,
                          last_at = now(), loader_label = EXCLUDED.loader_label
            """,  # noqa: S608 - table name from the model, values bound
            [tenant.pk, level, actor.kind, actor.id, actor.label[:150], sorted(set(version_ids))],
        )
