"""Every write to skills: create, upload, the version lifecycle, labels, evaluations, pins.

Each lifecycle service locks the skill row first (then the version), so label
moves and version numbers of one skill are serialised and two admins racing
to publish and revoke cannot interleave. Every change writes its audit row in
the same transaction and bumps the resolve cache generation after commit.

Lifecycle (``VERSION_TRANSITIONS``, beside the model)::

    draft → in_review → approved → published → deprecated
              └→ rejected                 any but rejected/revoked → revoked
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import InvalidTransition, Problem, not_found
from common.screen import find_secrets_in_strings, find_secrets_in_value
from reviews.models import Queue
from reviews.services import review_cancel_for_target, review_open
from skills import selectors
from skills.cache import pin_touch_due, resolve_generation_bump
from skills.drafting import MAX_SOURCES, MIN_SOURCES, Experience, package_zip, skill_md
from skills.instantiation import Instantiation, check_instantiation
from skills.models import (
    INCOMPATIBLE_FROM,
    PRODUCTION,
    SLUG_PATTERN,
    VERSION_TRANSITIONS,
    DraftSource,
    EvaluationCase,
    EvaluationCategory,
    EvaluationCheck,
    EvaluationRun,
    LabelMove,
    LabelMoveCause,
    RetiredTool,
    Skill,
    SkillFile,
    SkillLabel,
    SkillLoad,
    SkillPin,
    SkillVersion,
    VersionStatus,
    allowed_version_targets,
)
from skills.package import parse_package
from skills.package.budget import ScanBudget
from skills.package.errors import HTTP_STATUS as PACKAGE_HTTP_STATUS
from skills.package.errors import PackageError
from skills.package.manifest import TOOL_NAME

REVIEW_TARGET = "skill_version"
# Paths under /api/v1/skills/ that are not skills.
RESERVED_SLUGS = frozenset({"catalog", "drafts", "tools"})


def allowed_next(status: str) -> list[str]:
    """The moves a caller may ask for; `incompatible` only follows a retired tool."""
    return [
        target for target in allowed_version_targets(status) if target != VersionStatus.INCOMPATIBLE
    ]


def _package_limits() -> dict[str, int]:
    return {
        "max_file_bytes": settings.SKILL_PACKAGE_MAX_FILE_BYTES,
        "max_total_bytes": settings.SKILL_PACKAGE_MAX_TOTAL_BYTES,
        "max_files": settings.SKILL_PACKAGE_MAX_FILES,
    }


def _scan_budget() -> ScanBudget:
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
    limits = _package_limits()
    return limits["max_total_bytes"] + 64 * limits["max_files"] + 1_000_000


def _actor_fields(actor: Actor, prefix: str) -> dict[str, str]:
    return {f"{prefix}_kind": actor.kind, f"{prefix}_id": actor.id, f"{prefix}_label": actor.label}


def _require_reason(reason: str, *, doing: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise Problem(
            "reason_required",
            f"Say why you {doing}; the reason is kept in the history.",
            errors={"reason": ["A reason is required."]},
        )
    return reason


def _require_admin(actor: Actor, *, doing: str) -> None:
    if not actor.is_admin:
        raise Problem(
            "role_required",
            f"Only a signed-in admin may {doing}; agent tokens never can.",
            status_code=403,
            roles=["admin"],
        )


def _guard(version: SkillVersion, to: str) -> None:
    if to not in VERSION_TRANSITIONS[version.status]:
        raise InvalidTransition(
            f"Version {version.number} is {version.status} and cannot become {to}.",
            allowed=allowed_next(version.status),
        )


def _lock(*, tenant: Tenant, version: SkillVersion) -> tuple[Skill, SkillVersion]:
    skill = Skill.objects.select_for_update().get(tenant=tenant, pk=version.skill_id)
    locked = SkillVersion.objects.select_for_update().get(tenant=tenant, pk=version.pk)
    locked.skill = skill
    return skill, locked


def _bump_after_commit(skill: Skill) -> None:
    tenant_id, slug = skill.tenant_id, skill.slug
    transaction.on_commit(lambda: resolve_generation_bump(tenant_id=tenant_id, slug=slug))


def _audit(
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


# --- skills and uploads -----------------------------------------------------------------------


def skill_create(*, tenant: Tenant, slug: str, name: str = "", actor: Actor) -> Skill:
    if not re.fullmatch(SLUG_PATTERN, slug) or len(slug) > 64:
        raise Problem(
            "validation_error",
            "A skill slug is 1-64 lowercase letters, digits and single hyphens, e.g. pdf-tools.",
            errors={"slug": ["Use lowercase letters, digits and hyphens."]},
        )
    if slug in RESERVED_SLUGS:
        raise Problem(
            "validation_error",
            f"{slug} names a part of the skills API; choose another slug.",
            errors={"slug": [f"Reserved: {', '.join(sorted(RESERVED_SLUGS))}."]},
        )
    with transaction.atomic():
        try:
            with transaction.atomic():
                skill = Skill.objects.create(
                    tenant=tenant,
                    slug=slug,
                    name=(name or slug).strip()[:200] or slug,
                    **_actor_fields(actor, "created_by"),
                )
        except IntegrityError as exc:
            raise Problem(
                "skill_exists",
                f"A skill named {slug} already exists; upload a new version to it instead.",
                status_code=409,
            ) from exc
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="skill.created",
            target_type="skill",
            target_id=skill.pk,
            data={"slug": slug},
        )
    return skill


def skill_version_upload(
    *, tenant: Tenant, skill: Skill, data: bytes, actor: Actor
) -> tuple[SkillVersion, bool]:
    """Store a package as the next version, or return the version with the same content.

    Returns ``(version, created)``. Parsing happens before the transaction:
    it is CPU work on untrusted input and holds no locks.
    """
    if len(data) > upload_max_bytes():
        raise Problem(
            "package_too_large",
            f"The upload is {len(data)} bytes; packages may be at most {upload_max_bytes()}.",
            status_code=413,
        )
    try:
        parsed = parse_package(
            data=data, slug=skill.slug, budget=_scan_budget(), **_package_limits()
        )
    except PackageError as exc:
        extra: dict[str, Any] = {"path": exc.path} if exc.path else {}
        if exc.field is not None:
            extra.update(field=exc.field, rule=exc.rule, errors={exc.field: [exc.detail]})
        status_code = PACKAGE_HTTP_STATUS.get(exc.code, 400)
        raise Problem(exc.code, exc.detail, status_code=status_code, **extra) from exc
    retired = sorted(
        RetiredTool.objects.filter(
            tenant=tenant, name__in=parsed.manifest.get("tools") or []
        ).values_list("name", flat=True)
    )
    if retired:
        raise Problem(
            "tool_retired",
            f"The package needs {', '.join(retired)}, retired in this tenant; a version "
            "written for the tools agents still have is welcome.",
            status_code=409,
            tools=retired,
        )
    with transaction.atomic():
        locked = Skill.objects.select_for_update().get(tenant=tenant, pk=skill.pk)
        existing = (
            SkillVersion.objects.filter(
                tenant=tenant, skill=locked, content_hash=parsed.content_hash
            )
            .select_related("skill")
            .first()
        )
        if existing is not None:
            return existing, False
        last = (
            SkillVersion.objects.filter(tenant=tenant, skill=locked)
            .order_by("-number")
            .values_list("number", flat=True)
            .first()
        )
        version = SkillVersion.objects.create(
            tenant=tenant,
            skill=locked,
            number=(last or 0) + 1,
            content_hash=parsed.content_hash,
            manifest=parsed.manifest,
            body=parsed.body,
            **_actor_fields(actor, "author"),
        )
        SkillFile.objects.bulk_create(
            SkillFile(
                tenant=tenant,
                version=version,
                path=file.path,
                sha256=file.sha256,
                size=file.size,
                content=file.content,
            )
            for file in parsed.files
        )
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.uploaded",
            version=version,
            data={"content_hash": version.content_hash, "files": len(parsed.files)},
        )
    return version, True


# --- lifecycle --------------------------------------------------------------------------------


def skill_version_submit(*, tenant: Tenant, version: SkillVersion, actor: Actor) -> SkillVersion:
    """draft → in_review, and open a ``skill_publication`` review item for it."""
    with transaction.atomic():
        skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.IN_REVIEW)
        _refuse_if_source_deleted(locked)
        locked.status = VersionStatus.IN_REVIEW
        locked.submitted_at = timezone.now()
        locked.save(update_fields=["status", "submitted_at"])
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
        _audit(
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
    """in_review → approved by an admin who is not the author.

    ``review_item_id`` is set when the approval is a ``skill_publication``
    review decision: that item is being closed by the reviews app, and the
    one-open-item-per-target constraint means there is no other to close.
    Approved through the API or console instead, the open item is cancelled.
    """
    with transaction.atomic():
        _skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.APPROVED)
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
            _require_admin(actor, doing="approve a skill version")
        if (actor.kind, actor.id) == (locked.author_kind, locked.author_id):
            raise Problem(
                "author_cannot_approve",
                f"You uploaded version {locked.number}; another admin must approve it.",
                status_code=409,
            )
        locked.status = VersionStatus.APPROVED
        locked.approved_at = timezone.now()
        locked.approved_changes = changes
        for field, value in _actor_fields(actor, "approved_by").items():
            setattr(locked, field, value)
        locked.save(
            update_fields=[
                "status",
                "approved_at",
                "approved_changes",
                "approved_by_kind",
                "approved_by_id",
                "approved_by_label",
            ]
        )
        if review_item_id is None:
            review_cancel_for_target(
                tenant=tenant,
                target_type=REVIEW_TARGET,
                target_id=locked.pk,
                queue=Queue.SKILL_PUBLICATION,
            )
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.approved",
            version=locked,
            reason=reason.strip(),
            data={"changes": changes, "review_item": review_item_id},
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
    _require_admin(actor, doing="reject a skill version")
    reason = _require_reason(reason, doing="reject this version")
    with transaction.atomic():
        _skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.REJECTED)
        locked.status = VersionStatus.REJECTED
        locked.rejected_at = timezone.now()
        locked.reject_reason = reason[:1000]
        locked.save(update_fields=["status", "rejected_at", "reject_reason"])
        if review_item_id is None:
            review_cancel_for_target(
                tenant=tenant,
                target_type=REVIEW_TARGET,
                target_id=locked.pk,
                queue=Queue.SKILL_PUBLICATION,
            )
        _audit(
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
    """approved → published, and move ``production`` to it.

    Refused with ``evaluation_incomplete`` unless the latest result of every
    one of the six categories passed on this exact content hash.
    """
    _require_admin(actor, doing="publish a skill version")
    with transaction.atomic():
        skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.PUBLISHED)
        _refuse_if_source_deleted(locked)
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
        locked.status = VersionStatus.PUBLISHED
        locked.published_at = timezone.now()
        locked.save(update_fields=["status", "published_at"])
        reason = reason.strip() or f"publish v{locked.number}"
        move = _move_label(
            tenant=tenant,
            skill=skill,
            to=locked,
            actor=actor,
            reason=reason,
            cause=LabelMoveCause.PUBLISH,
        )
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.published",
            version=locked,
            reason=reason,
            data={"label_move": move.pk, "from": _number(move.from_version)},
        )
    return locked


def skill_rollback(
    *, tenant: Tenant, skill: Skill, to_number: int, actor: Actor, reason: str
) -> LabelMove:
    """Move ``production`` to another published version. Only the pointer moves."""
    _require_admin(actor, doing="roll a skill back")
    reason = _require_reason(reason, doing="roll back")
    with transaction.atomic():
        locked_skill = Skill.objects.select_for_update().get(tenant=tenant, pk=skill.pk)
        target = SkillVersion.objects.filter(
            tenant=tenant, skill=locked_skill, number=to_number
        ).first()
        if target is None:
            raise not_found("skill version")
        current = _label(tenant=tenant, skill=locked_skill)
        if target.status != VersionStatus.PUBLISHED:
            raise Problem(
                "rollback_target_invalid",
                f"Version {to_number} is {target.status}; production can only point at a "
                "published version that is neither deprecated nor revoked.",
                status_code=409,
                status=target.status,
            )
        if current is not None and current.version_id == target.pk:
            raise Problem(
                "rollback_target_invalid",
                f"Version {to_number} already is production.",
                status_code=409,
                status=target.status,
            )
        target.skill = locked_skill
        move = _move_label(
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
                "from": _number(move.from_version),
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
    _require_admin(actor, doing="revoke a skill version")
    reason = _require_reason(reason, doing="revoke this version")
    with transaction.atomic():
        skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.REVOKED)
        locked.status = VersionStatus.REVOKED
        locked.revoked_at = timezone.now()
        locked.revoke_reason = reason[:1000]
        locked.save(update_fields=["status", "revoked_at", "revoke_reason"])
        move = _production_falls_back(
            tenant=tenant, skill=skill, leaving=locked, actor=actor, reason=reason
        )
        review_cancel_for_target(
            tenant=tenant,
            target_type=REVIEW_TARGET,
            target_id=locked.pk,
            queue=Queue.SKILL_PUBLICATION,
        )
        instances = selectors.pins_recent_count(tenant=tenant, version=locked)
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.revoked",
            version=locked,
            reason=reason,
            data={
                "label_move": move.pk if move else None,
                "production_now": _number(move.to_version) if move else None,
                "instances_last_24h": instances,
            },
        )
        # Exact pins are cached too: every resolve must see the revoke at once.
        _bump_after_commit(skill)
    return RevokeResult(version=locked, label_move=move, instances_last_24h=instances)


def skill_version_deprecate(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str = ""
) -> SkillVersion:
    """published → deprecated: still loadable, with a ``Warning`` header on every load."""
    _require_admin(actor, doing="deprecate a skill version")
    reason = reason.strip()
    with transaction.atomic():
        skill, locked = _lock(tenant=tenant, version=version)
        _guard(locked, VersionStatus.DEPRECATED)
        locked.status = VersionStatus.DEPRECATED
        locked.deprecated_at = timezone.now()
        locked.deprecate_reason = reason[:1000]
        locked.save(update_fields=["status", "deprecated_at", "deprecate_reason"])
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.deprecated",
            version=locked,
            reason=reason,
        )
        _bump_after_commit(skill)
    return locked


# --- labels -----------------------------------------------------------------------------------


def _production_falls_back(
    *, tenant: Tenant, skill: Skill, leaving: SkillVersion, actor: Actor, reason: str
) -> LabelMove | None:
    """If ``leaving`` holds production, point it at the newest other published version.

    With none left the label is cleared, and a label resolve answers
    ``label_not_set`` rather than serve a version that may not run.
    """
    label = _label(tenant=tenant, skill=skill)
    if label is None or label.version_id != leaving.pk:
        return None
    fallback = (
        SkillVersion.objects.filter(tenant=tenant, skill=skill, status=VersionStatus.PUBLISHED)
        .exclude(pk=leaving.pk)
        .order_by("-number")
        .first()
    )
    return _move_label(
        tenant=tenant,
        skill=skill,
        to=fallback,
        actor=actor,
        reason=reason,
        cause=LabelMoveCause.REVOKE,
    )


def _label(*, tenant: Tenant, skill: Skill, name: str = PRODUCTION) -> SkillLabel | None:
    return (
        SkillLabel.objects.select_for_update().filter(tenant=tenant, skill=skill, name=name).first()
    )


def _number(version: SkillVersion | None) -> int | None:
    return version.number if version is not None else None


def _move_label(
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
    label = _label(tenant=tenant, skill=skill, name=name)
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
        **_actor_fields(actor, "actor"),
    )
    _bump_after_commit(skill)
    return move


# --- evaluations and pins ---------------------------------------------------------------------


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
) -> EvaluationRun:
    """Append one regression result with its cases. It counts only if ``content_hash`` is
    the version's, its evaluator is not the author, and its cases prove it (see
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
    if (actor.kind, actor.id) == (version.author_kind, version.author_id):
        raise Problem(
            "evaluator_is_author",
            f"You uploaded version {version.number}; its evaluation must come from an "
            "independent evaluator's token.",
            status_code=409,
        )
    details, environment, cases = details or {}, environment or {}, cases or []
    _check_cases(cases, passed=passed)
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
            independent=True,
            **_actor_fields(actor, "actor"),
        )
        EvaluationCase.objects.bulk_create(
            EvaluationCase(tenant=tenant, run=run, position=position, **case)
            for position, case in enumerate(cases)
        )
        _audit(
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
            },
        )
    return run


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


