"""Reads of skills; every function takes the tenant.

``skill_resolve`` is the hot path agents call before every run: it answers
from Redis (see ``skills.cache``) and touches PostgreSQL only on a miss.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from django.db.models import (
    Avg,
    Count,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Tenant
from accounts.selectors import persons_of
from common.problems import Problem, not_found
from memory.gate import experience_outcome
from memory.models import Claim, ClaimKind, ClaimStatus
from memory.selectors.claims import claims_visible
from skills.cache import cached_resolve
from skills.composition import Conflict, conflicts_between
from skills.models import (
    PRODUCTION,
    DraftSource,
    EvaluationCase,
    EvaluationCategory,
    EvaluationRun,
    LabelMove,
    LoadLevel,
    RetiredTool,
    Skill,
    SkillApproval,
    SkillFile,
    SkillLabel,
    SkillLoad,
    SkillPin,
    SkillVersion,
    VersionStatus,
    approvals_required,
)
from skills.package.diffs import files_unified_diff, manifest_diff

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


@dataclass(frozen=True)
class MatrixCell:
    category: str
    label: str
    run: EvaluationRun | None
    # Why a passing run does not count: not_independent, no_cases, package_cases_missing.
    doubts: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        if self.run is None:
            return "missing"
        if not self.run.passed:
            return "failed"
        return "unverified" if self.doubts else "passed"


@dataclass(frozen=True)
class EvaluationMatrix:
    """The latest result per category on one content hash."""

    content_hash: str
    cells: tuple[MatrixCell, ...]
    # Results recorded against another hash: shown, never counted.
    other_hash_runs: int

    def _in(self, state: str) -> list[str]:
        return [cell.category for cell in self.cells if cell.state == state]

    @property
    def missing(self) -> list[str]:
        return self._in("missing")

    @property
    def failed(self) -> list[str]:
        return self._in("failed")

    @property
    def unverified(self) -> list[str]:
        return self._in("unverified")

    @property
    def complete(self) -> bool:
        return all(cell.state == "passed" for cell in self.cells)


def _doubts(
    run: EvaluationRun, *, package_cases: set[str], independent_person: bool
) -> tuple[str, ...]:
    """Why a passing run cannot be trusted, if it cannot."""
    doubts = []
    if not run.independent or not independent_person:
        doubts.append("not_independent")
    ran = {case.case_id for case in run.cases.all()}
    if not ran:
        doubts.append("no_cases")
    elif package_cases - ran:
        doubts.append("package_cases_missing")
    return tuple(doubts)


def _is_other_person(evaluator: str, *, author: str) -> bool:
    # A token nobody owns might be the author's: it is never a second pair of eyes.
    return evaluator != author and not evaluator.startswith("token:")


def evaluation_matrix(*, tenant: Tenant, version: SkillVersion) -> EvaluationMatrix:
    """The regression matrix for exactly this version's content hash.

    The *latest* run per category decides: a category that passed and later
    failed on the same hash is failed, because the later run saw more. A
    passing run counts only when it is trusted: posted by an independent
    evaluator (a known person other than the author), with its cases (each
    passing all five checks), covering every case the package's
    evals/evals.json gives for its category. Otherwise the category is
    ``unverified``.
    """
    latest: dict[str, EvaluationRun] = {}
    other_hash_runs = 0
    runs = (
        EvaluationRun.objects.filter(tenant=tenant, version=version)
        .select_related("version")
        .prefetch_related("cases")
        .order_by("-at", "-id")
    )
    for run in runs:
        if run.content_hash != version.content_hash:
            other_hash_runs += 1
        else:
            latest.setdefault(run.category, run)
    # Who the evaluators are is read again here, so a run a token of the author's own
    # posted before people were compared (or by a token nobody owns) never counts.
    persons = persons_of(
        tenant=tenant,
        actors=[(version.author_kind, version.author_id)]
        + [(run.actor_kind, run.actor_id) for run in latest.values()],
    )
    author = persons[(version.author_kind, version.author_id)]
    package_cases: dict[str, set[str]] = {}
    for case in version.manifest.get("evals") or []:
        package_cases.setdefault(case["category"], set()).add(case["id"])
    cells = []
    for category in EvaluationCategory:
        deciding = latest.get(category.value)
        doubts = (
            _doubts(
                deciding,
                package_cases=package_cases.get(category.value, set()),
                independent_person=_is_other_person(
                    persons[(deciding.actor_kind, deciding.actor_id)], author=author
                ),
            )
            if deciding is not None and deciding.passed
            else ()
        )
        cells.append(
            MatrixCell(category=category.value, label=category.label, run=deciding, doubts=doubts)
        )
    return EvaluationMatrix(
        content_hash=version.content_hash, cells=tuple(cells), other_hash_runs=other_hash_runs
    )


@dataclass(frozen=True)
class CostPoint:
    number: int
    cases: int
    passed: int
    mean_tokens: float
    mean_seconds: float
    mean_tool_calls: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0


def cost_curve(*, tenant: Tenant, skill: Skill) -> list[CostPoint]:
    """Per version, the cases run on its own content hash: how many passed, at what cost.

    A version that passes more often but costs far more tokens must
    be compared on this curve before it becomes the default. One query.
    """
    rows = (
        EvaluationCase.objects.filter(
            tenant=tenant,
            run__version__skill=skill,
            run__content_hash=F("run__version__content_hash"),
        )
        .values("run__version__number")
        .annotate(
            cases=Count("id"),
            passed=Count("id", filter=Q(passed=True)),
            mean_tokens=Avg("cost_tokens"),
            mean_seconds=Avg("cost_seconds"),
            mean_tool_calls=Avg("cost_tool_calls"),
        )
        .order_by("run__version__number")
    )
    return [
        CostPoint(
            number=row["run__version__number"],
            cases=row["cases"],
            passed=row["passed"],
            mean_tokens=float(row["mean_tokens"] or 0),
            mean_seconds=float(row["mean_seconds"] or 0),
            mean_tool_calls=float(row["mean_tool_calls"] or 0),
        )
        for row in rows
    ]


def evaluation_runs(*, tenant: Tenant, version: SkillVersion) -> QuerySet[EvaluationRun]:
    return (
        EvaluationRun.objects.filter(tenant=tenant, version=version)
        .select_related("version")
        .prefetch_related("cases")
    )


# --- capability and risk changes --------------------------------------------------------------


def sensitive_changes(
    *, old_manifest: dict[str, Any] | None, new_manifest: dict[str, Any]
) -> list[dict[str, Any]]:
    """The changes that need an admin's eye: each capability added, and risk raised to high.

    ``old_manifest`` None means there is nothing to compare with (a first
    version), so every declared capability counts as added.
    """
    changes = [
        change
        for change in manifest_diff(old=old_manifest or {}, new=new_manifest)
        if change["flag"] == "capability_added"
    ]
    old_risk = (old_manifest or {}).get("risk")
    new_risk = new_manifest.get("risk")
    if new_risk == "high" and old_risk != "high":
        changes.append({"field": "risk", "old": old_risk, "new": new_risk, "flag": "risk_raised"})
    return changes


def sensitive_changes_against_production(
    *, tenant: Tenant, version: SkillVersion
) -> list[dict[str, Any]]:
    baseline = production_version(tenant=tenant, skill=version.skill)
    if baseline is not None and baseline.pk == version.pk:
        return []
    return sensitive_changes(
        old_manifest=baseline.manifest if baseline is not None else None,
        new_manifest=version.manifest,
    )


@dataclass(frozen=True)
class VersionDiff:
    old: SkillVersion
    new: SkillVersion
    manifest: list[dict[str, Any]]
    files: list[dict[str, str]]
    old_texts: dict[str, str]
    new_texts: dict[str, str]

    @property
    def capabilities_added(self) -> list[str]:
        return [c["new"] for c in self.manifest if c["flag"] == "capability_added"]

    @property
    def capabilities_removed(self) -> list[str]:
        return [c["old"] for c in self.manifest if c["flag"] == "capability_removed"]

    @property
    def risk_change(self) -> dict[str, Any] | None:
        return next((c for c in self.manifest if c["field"] == "risk"), None)

    @property
    def flags(self) -> list[str]:
        return sorted({c["flag"] for c in self.manifest if c["flag"]})


def version_diff(*, tenant: Tenant, old: SkillVersion, new: SkillVersion) -> VersionDiff:
    old_texts = version_file_texts(tenant=tenant, version=old)
    new_texts = version_file_texts(tenant=tenant, version=new)
    return VersionDiff(
        old=old,
        new=new,
        manifest=manifest_diff(old=old.manifest, new=new.manifest),
        files=files_unified_diff(old_files=old_texts, new_files=new_texts),
        old_texts=old_texts,
        new_texts=new_texts,
    )


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


# --- drafts from experience -------------------------------------------------------------------

DRAFT_CANDIDATES_SHOWN = 200


def experiences_for_draft(*, tenant: Tenant, claim_ids: list[str]) -> list[Claim]:
    """The named claims of this tenant (any kind and status, to say why one is refused)."""
    valid = []
    for claim_id in claim_ids:
        try:
            valid.append(uuid.UUID(claim_id))
        except ValueError:
            continue
    return list(
        claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(pk__in=valid)
        .exclude(status=ClaimStatus.ERASED)
    )


def draft_ineligibility(claim: Claim) -> str | None:
    """Why a claim cannot seed a skill draft, or None when it can."""
    if claim.kind != ClaimKind.EXPERIENCE:
        return "not_an_experience"
    if claim.status != ClaimStatus.ACTIVE:
        return f"not_active ({claim.status})"
    if experience_outcome(claim.value) != "success":
        return "outcome_not_success"
    return None


def draft_candidates(*, tenant: Tenant) -> list[Claim]:
    """Active experiences with a successful outcome, newest first: what an editor picks from."""
    return list(
        claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(kind=ClaimKind.EXPERIENCE, status=ClaimStatus.ACTIVE, value__outcome="success")
        .order_by("-recorded_at")[:DRAFT_CANDIDATES_SHOWN]
    )


def draft_sources(*, tenant: Tenant, version: SkillVersion) -> QuerySet[DraftSource]:
    return DraftSource.objects.filter(tenant=tenant, version=version).order_by("id")


def draft_source_claims(*, tenant: Tenant, sources: list[DraftSource]) -> dict[str, Claim]:
    """The claims a draft names that still hold content, by id; erased ones are left out."""
    return {
        str(claim.pk): claim
        for claim in claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(pk__in=[source.claim_id for source in sources])
        .exclude(status=ClaimStatus.ERASED)
    }


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


@dataclass(frozen=True)
class ApprovalProgress:
    """Who approved a version and how many approvals it needs ("1 of 2")."""

    approvals: list[SkillApproval]
    required: int

    @property
    def missing(self) -> int:
        return max(0, self.required - len(self.approvals))


def skill_approvals(*, tenant: Tenant, version: SkillVersion) -> QuerySet[SkillApproval]:
    return SkillApproval.objects.filter(tenant=tenant, version=version).order_by("at", "id")


def approval_progress(*, tenant: Tenant, version: SkillVersion) -> ApprovalProgress:
    """In review, what production would gain decides how many must approve; after, what the
    approvers signed off on (``approved_changes``)."""
    if version.status in {VersionStatus.DRAFT, VersionStatus.IN_REVIEW}:
        changes = sensitive_changes_against_production(tenant=tenant, version=version)
    else:
        changes = version.approved_changes
    return ApprovalProgress(
        approvals=list(skill_approvals(tenant=tenant, version=version)),
        required=approvals_required(changes),
    )
