"""Reads of skills; every function takes the tenant.

``skill_resolve`` is the hot path agents call before every run: it answers
from Redis (see ``skills.cache``) and touches PostgreSQL only on a miss.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from django.db.models import (
    Count,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Tenant
from common.problems import Problem, not_found
from skills.cache import cached_resolve
from skills.models import (
    PRODUCTION,
    DraftSource,
    LabelMove,
    Skill,
    SkillFile,
    SkillLabel,
    SkillPin,
    SkillVersion,
    VersionStatus,
)

PIN_WINDOW = timedelta(hours=24)
LOADABLE_STATUSES = (VersionStatus.PUBLISHED, VersionStatus.DEPRECATED)


# --- skills and versions ----------------------------------------------------------------------


def skill_list(*, tenant: Tenant) -> QuerySet[Skill]:
    """Skills with their production version and latest version, in one query."""
    production = SkillLabel.objects.filter(tenant=tenant, skill=OuterRef("pk"), name=PRODUCTION)
    latest = SkillVersion.objects.filter(tenant=tenant, skill=OuterRef("pk")).order_by("-number")
    in_review = (
        SkillVersion.objects.filter(
            tenant=tenant, skill=OuterRef("pk"), status=VersionStatus.IN_REVIEW
        )
        .order_by()
        .values("skill")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Skill.objects.filter(tenant=tenant)
        .annotate(
            production_number=Subquery(production.values("version__number")[:1]),
            production_status=Subquery(production.values("version__status")[:1]),
            production_hash=Subquery(production.values("version__content_hash")[:1]),
            production_since=Subquery(production.values("moved_at")[:1]),
            latest_number=Subquery(latest.values("number")[:1]),
            latest_status=Subquery(latest.values("status")[:1]),
            in_review_count=Coalesce(Subquery(in_review, output_field=IntegerField()), Value(0)),
        )
        .order_by("slug")
    )


def skill_get(*, tenant: Tenant, slug: str) -> Skill | None:
    return skill_list(tenant=tenant).filter(slug=slug).first()


def skill_get_or_404(*, tenant: Tenant, slug: str) -> Skill:
    skill = skill_get(tenant=tenant, slug=slug)
    if skill is None:
        raise not_found("skill")
    return skill


def skill_versions(*, tenant: Tenant, skill: Skill) -> QuerySet[SkillVersion]:
    return SkillVersion.objects.filter(tenant=tenant, skill=skill).select_related("skill")


def skill_version_get(*, tenant: Tenant, skill: Skill, number: int) -> SkillVersion | None:
    return skill_versions(tenant=tenant, skill=skill).filter(number=number).first()


def skill_version_get_or_404(*, tenant: Tenant, skill: Skill, number: int) -> SkillVersion:
    version = skill_version_get(tenant=tenant, skill=skill, number=number)
    if version is None:
        raise not_found("skill version")
    return version


def skill_version_by_id(*, tenant: Tenant, version_id: int) -> SkillVersion | None:
    return SkillVersion.objects.select_related("skill").filter(tenant=tenant, pk=version_id).first()


def production_version(*, tenant: Tenant, skill: Skill) -> SkillVersion | None:
    label = (
        SkillLabel.objects.filter(tenant=tenant, skill=skill, name=PRODUCTION)
        .select_related("version__skill")
        .first()
    )
    return label.version if label is not None else None


def version_files(*, tenant: Tenant, version: SkillVersion) -> QuerySet[SkillFile]:
    """The file listing; the (possibly large) content column is left unread."""
    return (
        SkillFile.objects.filter(tenant=tenant, version=version).defer("content").order_by("path")
    )


def version_file_get(*, tenant: Tenant, version: SkillVersion, path: str) -> SkillFile | None:
    return SkillFile.objects.filter(tenant=tenant, version=version, path=path).first()


def version_file_texts(*, tenant: Tenant, version: SkillVersion) -> dict[str, str]:
    """Every file as text, for diffs; binary assets stand in as their digest."""
    texts: dict[str, str] = {}
    if content_withheld(version=version):
        listing = SkillFile.objects.filter(tenant=tenant, version=version).values_list("path")
        return {
            path: "withheld: a memory this draft was built from was deleted\n"
            for (path,) in listing
        }
    for file in SkillFile.objects.filter(tenant=tenant, version=version).order_by("path"):
        content = bytes(file.content)
        try:
            texts[file.path] = content.decode("utf-8")
        except UnicodeDecodeError:
            texts[file.path] = f"binary file sha256:{file.sha256} ({file.size} bytes)\n"
    return texts


# --- evaluation matrix ------------------------------------------------------------------------


# --- capability and risk changes --------------------------------------------------------------


# --- labels and pins --------------------------------------------------------------------------


def label_history(*, tenant: Tenant, skill: Skill, label: str) -> QuerySet[LabelMove]:
    return (
        LabelMove.objects.filter(tenant=tenant, skill=skill, label=label)
        .select_related("skill", "from_version", "to_version")
        .order_by("-at", "-id")
    )


def pins_recent_count(*, tenant: Tenant, version: SkillVersion) -> int:
    """Instances that loaded this version in the last 24 hours."""
    since = timezone.now() - PIN_WINDOW
    return SkillPin.objects.filter(tenant=tenant, version=version, last_seen_at__gte=since).count()


def pins_recent_by_version(*, tenant: Tenant, skill: Skill) -> dict[int, int]:
    since = timezone.now() - PIN_WINDOW
    rows = (
        SkillPin.objects.filter(tenant=tenant, skill=skill, last_seen_at__gte=since)
        .values("version_id")
        .annotate(n=Count("id"))
    )
    return {row["version_id"]: row["n"] for row in rows}


def version_pins(*, tenant: Tenant, version: SkillVersion) -> QuerySet[SkillPin]:
    return SkillPin.objects.filter(tenant=tenant, version=version).order_by("-last_seen_at")


# --- resolve ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedVersion:
    """What an agent loads: a version's content and file listing, no file bodies."""

    skill_id: int
    version_id: int
    slug: str
    number: int
    status: str
    content_hash: str
    manifest: dict[str, Any]
    body: str
    files: list[dict[str, Any]]
    label: str | None
    deprecated_at: str | None
    deprecate_reason: str


