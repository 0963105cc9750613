"""Console pages that belong to no single app: the landing redirect and the dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.utils.safestring import SafeString

from accounts.access import CONSOLE_READERS, console_context
from accounts.models import Role
from common.charts import bar_chart, column_chart, milliseconds, percent
from common.htmx import render_page
from config.dashboard import dashboard_data, words
from memory.claims.reliability import AgentReliability
from memory.claims.selectors.traces import unused_recalls
from memory.privacy.selectors.retention import retention_overview
from reviews.models import Queue
from reviews.selectors import queue_depths


def favicon(request: HttpRequest) -> HttpResponse:
    """Tools that ask for /favicon.ico (pages name theirs) get the console's icon."""
    return redirect(static("favicon.svg"), permanent=True)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    membership = console_context(request)
    if membership.role == Role.USER:
        return redirect("memory:me")
    return redirect("reviews:index")


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=CONSOLE_READERS)
    data = dashboard_data(tenant=membership.tenant)
    depths = queue_depths(tenant=membership.tenant)
    figures = data["reliability"]
    charts = [
        column_chart(
            title="Open review items per day", points=data["queue_depth"], axis="open items"
        ),
        bar_chart(
            title="Open items per queue now",
            bars=[(Queue(queue).label, row["depth"]) for queue, row in sorted(depths.items())],
            axis="open items",
        ),
        column_chart(
            title="Receipts written per day", points=data["receipts_by_day"], axis="receipts"
        ),
        bar_chart(title="Receipts by state", bars=data["receipts_by_state"], axis="receipts"),
        bar_chart(
            title="Write-gate verdicts by reason (14 days)",
            bars=data["gate_verdicts"],
            axis="claims",
        ),
        bar_chart(title="Recovery decisions by kind", bars=data["recovery"], axis="decisions"),
        *reliability_charts(figures),
    ]
    oldest = [
        (Queue(queue).label, row["oldest"])
        for queue, row in sorted(depths.items())
        if row["oldest"]
    ]
    context = {
        "charts": charts,
        "oldest": oldest,
        "figures": figures,
        "retention": retention_overview(tenant=membership.tenant, sweeps=1),
        "unused": unused_recalls(tenant=membership.tenant),
    }
    return render_page(request, "console/dashboard.html", context, partial="charts")


def reliability_charts(figures: AgentReliability) -> list[SafeString]:
    """The reliability figures as charts: how often agents' effects and memories went wrong."""
    rates = [
        ("duplicate side effects", figures.duplicate_side_effect_rate),
        ("unverified completions", figures.unverified_completion_rate),
        ("stale claim uses", figures.stale_claim_use_rate),
        ("write rejections", figures.write_rejection_rate),
    ]
    latencies = [
        (name, value)
        for name, value in (
            ("p50", figures.recovery_latency_p50),
            ("p95", figures.recovery_latency_p95),
        )
        if value is not None
    ]
    return [
        bar_chart(
            title="Agent reliability: share of each population",
            bars=rates if figures.completions or figures.claim_uses or figures.claim_writes else [],
            axis="% of completions, claim uses or claim writes",
            fmt=percent,
        ),
        bar_chart(
            title="Recovery decision latency, trigger to answer",
            bars=latencies,
            axis="latency",
            fmt=milliseconds,
        ),
        bar_chart(
            title="Write rejections by reason",
            bars=[
                (words(reason), n)
                for reason, n in sorted(
                    figures.rejections_by_reason.items(), key=lambda pair: -pair[1]
                )
            ],
            axis="claims rejected or quarantined",
        ),
        bar_chart(
            title="Reconciliation outcomes",
            bars=[
                (words(outcome), n) for outcome, n in figures.reconciliation_outcomes.items() if n
            ],
            axis="receipts settled by a read",
        ),
    ]