# --- tools and instantiation ------------------------------------------------------------------


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
    _require_admin(actor, doing="retire a tool")
    reason = _require_reason(reason, doing="retire this tool")
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
                    tenant=tenant, name=name, reason=reason[:1000], **_actor_fields(actor, "actor")
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
            skill, locked = _lock(tenant=tenant, version=version)
            previous = locked.status
            _guard(locked, VersionStatus.INCOMPATIBLE)
            locked.status = VersionStatus.INCOMPATIBLE
            locked.incompatible_at = timezone.now()
            locked.incompatible_reason = f"tool {name} retired: {reason}"[:1000]
            locked.save(update_fields=["status", "incompatible_at", "incompatible_reason"])
            move = _production_falls_back(
                tenant=tenant,
                skill=skill,
                leaving=locked,
                actor=actor,
                reason=locked.incompatible_reason,
            )
            review_cancel_for_target(
                tenant=tenant,
                target_type=REVIEW_TARGET,
                target_id=locked.pk,
                queue=Queue.SKILL_PUBLICATION,
            )
            _audit(
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
            _bump_after_commit(skill)
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


def skill_version_instantiate(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    bindings: dict[str, str],
    tools: list[str],
    capabilities: list[str],
) -> Instantiation:
    """Check a binding of the version's slots and the agent's tools; audit the answer.

    Binding a slot the skill does not declare, or anything that looks like a
    credential instead of a secret's name, is a 400 and records nothing.
    """
    if version.status == VersionStatus.REVOKED:
        raise selectors.version_revoked_problem(version)
    declared = {slot["slot"] for slot in version.manifest.get("credentials") or []}
    unknown = sorted(set(bindings) - declared)
    if unknown:
        raise Problem(
            "validation_error",
            f"{version.skill.slug} v{version.number} has no credential slot "
            f"{', '.join(unknown)}; its slots are {', '.join(sorted(declared)) or 'none'}.",
            errors={"bindings": [f"Unknown slot: {slot}" for slot in unknown]},
        )
    # The values only: a slot named `blog_token` bound to a name is no credential pair.
    if find_secrets_in_strings(bindings.values()):
        raise Problem(
            "secret_detected",
            "A binding holds what looks like a credential. Bind each slot to the name of a "
            "secret you hold elsewhere; memdesk never receives secret values.",
        )
    retired = frozenset(
        RetiredTool.objects.filter(
            tenant=tenant, name__in=version.manifest.get("tools") or []
        ).values_list("name", flat=True)
    )
    answer = check_instantiation(
        status=version.status,
        manifest=version.manifest,
        bindings=bindings,
        tools=frozenset(tools),
        environment_capabilities=frozenset(capabilities),
        token_capabilities=actor.capabilities,
        retired_tools=retired,
    )
    with transaction.atomic():
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.instantiated",
            version=version,
            data={
                "state": answer.state,
                "reasons": [reason.code for reason in answer.reasons],
                # Names of secrets, never values; the values never reach memdesk.
                "bindings": dict(sorted(bindings.items())),
            },
        )
    return answer