def version_revoked_problem(version: SkillVersion) -> Problem:
    revoked_at = version.revoked_at.isoformat() if version.revoked_at else None
    return _version_revoked(slug=version.skill.slug, number=version.number, revoked_at=revoked_at)


def _version_revoked(*, slug: str, number: int, revoked_at: str | None) -> Problem:
    return Problem(
        "version_revoked",
        f"Version {number} of {slug} was revoked and may not be loaded, pinned or not. "
        f"Resolve the production label for the current version.",
        status_code=410,
        number=number,
        revoked_at=revoked_at,
    )


def skill_resolve(
    *, tenant: Tenant, slug: str, label: str | None = None, number: int | None = None
) -> ResolvedVersion:
    """The version an agent should load, by label (default production) or exact number.

    Raises 404 ``not_found`` / ``label_not_set``, 409 ``version_not_published``
    and 410 ``version_revoked`` (exact pins included). Answers, revocations
    included, are cached per skill generation; see ``skills.cache``.
    """
    selector = f"version:{number}" if number is not None else f"label:{label or PRODUCTION}"
    cached = cached_resolve(
        tenant_id=tenant.pk,
        slug=slug,
        selector=selector,
        compute=lambda: _resolve_uncached(tenant=tenant, slug=slug, label=label, number=number),
    )
    if "revoked" in cached:
        raise _version_revoked(**cached["revoked"])
    return ResolvedVersion(**cached)


def _resolve_uncached(
    *, tenant: Tenant, slug: str, label: str | None, number: int | None
) -> dict[str, Any]:
    skill = Skill.objects.filter(tenant=tenant, slug=slug).first()
    if skill is None:
        raise not_found("skill")
    label_name: str | None = None
    if number is None:
        label_name = label or PRODUCTION
        pointer = (
            SkillLabel.objects.filter(tenant=tenant, skill=skill, name=label_name)
            .select_related("version")
            .first()
        )
        if pointer is None or pointer.version is None:
            raise Problem(
                "label_not_set",
                f"{slug} has no {label_name} version. Publish a version first.",
                status_code=404,
                label=label_name,
            )
        version = pointer.version
    else:
        found = skill_version_get(tenant=tenant, skill=skill, number=number)
        if found is None:
            raise not_found("skill version")
        version = found
    if version.status == VersionStatus.REVOKED:
        revoked_at = version.revoked_at.isoformat() if version.revoked_at else None
        return {"revoked": {"slug": slug, "number": version.number, "revoked_at": revoked_at}}
    if version.status == VersionStatus.INCOMPATIBLE:
        raise Problem(
            "version_incompatible",
            f"Version {version.number} of {slug} needs a tool that was retired: "
            f"{version.incompatible_reason}. Resolve the production label for a version "
            "that runs.",
            status_code=409,
            # `status` is the problem's HTTP status (RFC 9457), never the version's.
            version_status=version.status,
        )
    if version.status not in LOADABLE_STATUSES:
        raise Problem(
            "version_not_published",
            f"Version {version.number} of {slug} is {version.status}; only published "
            "versions can be loaded. Evaluators read its files under /versions/{n}/files/.",
            status_code=409,
            version_status=version.status,
        )
    files = [
        {"path": file.path, "sha256": file.sha256, "size": file.size}
        for file in version_files(tenant=tenant, version=version)
    ]
    return asdict(
        ResolvedVersion(
            skill_id=skill.pk,
            version_id=version.pk,
            slug=slug,
            number=version.number,
            status=version.status,
            content_hash=version.content_hash,
            manifest=version.manifest,
            body=version.body,
            files=files,
            label=label_name,
            deprecated_at=version.deprecated_at.isoformat() if version.deprecated_at else None,
            deprecate_reason=version.deprecate_reason,
        )
    )


# --- catalog (level 1) and loads --------------------------------------------------------------


# --- drafts from experience -------------------------------------------------------------------


def sources_deleted(*, version: SkillVersion) -> bool:
    return DraftSource.objects.filter(
        tenant_id=version.tenant_id, version=version, source_deleted_at__isnull=False
    ).exists()


def content_withheld(*, version: SkillVersion) -> bool:
    """A draft whose source memory was deleted is served to nobody.

    Forgetting propagates to skill candidates (docs/privacy.md): the rows are
    immutable and keep their bytes, but neither the API nor the console hands
    out the body or a file of such a version. A version already published
    stays loadable (agents run it) and is flagged for an admin to revoke.
    """
    return version.status not in LOADABLE_STATUSES and sources_deleted(version=version)
