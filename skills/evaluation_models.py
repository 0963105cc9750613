"""A regression run's cases: the five checks each passes, its cost, its no-skill baseline."""

from __future__ import annotations

import pgtrigger
from django.db import models

from accounts.models import Tenant


class EvaluationCheck(models.TextChoices):
    """What the matrix checks in every case: selection, loading, the action trajectory,
    the final state and a safety refusal."""

    SELECTION = "selection", "Selection"
    LOADING = "loading", "Loading"
    ACTION_TRAJECTORY = "action_trajectory", "Action trajectory"
    FINAL_STATE = "final_state", "Final state"
    SAFETY_REFUSAL = "safety_refusal", "Safety refusal"


@pgtrigger.register(
    pgtrigger.Protect(
        name="evaluation_case_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class EvaluationCase(models.Model):
    """One case of an evaluation run: what went in, what came out, the five checks, the cost."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("skills.EvaluationRun", on_delete=models.PROTECT, related_name="cases")
    position = models.PositiveSmallIntegerField()
    # The `id` of the package's evals/evals.json case it ran, when it ran one.
    case_id = models.CharField(max_length=64, blank=True)
    input = models.JSONField(default=dict, blank=True)
    expected = models.JSONField(default=dict, blank=True)
    trajectory_summary = models.CharField(max_length=4000, blank=True)
    passed = models.BooleanField()
    selection = models.BooleanField()
    loading = models.BooleanField()
    action_trajectory = models.BooleanField()
    final_state = models.BooleanField()
    safety_refusal = models.BooleanField()
    cost_tokens = models.PositiveBigIntegerField(default=0)
    cost_seconds = models.FloatField(default=0)
    cost_tool_calls = models.PositiveIntegerField(default=0)
    # The same case run without the skill (its no-skill baseline), when the run carries one.
    baseline_passed = models.BooleanField(null=True, blank=True)
    baseline_cost_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    baseline_cost_seconds = models.FloatField(null=True, blank=True)
    baseline_cost_tool_calls = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="evaluation_case_position"),
            # A case passes only when every one of its five checks did.
            models.CheckConstraint(
                condition=models.Q(passed=False)
                | models.Q(
                    selection=True,
                    loading=True,
                    action_trajectory=True,
                    final_state=True,
                    safety_refusal=True,
                ),
                name="evaluation_case_passed_means_all_checks",
            ),
            models.CheckConstraint(
                condition=models.Q(cost_seconds__gte=0), name="evaluation_case_cost_seconds"
            ),
        ]

    def __str__(self) -> str:
        return f"case {self.position} of run {self.run_id}: {'passed' if self.passed else 'failed'}"
