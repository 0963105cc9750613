"""Input and output shapes of the skills API. Inputs validate; outputs only render."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from skills.api.evaluation_serializers import CaseBaselineInput, CaseCostInput, PairedWithInput
from skills.api.schema import NamedChoiceField
from skills.models import (
    SLUG_PATTERN,
    EvaluationCase,
    EvaluationCategory,
    EvaluationCheck,
    EvaluationKind,
    EvaluationRun,
    LabelMove,
    LabelMoveCause,
    SkillVersion,
    VersionStatus,
)
from skills.services import allowed_next


class SkillActorOutput(serializers.Serializer):
    kind = serializers.CharField()
    id = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField()  # type: ignore[assignment]


def actor_of(obj: Any, prefix: str) -> dict[str, str] | None:
    kind = getattr(obj, f"{prefix}_kind")
    if not kind:
        return None
    return {
        "kind": kind,
        "id": getattr(obj, f"{prefix}_id"),
        "label": getattr(obj, f"{prefix}_label"),
    }


# --- inputs -----------------------------------------------------------------------------------


class SkillCreateInput(serializers.Serializer):
    slug = serializers.RegexField(
        SLUG_PATTERN,
        max_length=64,
        help_text="Lowercase letters, digits and hyphens; the `name` in every SKILL.md of it.",
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class VersionUploadInput(serializers.Serializer):
    package = serializers.FileField(
        help_text="A zip with SKILL.md (YAML frontmatter) at its root and optional scripts/, "
        "references/ and assets/ folders."
    )


class ReasonInput(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000)


class RollbackInput(serializers.Serializer):
    to = serializers.IntegerField(min_value=1, help_text="The version number production moves to.")
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000)


class ResolveInput(serializers.Serializer):
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.RegexField(r"^[a-z0-9-]{1,50}$", required=False)  # type: ignore[assignment]
    version = serializers.IntegerField(min_value=1, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "label" in attrs and "version" in attrs:
            raise serializers.ValidationError("Ask for a label or a version, not both.")
        return attrs


# --- outputs ----------------------------------------------------------------------------------


class ProductionOutput(serializers.Serializer):
    number = serializers.IntegerField()
    content_hash = serializers.CharField()
    status = serializers.CharField()
    since = serializers.DateTimeField()


class SkillOutput(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.SerializerMethodField()
    production = serializers.SerializerMethodField()
    latest_version = serializers.SerializerMethodField()
    in_review = serializers.SerializerMethodField()

    @extend_schema_field(SkillActorOutput)
    def get_created_by(self, skill: Any) -> dict[str, str] | None:
        return actor_of(skill, "created_by")

    @extend_schema_field(ProductionOutput(allow_null=True))
    def get_production(self, skill: Any) -> dict[str, Any] | None:
        number = getattr(skill, "production_number", None)
        if number is None:
            return None
        return ProductionOutput(
            {
                "number": number,
                "content_hash": skill.production_hash,
                "status": skill.production_status,
                "since": skill.production_since,
            }
        ).data

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_latest_version(self, skill: Any) -> int | None:
        return getattr(skill, "latest_number", None)

    @extend_schema_field(OpenApiTypes.INT)
    def get_in_review(self, skill: Any) -> int:
        return getattr(skill, "in_review_count", 0) or 0


class FileOutput(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class ManifestChangeOutput(serializers.Serializer):
    field = serializers.CharField()
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)
    flag = serializers.CharField(
        allow_null=True,
        help_text="capability_added, capability_removed, risk_raised, risk_lowered or null.",
    )


class VersionOutput(serializers.ModelSerializer):
    skill = serializers.CharField(source="skill.slug")
    status = NamedChoiceField(choices=VersionStatus.choices, enum_name="SkillVersionStatus")
    author = serializers.SerializerMethodField()
    approved_by = serializers.SerializerMethodField()
    approved_changes = ManifestChangeOutput(many=True)
    allowed_next = serializers.SerializerMethodField()

    class Meta:
        model = SkillVersion
        fields = [
            "skill",
            "number",
            "content_hash",
            "status",
            "allowed_next",
            "manifest",
            "author",
            "created_at",
            "submitted_at",
            "approved_at",
            "approved_by",
            "approved_changes",
            "rejected_at",
            "reject_reason",
            "published_at",
            "deprecated_at",
            "deprecate_reason",
            "revoked_at",
            "revoke_reason",
            "incompatible_at",
            "incompatible_reason",
        ]

    @extend_schema_field(SkillActorOutput)
    def get_author(self, version: SkillVersion) -> dict[str, str] | None:
        return actor_of(version, "author")

    @extend_schema_field(SkillActorOutput(allow_null=True))
    def get_approved_by(self, version: SkillVersion) -> dict[str, str] | None:
        return actor_of(version, "approved_by")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_allowed_next(self, version: SkillVersion) -> list[str]:
        return allowed_next(version.status)


class EvaluationCaseOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="case_id")
    result = serializers.SerializerMethodField()
    checks = serializers.SerializerMethodField()
    cost = serializers.SerializerMethodField()
    baseline = serializers.SerializerMethodField(
        help_text="The case run without the skill, or null when the run carried none."
    )

    class Meta:
        model = EvaluationCase
        fields = [
            "id",
            "input",
            "expected",
            "trajectory_summary",
            "result",
            "checks",
            "cost",
            "baseline",
        ]

    def get_result(self, case: EvaluationCase) -> str:
        return "passed" if case.passed else "failed"

    @extend_schema_field(serializers.DictField(child=serializers.BooleanField()))
    def get_checks(self, case: EvaluationCase) -> dict[str, bool]:
        return {check: getattr(case, check) for check in EvaluationCheck.values}

    @extend_schema_field(CaseCostInput)
    def get_cost(self, case: EvaluationCase) -> dict[str, Any]:
        return {
            "tokens": case.cost_tokens,
            "seconds": case.cost_seconds,
            "tool_calls": case.cost_tool_calls,
        }

    @extend_schema_field(CaseBaselineInput(allow_null=True))
    def get_baseline(self, case: EvaluationCase) -> dict[str, Any] | None:
        if case.baseline_passed is None:
            return None
        return {
            "result": "passed" if case.baseline_passed else "failed",
            "cost": {
                "tokens": case.baseline_cost_tokens,
                "seconds": case.baseline_cost_seconds,
                "tool_calls": case.baseline_cost_tool_calls,
            },
        }


class EvaluationOutput(serializers.ModelSerializer):
    category = NamedChoiceField(choices=EvaluationCategory.choices, enum_name="EvaluationCategory")
    actor = serializers.SerializerMethodField()
    cases = EvaluationCaseOutput(many=True, read_only=True)
    counts = serializers.SerializerMethodField(
        help_text="True when the run's content hash is the version's, so it counts."
    )
    kind = NamedChoiceField(choices=EvaluationKind.choices, enum_name="EvaluationKind")
    paired_with = serializers.SerializerMethodField()

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "category",
            "kind",
            "paired_with",
            "passed",
            "content_hash",
            "counts",
            "details",
            "environment",
            "actor",
            "independent",
            "cases",
            "at",
        ]

    @extend_schema_field(SkillActorOutput)
    def get_actor(self, run: EvaluationRun) -> dict[str, str] | None:
        return actor_of(run, "actor")

    @extend_schema_field(PairedWithInput(allow_null=True))
    def get_paired_with(self, run: EvaluationRun) -> dict[str, Any] | None:
        if not run.paired_skill:
            return None
        return {"skill": run.paired_skill, "number": run.paired_number}

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_counts(self, run: EvaluationRun) -> bool:
        return run.content_hash == run.version.content_hash


class MatrixCellOutput(serializers.Serializer):
    category = serializers.CharField()
    state = NamedChoiceField(
        choices=["passed", "failed", "missing", "unverified"], enum_name="EvaluationState"
    )
    doubts = serializers.ListField(
        child=serializers.CharField(),
        help_text="Why a passing run does not count: not_independent, no_cases, "
        "package_cases_missing.",
    )
    run = EvaluationOutput(allow_null=True)


class MatrixOutput(serializers.Serializer):
    content_hash = serializers.CharField()
    complete = serializers.BooleanField()
    missing = serializers.ListField(child=serializers.CharField())
    failed = serializers.ListField(child=serializers.CharField())
    unverified = serializers.ListField(child=serializers.CharField())
    other_hash_runs = serializers.IntegerField(
        help_text="Results recorded against another content hash; they never count."
    )
    categories = MatrixCellOutput(many=True, source="cells")


class DraftSourceOutput(serializers.Serializer):
    claim = serializers.CharField(source="claim_id")
    source_deleted_at = serializers.DateTimeField(allow_null=True)


class BaselineOutput(serializers.Serializer):
    verdict = serializers.CharField()
    beats = serializers.BooleanField()
    cases = serializers.IntegerField()
    passed = serializers.IntegerField()
    baseline_passed = serializers.IntegerField()
    mean_tokens = serializers.FloatField()
    baseline_mean_tokens = serializers.FloatField()
    cost_factor = serializers.FloatField()


class CostPointOutput(serializers.Serializer):
    version = serializers.IntegerField(source="number")
    cases = serializers.IntegerField()
    passed = serializers.IntegerField()
    pass_rate = serializers.FloatField()
    mean_tokens = serializers.FloatField()
    mean_seconds = serializers.FloatField()
    mean_tool_calls = serializers.FloatField()


class ApprovalOutput(serializers.Serializer):
    kind = serializers.CharField(source="actor_kind")
    id = serializers.CharField(source="actor_id")
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField(source="actor_label")  # type: ignore[assignment]
    at = serializers.DateTimeField()


class ApprovalsMixin(serializers.Serializer):
    """Who approved a version and how many different people must: "1 of 2" while a
    version that widens what the skill may do waits for its second approver. Read from
    `context["approvals"]` (``selectors.approval_progress``)."""

    approvals = serializers.SerializerMethodField(
        help_text="Each person's approval, oldest first (a token's approval is its owner's)."
    )
    approvals_required = serializers.SerializerMethodField(
        help_text="How many different people, none the author, must approve: 2 when the "
        "version adds capabilities or raises risk to high, else 1."
    )

    @extend_schema_field(ApprovalOutput(many=True))
    def get_approvals(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return ApprovalOutput(self.context["approvals"].approvals, many=True).data  # type: ignore[return-value]

    @extend_schema_field(serializers.IntegerField())
    def get_approvals_required(self, version: SkillVersion) -> int:
        required: int = self.context["approvals"].required
        return required


class VersionApprovalOutput(ApprovalsMixin, VersionOutput):
    class Meta(VersionOutput.Meta):
        fields = [*VersionOutput.Meta.fields, "approvals", "approvals_required"]


class VersionDetailOutput(ApprovalsMixin, VersionOutput):
    body = serializers.SerializerMethodField(
        help_text="The SKILL.md body; null once revoked, since revoke refuses every load, and "
        "for an unpublished draft whose source memory was deleted."
    )
    files = serializers.SerializerMethodField()
    evaluation_matrix = serializers.SerializerMethodField()
    instances_last_24h = serializers.SerializerMethodField(
        help_text="Instances (X-Skill-Instance) that loaded this version in the last 24 h."
    )
    changes_vs_production = serializers.SerializerMethodField(
        help_text="Capabilities added and risk raised to high compared with production."
    )
    loads = serializers.SerializerMethodField(
        help_text="Loads of this version per level: catalog (1), body (2), file (3)."
    )
    cost_curve = serializers.SerializerMethodField(
        help_text="Per version of the skill: cases run on its own hash, passed, mean cost."
    )
    baseline = serializers.SerializerMethodField(
        help_text="The normal category's cases against their no-skill baseline: `verdict` "
        "`beats` or why not (`no_run`, `no_baseline`, `not_better`, `too_costly`)."
    )
    controls = serializers.SerializerMethodField(
        help_text="Unseen-task and paired-composition runs on this hash, newest first."
    )
    draft_sources = serializers.SerializerMethodField(
        help_text="The experience claims a drafted version was built from, and when one was "
        "deleted (then the version cannot be submitted, approved or published)."
    )

    class Meta(VersionOutput.Meta):
        fields = [
            *VersionOutput.Meta.fields,
            "body",
            "files",
            "evaluation_matrix",
            "instances_last_24h",
            "changes_vs_production",
            "loads",
            "cost_curve",
            "baseline",
            "controls",
            "draft_sources",
            "approvals",
            "approvals_required",
        ]

    @extend_schema_field(BaselineOutput)
    def get_baseline(self, version: SkillVersion) -> dict[str, Any]:
        return BaselineOutput(self.context["baseline"]).data

    @extend_schema_field(EvaluationOutput(many=True))
    def get_controls(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return EvaluationOutput(self.context["controls"], many=True).data  # type: ignore[return-value]

    @extend_schema_field(DraftSourceOutput(many=True))
    def get_draft_sources(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return DraftSourceOutput(self.context["draft_sources"], many=True).data  # type: ignore[return-value]

    @extend_schema_field(CostPointOutput(many=True))
    def get_cost_curve(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return CostPointOutput(self.context["cost_curve"], many=True).data  # type: ignore[return-value]

    @extend_schema_field(serializers.DictField(child=serializers.IntegerField()))
    def get_loads(self, version: SkillVersion) -> dict[str, int]:
        return self.context["loads"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_body(self, version: SkillVersion) -> str | None:
        if version.status == VersionStatus.REVOKED or self.context.get("withheld"):
            return None
        return version.body

    @extend_schema_field(FileOutput(many=True))
    def get_files(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return FileOutput(self.context["files"], many=True).data  # type: ignore[return-value]

    @extend_schema_field(MatrixOutput)
    def get_evaluation_matrix(self, version: SkillVersion) -> dict[str, Any]:
        return MatrixOutput(self.context["matrix"]).data

    @extend_schema_field(OpenApiTypes.INT)
    def get_instances_last_24h(self, version: SkillVersion) -> int:
        return self.context["instances"]

    @extend_schema_field(ManifestChangeOutput(many=True))
    def get_changes_vs_production(self, version: SkillVersion) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return ManifestChangeOutput(self.context["changes"], many=True).data  # type: ignore[return-value]


class LabelMoveOutput(serializers.ModelSerializer):
    cause = NamedChoiceField(choices=LabelMoveCause.choices, enum_name="LabelMoveCause")
    skill = serializers.CharField(source="skill.slug")
    from_version = serializers.IntegerField(source="from_version.number", allow_null=True)
    to_version = serializers.IntegerField(source="to_version.number", allow_null=True)
    actor = serializers.SerializerMethodField()

    class Meta:
        model = LabelMove
        fields = [
            "id",
            "skill",
            "label",
            "from_version",
            "to_version",
            "cause",
            "actor",
            "reason",
            "at",
        ]

    @extend_schema_field(SkillActorOutput)
    def get_actor(self, move: LabelMove) -> dict[str, str] | None:
        return actor_of(move, "actor")


class RevokeOutput(serializers.Serializer):
    version = VersionOutput()
    production = serializers.IntegerField(
        allow_null=True, help_text="The production version after the revoke (null: none left)."
    )
    label_move = LabelMoveOutput(allow_null=True)
    instances_last_24h = serializers.IntegerField(
        help_text="Instances that loaded the revoked version in the last 24 h."
    )


class ResolvedFileOutput(FileOutput):
    url = serializers.CharField(help_text="Where to read the file on demand.")


class DeprecationOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    reason = serializers.CharField(allow_blank=True)


class ResolveOutput(serializers.Serializer):
    skill = serializers.CharField(source="slug")
    number = serializers.IntegerField()
    content_hash = serializers.CharField()
    status = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField(allow_null=True)  # type: ignore[assignment]
    manifest = serializers.JSONField()
    body = serializers.CharField(allow_blank=True)
    files = ResolvedFileOutput(many=True)
    deprecation = DeprecationOutput(allow_null=True)


class DiffSideOutput(serializers.Serializer):
    number = serializers.IntegerField()
    content_hash = serializers.CharField()
    status = serializers.CharField()


class FileDiffOutput(serializers.Serializer):
    path = serializers.CharField()
    change = NamedChoiceField(choices=["added", "removed", "modified"], enum_name="FileChange")
    diff = serializers.CharField(help_text="A unified diff with git-style headers.")


class DiffOutput(serializers.Serializer):
    from_version = DiffSideOutput(source="old")
    to_version = DiffSideOutput(source="new")
    flags = serializers.ListField(child=serializers.CharField())
    capabilities_added = serializers.ListField(child=serializers.CharField())
    capabilities_removed = serializers.ListField(child=serializers.CharField())
    risk = ManifestChangeOutput(source="risk_change", allow_null=True)
    manifest = ManifestChangeOutput(many=True)
    files = FileDiffOutput(many=True)


# --- catalog and progressive loading ----------------------------------------------------------


# --- tools and instantiation ------------------------------------------------------------------


# --- drafts from experience -------------------------------------------------------------------
