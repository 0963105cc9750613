"""What a tenant's editors taught the screen: labelled examples, and the bands fitted to them.

An example is a number and a label, never content: the learned head's score a
claim was given, and what an editor decided it was. Erasure has nothing to find
here, and a tenant's examples are read for that tenant's calibration alone.
"""

from __future__ import annotations

import pgtrigger
from django.db import models
from django.db.models.functions import Now

from accounts.models import ActorKind, Tenant
from memory.claims.models.claims import Claim

# The learned head editors' decisions label; its name in `common.screen.learned.head`.
INJECTION_HEAD = "injection"


class ExampleLabel(models.TextChoices):
    INJECTION = "injection", "Injection"
    BENIGN = "benign", "Benign"


@pgtrigger.register(
    pgtrigger.Protect(
        name="screen_example_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    )
)
class ScreenExample(models.Model):
    """One editor decision on a screened candidate, as a label for one head.

    One row per decision (and head), never one per claim: an undone decision keeps
    its row, and the calibration skips it because the decision has an undo
    (`reviews.DecisionUndo`); the decision taken again writes a row of its own.
    Nothing is rewritten, so the record of what was learned when stays whole.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    # Claims are erased, never deleted; the example outlives the erasure of its words.
    claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="+")
    decision = models.ForeignKey("reviews.Decision", on_delete=models.PROTECT, related_name="+")
    head = models.CharField(max_length=32)
    label = models.CharField(max_length=16, choices=ExampleLabel.choices)
    # As the claim's `screen` kept them: the head's score, the reading it scored
    # highest on (a name such as "written" or "base64", not the text) and the band.
    score = models.FloatField()
    reading = models.CharField(max_length=64, blank=True)
    band = models.CharField(max_length=16, blank=True)
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(db_default=Now())

    class Meta:
        app_label = "memory"
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "head"], name="screen_example_per_decision"
            ),
            models.CheckConstraint(
                condition=models.Q(label__in=ExampleLabel.values), name="screen_example_label_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(score__gte=0, score__lte=1), name="screen_example_score_range"
            ),
        ]
        indexes = [
            # A calibration reads one tenant's examples of one head, newest per claim.
            models.Index(fields=["tenant", "head", "claim", "-at"], name="screen_example_by_claim"),
        ]

    def __str__(self) -> str:
        return f"{self.head}: {self.label} at {self.score} (claim {self.claim_id})"


class ScreenCalibration(models.Model):
    """A tenant's own thresholds for one head, fitted to its examples.

    One row per tenant and head, replaced by each fit; the audit row of each fit
    (`screen.calibrated`) keeps the thresholds it replaced.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    head = models.CharField(max_length=32)
    quarantine = models.FloatField()
    review = models.FloatField()
    benign_examples = models.PositiveIntegerField()
    injection_examples = models.PositiveIntegerField()
    fitted_at = models.DateTimeField()
    fitted_by_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    fitted_by_id = models.CharField(max_length=64, blank=True)
    fitted_by = models.CharField(max_length=150, blank=True)

    class Meta:
        app_label = "memory"
        constraints = [
            # The gate reads it on every write: one indexed row.
            models.UniqueConstraint(fields=["tenant", "head"], name="screen_calibration_per_head"),
            models.CheckConstraint(
                condition=models.Q(review__gt=0, quarantine__gte=models.F("review")),
                name="screen_calibration_bands_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant_id} {self.head}: quarantine {self.quarantine}, review {self.review}"
