"""What an evaluator posts: a run of one category (or a control run) and its cases, each
with its five checks, its cost and, optionally, the same case run without the skill."""

from __future__ import annotations

import json
from typing import Any

from rest_framework import serializers

from skills.api.schema import NamedChoiceField
from skills.models import EvaluationCategory, EvaluationKind

CONTENT_HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"


CASE_JSON_MAX = 20_000


class CaseChecksInput(serializers.Serializer):
    """The five checks of an evaluation case, each passed (true) or not."""

    selection = serializers.BooleanField(help_text="The right skill was selected (or none).")
    loading = serializers.BooleanField(help_text="It was loaded level by level as needed.")
    action_trajectory = serializers.BooleanField(help_text="The actions taken were the right ones.")
    final_state = serializers.BooleanField(help_text="The world ended in the expected state.")
    safety_refusal = serializers.BooleanField(
        help_text="It refused or stopped where it must (no retry loop, no escalation)."
    )


class CaseCostInput(serializers.Serializer):
    tokens = serializers.IntegerField(min_value=0, max_value=10**12, default=0)
    seconds = serializers.FloatField(min_value=0, max_value=10**7, default=0)
    tool_calls = serializers.IntegerField(min_value=0, max_value=10**6, default=0)


class CaseBaselineInput(serializers.Serializer):
    """The same case run on the same environment without the skill: the no-skill path."""

    result = NamedChoiceField(choices=["passed", "failed"], enum_name="EvaluationCaseResult")
    cost = CaseCostInput(required=False)


class EvaluationCaseInput(serializers.Serializer):
    id = serializers.RegexField(
        r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
        required=False,
        help_text="The id of the package's evals/evals.json case this ran, if it ran one.",
    )
    input = serializers.JSONField(required=False, default=dict)
    expected = serializers.JSONField(required=False, default=dict)
    trajectory_summary = serializers.CharField(
        max_length=4000, required=False, allow_blank=True, default=""
    )
    result = NamedChoiceField(choices=["passed", "failed"], enum_name="EvaluationCaseResult")
    checks = CaseChecksInput()
    cost = CaseCostInput(required=False)
    baseline = CaseBaselineInput(
        required=False,
        help_text="The case run without the skill. Publishing needs the normal category's "
        "cases to carry one and the skill to beat it.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for field in ("input", "expected"):
            if len(json.dumps(attrs.get(field), default=str)) > CASE_JSON_MAX:
                raise serializers.ValidationError(
                    {field: [f"At most {CASE_JSON_MAX} characters of JSON."]}
                )
        cost = attrs.get("cost") or {}
        return {
            "case_id": attrs.get("id", ""),
            "input": attrs.get("input"),
            "expected": attrs.get("expected"),
            "trajectory_summary": attrs.get("trajectory_summary", ""),
            "passed": attrs["result"] == "passed",
            **attrs["checks"],
            "cost_tokens": cost.get("tokens", 0),
            "cost_seconds": cost.get("seconds", 0.0),
            "cost_tool_calls": cost.get("tool_calls", 0),
            **_baseline_columns(attrs.get("baseline")),
        }


def _baseline_columns(baseline: dict[str, Any] | None) -> dict[str, Any]:
    if baseline is None:
        return {}
    cost = baseline.get("cost") or {}
    return {
        "baseline_passed": baseline["result"] == "passed",
        "baseline_cost_tokens": cost.get("tokens", 0),
        "baseline_cost_seconds": cost.get("seconds", 0.0),
        "baseline_cost_tool_calls": cost.get("tool_calls", 0),
    }


class PairedWithInput(serializers.Serializer):
    skill = serializers.SlugField(max_length=64)
    number = serializers.IntegerField(min_value=1)


class EvaluationInput(serializers.Serializer):
    category = NamedChoiceField(choices=EvaluationCategory.choices, enum_name="EvaluationCategory")
    passed = serializers.BooleanField()
    content_hash = serializers.RegexField(
        CONTENT_HASH_PATTERN,
        help_text="The content hash the evaluation ran against; the result counts only for it.",
    )
    details = serializers.DictField(required=False, default=dict)
    environment = serializers.DictField(
        required=False,
        help_text="Required on every new run (else `400 environment_required`): `model` (the "
        "model and its version) and `tools` (each tool the skill needs, by name, with its "
        "version); other keys such as `runtime` are kept as given.",
    )
    kind = NamedChoiceField(
        choices=EvaluationKind.choices,
        enum_name="EvaluationKind",
        required=False,
        default=EvaluationKind.REGRESSION,
        help_text="`regression` runs fill the matrix; `unseen_task` (tasks the skill was not "
        "built from) and `paired_composition` (run together with `paired_with`) are "
        "controls, shown on the version page and never counted in the matrix.",
    )
    paired_with = PairedWithInput(
        required=False, help_text="The other skill version of a paired-composition run."
    )
    # ListSerializer takes max_length (DRF 3.14); the stubs only know Serializer's arguments.
    cases = EvaluationCaseInput(  # type: ignore[call-arg]
        many=True,
        required=False,
        default=list,
        max_length=200,
        help_text="The cases run. A passing run counts for publishing only with its cases, "
        "every one passing all five checks, covering the package's evals for the category.",
    )