# --- drafts from experience -------------------------------------------------------------------


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
    """Draft a SKILL.md package from successful experience claims, with lineage to them.

    The claims must be this tenant's active experiences whose outcome was a
    success, at least ``MIN_SOURCES`` of them (one run is an anecdote, not a
    procedure). The package is uploaded through the same checks as any
    other, as a draft of ``slug`` (created if new) authored by ``actor``.
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
            "Only active experiences with a successful outcome can become a skill draft: "
            + ", ".join(f"{item['claim']} ({item['reason']})" for item in ineligible),
            status_code=409,
            claims=ineligible,
        )
    experiences = [
        Experience(
            claim_id=str(claim.pk),
            subject=claim.subject.key,
            predicate=claim.predicate,
            text=claim.text,
            value=claim.value,
        )
        for claim in sorted(claims, key=lambda claim: unique.index(str(claim.pk)))
    ]
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
        _audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.drafted_from_experience",
            version=version,
            data={"claims": unique, "created": created},
        )
    return Draft(version=version, created=created, claim_ids=unique)


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
            _audit(
                tenant=version.tenant,
                actor=Actor.system("deletion"),
                verb="skill_version.source_deleted",
                version=version,
                reason="a memory this draft was built from was deleted",
                data={"deletion": str(deletion_id)},
            )
    return len(flagged)


def _refuse_if_source_deleted(version: SkillVersion) -> None:
    if selectors.sources_deleted(version=version):
        raise Problem(
            "draft_source_deleted",
            f"Version {version.number} was drafted from a memory that has since been deleted; "
            "it cannot move towards production. Draft again from the memories that remain.",
            status_code=409,
        )
