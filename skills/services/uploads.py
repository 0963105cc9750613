"""Creating a skill and uploading a version's package."""

from __future__ import annotations

import re
from typing import Any

from django.db import IntegrityError, transaction

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from skills.models import (
    SLUG_PATTERN,
    RetiredTool,
    Skill,
    SkillFile,
    SkillVersion,
)
from skills.package import parse_package
from skills.package.errors import HTTP_STATUS as PACKAGE_HTTP_STATUS
from skills.package.errors import PackageError
from skills.services.base import (
    RESERVED_SLUGS,
    actor_fields,
    audit,
    package_limits,
    scan_budget,
    upload_max_bytes,
)


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
                    **actor_fields(actor, "created_by"),
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
        parsed = parse_package(data=data, slug=skill.slug, budget=scan_budget(), **package_limits())
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
            **actor_fields(actor, "author"),
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
        audit(
            tenant=tenant,
            actor=actor,
            verb="skill_version.uploaded",
            version=version,
            data={"content_hash": version.content_hash, "files": len(parsed.files)},
        )
    return version, True
