"""The catalog an agent searches (level 1: skills found by meaning, without their bodies),
the loads it recorded, and the tools that were retired."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, Q, QuerySet, Sum

from accounts.models import Tenant
from skills.composition import Conflict, conflicts_between
from skills.discovery import Candidate, TaskRecord, lexical_text, rank, task_words
from skills.embedding import query_vector, unpack
from skills.instantiation import TOKEN_CAPABILITIES
from skills.models import (
    PRODUCTION,
    EvaluationCase,
    EvaluationCategory,
    EvaluationKind,
    LoadLevel,
    RetiredTool,
    SkillLabel,
    SkillLoad,
    SkillUseReport,
    SkillVersion,
)
from skills.selectors.instances import Grants
from skills.selectors.versions import LOADABLE_STATUSES
from skills.usage_models import UseOutcome

CATALOG_MAX_WORDS = 20


def catalog_words(query: str) -> list[str]:
    """The task words a catalog query matches on: lowercased, unique, at most 20."""
    return task_words(query, CATALOG_MAX_WORDS)


@dataclass(frozen=True)
class CatalogEntry:
    """Level 1 of a skill: enough to decide whether to load it, never its body."""

    skill_id: int
    version_id: int
    slug: str
    name: str
    number: int
    content_hash: str
    status: str
    manifest: dict[str, Any]
    score: float
    why: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Exclusion:
    slug: str
    number: int
    reason: str
    missing_tools: list[str]
    missing_capabilities: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Catalog:
    entries: list[CatalogEntry]
    excluded: list[Exclusion]
    conflicts: list[Conflict]
    semantic: str = "unavailable"


def _exclusion(
    slug: str,
    number: int,
    manifest: dict[str, Any],
    *,
    said_tools: frozenset[str] | None,
    grants: Grants | None,
    token_capabilities: frozenset[str],
) -> Exclusion | None:
    """Why an agent cannot run this skill at all, if it cannot: then it is not offered."""
    tools = set(manifest.get("tools") or [])
    capabilities = set(manifest.get("capabilities") or [])
    if grants is not None:
        if beyond := sorted((capabilities & TOKEN_CAPABILITIES) - token_capabilities):
            return Exclusion(slug, number, "capability_exceeds_token", [], beyond)
        if missing := sorted(tools - grants.tools):
            return Exclusion(slug, number, "tools_not_granted", missing)
        if missing := sorted(capabilities - TOKEN_CAPABILITIES - grants.capabilities):
            return Exclusion(slug, number, "capability_not_granted", [], missing)
    if said_tools is not None and (missing := sorted(tools - said_tools)):
        return Exclusion(slug, number, "tools_unavailable", missing)
    return None


def _task_records(
    *, tenant: Tenant, version_ids: list[int], task_type: str
) -> dict[int, TaskRecord]:
    """Per version: use reports on the task type, and whether its normal-category cases
    beat their no-skill baseline (two queries for the whole catalog)."""
    reports: dict[int, dict[str, int]] = {}
    if task_type:
        for row in (
            SkillUseReport.objects.filter(
                tenant=tenant, version_id__in=version_ids, task_type=task_type
            )
            .values("version_id")
            .annotate(
                successes=Count("id", filter=Q(outcome=UseOutcome.SUCCESS)),
                failures=Count("id", filter=Q(outcome=UseOutcome.FAILURE)),
                negative=Count("id", filter=Q(negative_transfer=True)),
            )
        ):
            reports[row["version_id"]] = row
    baseline = {
        row["run__version_id"]: row
        for row in EvaluationCase.objects.filter(
            tenant=tenant,
            run__version_id__in=version_ids,
            run__kind=EvaluationKind.REGRESSION,
            run__category=EvaluationCategory.NORMAL,
            run__content_hash=F("run__version__content_hash"),
        )
        .values("run__version_id")
        .annotate(
            with_skill=Count("id", filter=Q(passed=True)),
            without_skill=Count("id", filter=Q(baseline_passed=True)),
            no_baseline=Count("id", filter=Q(baseline_passed__isnull=True)),
        )
    }
    records = {}
    for version_id in version_ids:
        report = reports.get(version_id, {})
        evaluation = baseline.get(version_id)
        records[version_id] = TaskRecord(
            successes=report.get("successes", 0),
            failures=report.get("failures", 0),
            negative_transfers=report.get("negative", 0),
            beats_baseline=bool(
                evaluation
                and not evaluation["no_baseline"]
                and evaluation["with_skill"] > evaluation["without_skill"]
            ),
        )
    return records


def skill_catalog(
    *,
    tenant: Tenant,
    query: str,
    tools: frozenset[str] | None,
    loaded: list[str],
    limit: int,
    grants: Grants | None = None,
    token_capabilities: frozenset[str] = frozenset(),
    task_type: str = "",
) -> Catalog:
    """Production versions about the task (``query``), best first (``skills.discovery``).

    ``grants`` (an agent's) leave out what the token may not run: a memdesk
    capability it lacks, a tool or runtime capability it was not granted; ``tools``
    (what the agent says it has, None: it did not say) leaves out skills needing
    another. Each left-out skill is listed in ``excluded`` with the reason.
    ``task_type`` brings in how each skill did on such tasks. Conflicts are checked
    among the entries returned and the skills the agent already ``loaded``.
    """
    rows = list(
        SkillLabel.objects.filter(
            tenant=tenant, name=PRODUCTION, version__status__in=LOADABLE_STATUSES
        )
        .order_by("skill__slug")
        .values_list(
            "skill_id",
            "version_id",
            "skill__slug",
            "skill__name",
            "version__number",
            "version__content_hash",
            "version__status",
            "version__manifest",
            "version__embedding__model",
            "version__embedding__packed",
        )
    )
    words = catalog_words(query)
    asked = query_vector(query) if words else None
    records = _task_records(
        tenant=tenant, version_ids=[row[1] for row in rows], task_type=task_type
    )
    candidates: list[Candidate] = []
    by_slug: dict[str, tuple[Any, ...]] = {}
    excluded: list[Exclusion] = []
    loaded_manifests: dict[str, dict[str, Any]] = {}
    for row in rows:
        skill_id, version_id, slug, name, number, _, _, manifest, model, packed = row
        if slug in loaded:
            loaded_manifests[slug] = manifest
        exclusion = _exclusion(
            slug,
            number,
            manifest,
            said_tools=tools,
            grants=grants,
            token_capabilities=token_capabilities,
        )
        vector = (
            unpack(bytes(packed)) if asked is not None and packed and model == asked[0] else None
        )
        candidate = Candidate(
            slug,
            manifest,
            lexical_text(slug=slug, name=name, manifest=manifest),
            vector,
            records[version_id],
        )
        if not rank([candidate], query_vector=asked[1] if asked else None, words=words):
            continue
        if exclusion is not None:
            excluded.append(exclusion)
            continue
        by_slug[slug] = row
        candidates.append(candidate)
    ranked = rank(candidates, query_vector=asked[1] if asked is not None else None, words=words)[
        :limit
    ]
    entries = []
    for entry in ranked:
        skill_id, version_id, slug, name, number, content_hash, status, manifest, *_ = by_slug[
            entry.key
        ]
        entries.append(
            CatalogEntry(
                skill_id,
                version_id,
                slug,
                name,
                number,
                content_hash,
                status,
                manifest,
                entry.score,
                entry.why,
            )
        )
    together = {**loaded_manifests, **{entry.slug: entry.manifest for entry in entries}}
    return Catalog(
        entries=entries,
        excluded=excluded,
        conflicts=conflicts_between(together),
        semantic="on" if asked is not None else "unavailable",
    )


def version_loads(*, tenant: Tenant, version: SkillVersion) -> QuerySet[SkillLoad]:
    return SkillLoad.objects.filter(tenant=tenant, version=version).order_by(
        "level", "-count", "loader_label"
    )


def version_load_totals(*, tenant: Tenant, version: SkillVersion) -> dict[str, int]:
    """Loads of a version per level, e.g. {"catalog": 12, "body": 4, "file": 1}."""
    totals = dict(
        SkillLoad.objects.filter(tenant=tenant, version=version)
        .values("level")
        .annotate(n=Sum("count"))
        .values_list("level", "n")
    )
    return {level.name.lower(): int(totals.get(level.value, 0)) for level in LoadLevel}


def retired_tools(*, tenant: Tenant) -> QuerySet[RetiredTool]:
    return RetiredTool.objects.filter(tenant=tenant).order_by("-at", "-id")
