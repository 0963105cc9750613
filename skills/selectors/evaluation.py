"""What a version's evaluation says: the regression matrix on its exact content hash, the
cost curve across versions, what it changes in capabilities and risk, and its diff."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import (
    Avg,
    Count,
    F,
    Q,
    QuerySet,
)

from accounts.models import Tenant
from accounts.selectors import persons_of
from skills.models import (
    EvaluationCase,
    EvaluationCategory,
    EvaluationKind,
    EvaluationRun,
    Skill,
    SkillApproval,
    SkillVersion,
    VersionStatus,
    approvals_required,
)
from skills.package.diffs import files_unified_diff, manifest_diff
from skills.selectors.versions import production_version, version_file_texts


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
        EvaluationRun.objects.filter(tenant=tenant, version=version, kind=EvaluationKind.REGRESSION)
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
class BaselineComparison:
    """The normal category's deciding run against the same cases run without the skill.

    ``verdict`` is ``beats`` or why not: ``no_run``, ``no_baseline`` (a case without
    one), ``not_better`` (the skill passes no more cases than the no-skill path and, on a
    tie, is not cheaper) or ``too_costly`` (mean tokens over ``cost_factor`` times the
    baseline's).
    """

    verdict: str
    cases: int
    passed: int
    baseline_passed: int
    mean_tokens: float
    baseline_mean_tokens: float
    cost_factor: float

    @property
    def beats(self) -> bool:
        return self.verdict == "beats"


def baseline_comparison(*, matrix: EvaluationMatrix, cost_factor: float) -> BaselineComparison:
    cell = next(cell for cell in matrix.cells if cell.category == EvaluationCategory.NORMAL)
    cases = list(cell.run.cases.all()) if cell.run is not None else []
    with_baseline = [case for case in cases if case.baseline_passed is not None]
    count = len(cases)

    def mean(values: list[int]) -> float:
        return sum(values) / len(values) if values else 0.0

    mean_tokens = mean([case.cost_tokens for case in cases])
    baseline_tokens = mean([case.baseline_cost_tokens or 0 for case in with_baseline])
    passed = sum(case.passed for case in cases)
    baseline_passed = sum(bool(case.baseline_passed) for case in with_baseline)
    if cell.run is None or not cases:
        verdict = "no_run"
    elif len(with_baseline) < count:
        verdict = "no_baseline"
    elif passed < baseline_passed or (passed == baseline_passed and mean_tokens >= baseline_tokens):
        verdict = "not_better"
    elif mean_tokens > cost_factor * baseline_tokens:
        verdict = "too_costly"
    else:
        verdict = "beats"
    return BaselineComparison(
        verdict=verdict,
        cases=count,
        passed=passed,
        baseline_passed=baseline_passed,
        mean_tokens=mean_tokens,
        baseline_mean_tokens=baseline_tokens,
        cost_factor=cost_factor,
    )


def evaluation_controls(*, tenant: Tenant, version: SkillVersion) -> list[EvaluationRun]:
    """The version's control runs on its own hash (unseen tasks, paired compositions),
    newest first: shown beside the matrix, never counted in it."""
    return list(
        EvaluationRun.objects.filter(
            tenant=tenant,
            version=version,
            content_hash=version.content_hash,
            kind__in=[EvaluationKind.UNSEEN_TASK, EvaluationKind.PAIRED_COMPOSITION],
        )
        .select_related("version")
        .prefetch_related("cases")
        .order_by("-at", "-id")
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
            run__kind=EvaluationKind.REGRESSION,
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
