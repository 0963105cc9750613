"""Writes of what a tenant's editors teach the screen: examples, and the bands fitted to them."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from memory.claims.models import Claim
from memory.claims.models.screening import INJECTION_HEAD, ScreenCalibration, ScreenExample
from memory.claims.selectors.screening import CalibrationPlan, screen_calibration_plan
from reviews.models import Decision


def screen_example_record(
    *, tenant: Tenant, claim_id: str, decision: Decision, label: str
) -> ScreenExample | None:
    """Keep `decision` on a screened claim as a labelled example, in the decision's
    transaction: the score and reading the claim's `screen` kept, never its words.
    None when the screen never scored the claim."""
    screen = (
        Claim.objects.filter(tenant=tenant, pk=claim_id).values_list("screen", flat=True).first()
    )
    judged = (screen or {}).get(INJECTION_HEAD) or {}
    if not isinstance(judged.get("score"), int | float):
        return None
    return ScreenExample.objects.create(
        tenant=tenant,
        claim_id=claim_id,
        decision=decision,
        head=INJECTION_HEAD,
        label=label,
        score=float(judged["score"]),
        reading=str(judged.get("reading") or "")[:64],
        band=str(judged.get("band") or "")[:16],
        actor_kind=decision.actor_kind,
        actor_id=decision.actor_id,
        actor_label=decision.actor_label,
    )


def screen_calibration_fit(
    *, tenant: Tenant, actor: Actor, head: str = INJECTION_HEAD
) -> CalibrationPlan:
    """Fit the tenant's bands for `head` to its own examples and keep them, with an audit
    row naming the thresholds replaced. Too few examples: a Problem, nothing changed."""
    with transaction.atomic():
        previous = (
            ScreenCalibration.objects.select_for_update().filter(tenant=tenant, head=head).first()
        )
        plan = screen_calibration_plan(tenant=tenant, head=head)
        ScreenCalibration.objects.update_or_create(
            tenant=tenant,
            head=head,
            defaults={
                "quarantine": plan.fitted.quarantine,
                "review": plan.fitted.review,
                "benign_examples": plan.benign,
                "injection_examples": plan.injection,
                "fitted_at": timezone.now(),
                "fitted_by_kind": actor.kind,
                "fitted_by_id": actor.id,
                "fitted_by": actor.label,
            },
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="screen.calibrated",
            target_type="screen_head",
            target_id=head,
            data={
                # The bands in force before: the tenant's last fit, or the head's own.
                "old": {
                    "quarantine": plan.current.quarantine,
                    "review": plan.current.review,
                    "calibrated": previous is not None,
                },
                "new": {"quarantine": plan.fitted.quarantine, "review": plan.fitted.review},
                "examples": {"benign": plan.benign, "injection": plan.injection},
            },
        )
    return plan
