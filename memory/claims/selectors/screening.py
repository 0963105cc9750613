"""Reads of what a tenant's editors taught the screen. Every one takes the tenant."""

from __future__ import annotations

from dataclasses import dataclass

from accounts.models import Tenant
from common.problems import Problem
from common.screen import learned
from common.screen.learned import Bands
from memory.claims.models.screening import (
    INJECTION_HEAD,
    ExampleLabel,
    ScreenCalibration,
    ScreenExample,
)
from memory.claims.screen_fit import (
    MIN_BENIGN,
    MIN_INJECTION,
    Example,
    Quality,
    band_quality,
    fit_bands,
)


def screen_bands(*, tenant: Tenant, head: str = INJECTION_HEAD) -> Bands | None:
    """The tenant's calibrated bands for `head`; None: the head's own apply."""
    # At most one row (unique per tenant and head): no ORDER BY to lead the planner astray.
    rows = ScreenCalibration.objects.filter(tenant=tenant, head=head).values_list(
        "quarantine", "review"
    )
    for quarantine, review in rows:
        return Bands(quarantine=quarantine, review=review)
    return None


def screen_examples(*, tenant: Tenant, head: str = INJECTION_HEAD) -> list[Example]:
    """(label, score) of each claim's newest example whose decision still holds: an
    undone decision teaches nothing, and a claim decided again counts once."""
    return list(
        ScreenExample.objects.filter(tenant=tenant, head=head, decision__undo__isnull=True)
        .order_by("claim_id", "-at", "-id")
        .distinct("claim_id")
        .values_list("label", "score")
    )


@dataclass(frozen=True)
class CalibrationPlan:
    """What a fit would do: the bands in force, the fitted ones, and how each sorts the
    tenant's examples."""

    head: str
    default: Bands
    current: Bands
    calibrated: bool  # whether `current` is the tenant's own fit, not the head's bands
    fitted: Bands
    benign: int
    injection: int
    current_quality: Quality
    fitted_quality: Quality


def screen_calibration_plan(*, tenant: Tenant, head: str = INJECTION_HEAD) -> CalibrationPlan:
    """The fit of the tenant's bands for `head` to its own examples; refused (a
    Problem) while there are too few of them to say anything."""
    examples = screen_examples(tenant=tenant, head=head)
    benign = sum(label == ExampleLabel.BENIGN for label, _ in examples)
    injection = sum(label == ExampleLabel.INJECTION for label, _ in examples)
    if benign < MIN_BENIGN or injection < MIN_INJECTION:
        raise Problem(
            "too_few_examples",
            f"A calibration needs at least {MIN_BENIGN} benign and {MIN_INJECTION} injection "
            f"examples; {tenant.slug} has {benign} benign and {injection} injection. "
            "Nothing was changed.",
            status_code=409,
        )
    default = learned.head(head).bands
    own = screen_bands(tenant=tenant, head=head)
    current = own or default
    fitted = fit_bands(examples, default=default)
    return CalibrationPlan(
        head=head,
        default=default,
        current=current,
        calibrated=own is not None,
        fitted=fitted,
        benign=benign,
        injection=injection,
        current_quality=band_quality(examples, current),
        fitted_quality=band_quality(examples, fitted),
    )
