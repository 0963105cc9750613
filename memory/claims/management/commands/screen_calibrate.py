"""`manage.py screen_calibrate --tenant SLUG [--head injection] [--dry-run]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from accounts.management.commands._lookup import tenant_by_slug
from common.problems import Problem
from common.screen.learned import MODELS_DIR
from memory.claims.models.screening import INJECTION_HEAD
from memory.claims.screen_fit import Quality, Rates
from memory.claims.selectors.screening import CalibrationPlan, screen_calibration_plan
from memory.claims.services.screening import screen_calibration_fit


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _rates(rates: Rates) -> str:
    return (
        f"precision {_share(rates.precision)}, recall {_share(rates.recall)}, "
        f"benign {_share(rates.benign_share)}"
    )


def _bands_line(name: str, quarantine: float, review: float, quality: Quality) -> list[str]:
    return [
        f"{name}: quarantine >= {quarantine:.4f}, review >= {review:.4f}",
        f"  quarantined: {_rates(quality.quarantined)}",
        f"  flagged (review or quarantine): {_rates(quality.flagged)}",
    ]


def report(plan: CalibrationPlan, *, tenant: str) -> list[str]:
    current = "current (this tenant's)" if plan.calibrated else "current (the head's own)"
    return [
        f"{plan.head} head, tenant {tenant}: {plan.benign} benign and {plan.injection} "
        "injection examples (the learned score only; the rules quarantine regardless)",
        *_bands_line(current, plan.current.quarantine, plan.current.review, plan.current_quality),
        *_bands_line("fitted", plan.fitted.quarantine, plan.fitted.review, plan.fitted_quality),
    ]


class Command(BaseCommand):
    help = (
        "Fit a tenant's screen bands to its editors' decisions: at most 1% of the benign "
        "examples quarantined and 3% flagged, as many labelled injections caught as that "
        "allows, the review threshold never above the head's own. Reads that tenant's "
        "scores and labels only. Prints precision and recall of the current and the fitted "
        "bands; refuses, changing nothing, while there are too few examples."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, help="the tenant's slug")
        parser.add_argument(
            "--head",
            default=INJECTION_HEAD,
            choices=sorted(path.stem for path in MODELS_DIR.glob("*.npz")),
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print the fit without storing it"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            if options["dry_run"]:
                plan = screen_calibration_plan(tenant=tenant, head=options["head"])
            else:
                plan = screen_calibration_fit(
                    tenant=tenant,
                    head=options["head"],
                    actor=Actor.system("manage.py screen_calibrate"),
                )
        except Problem as problem:
            raise CommandError(f"{problem.code}: {problem.detail}") from None
        for line in report(plan, tenant=tenant.slug):
            self.stdout.write(line)
        self.stdout.write("dry run: nothing stored" if options["dry_run"] else "stored")
