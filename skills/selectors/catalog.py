"""The catalog an agent searches (level 1: names and descriptions), the loads it
recorded, and the tools that were retired."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    QuerySet,
    Sum,
)

from accounts.models import Tenant
from skills.composition import Conflict, conflicts_between
from skills.models import (
    PRODUCTION,
    LoadLevel,
    RetiredTool,
    SkillLabel,
    SkillLoad,
    SkillVersion,
)
from skills.selectors.versions import LOADABLE_STATUSES

CATALOG_MAX_WORDS = 20


_WORD = re.compile(r"\w{2,}")


# Words every task description has; matching on them would list every skill.
_STOP_WORDS = frozenset(
    [
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "in",
        "into",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "that",
        "the",
        "this",
        "to",
        "use",
        "using",
        "we",
        "what",
        "when",
        "with",
        "you",
        "your",
    ]
)


def catalog_words(query: str) -> list[str]:
    """The task words a catalog query matches on: lowercased, unique, at most 20."""
    words = [word for word in _WORD.findall(query.casefold()) if word not in _STOP_WORDS]
    return list(dict.fromkeys(words))[:CATALOG_MAX_WORDS]


def _matches(word: str, text: str, tokens: frozenset[str]) -> bool:
    # Whole words for scripts with spaces; unsegmented scripts (Chinese) by substring.
    return word in tokens if word.isascii() else word in text


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
    score: int


@dataclass(frozen=True)
class Exclusion:
    slug: str
    number: int
    reason: str
    missing_tools: list[str]


@dataclass(frozen=True)
class Catalog:
    entries: list[CatalogEntry]
    excluded: list[Exclusion]
    conflicts: list[Conflict]


def _catalog_text(slug: str, name: str, manifest: dict[str, Any]) -> str:
    triggers = " ".join(str(trigger) for trigger in manifest.get("triggers") or [])
    return " ".join([slug, name, manifest.get("description") or "", triggers]).casefold()


def skill_catalog(
    *,
    tenant: Tenant,
    words: list[str],
    tools: frozenset[str] | None,
    loaded: list[str],
    limit: int,
) -> Catalog:
    """Production versions matching the task words, ranked by how many they contain.

    No words: every production skill. ``tools`` is what the agent says it has
    (None: it did not say); a skill needing any other tool is left out and
    listed in ``excluded`` with the missing tools. Conflicts are checked among
    the entries returned and the skills the agent already ``loaded``. One
    query: the production label joined to its version.
    """
    rows = (
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
        )
    )
    matched: list[CatalogEntry] = []
    excluded: list[Exclusion] = []
    loaded_manifests: dict[str, dict[str, Any]] = {}
    for skill_id, version_id, slug, name, number, content_hash, status, manifest in rows:
        if slug in loaded:
            loaded_manifests[slug] = manifest
        text = _catalog_text(slug, name, manifest)
        tokens = frozenset(_WORD.findall(text))
        score = sum(1 for word in words if _matches(word, text, tokens))
        if words and score == 0:
            continue
        missing = sorted(set(manifest.get("tools") or []) - tools) if tools is not None else []
        if missing:
            excluded.append(Exclusion(slug, number, "tools_unavailable", missing))
            continue
        matched.append(
            CatalogEntry(
                skill_id, version_id, slug, name, number, content_hash, status, manifest, score
            )
        )
    matched.sort(key=lambda entry: (-entry.score, entry.slug))
    entries = matched[:limit]
    together = {**loaded_manifests, **{entry.slug: entry.manifest for entry in entries}}
    return Catalog(entries=entries, excluded=excluded, conflicts=conflicts_between(together))


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
