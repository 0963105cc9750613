"""Console pages that belong to no single app: the landing redirect and the dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from accounts.access import CONSOLE_READERS, console_context
from accounts.models import Role
from common.htmx import render_page
from config.charts import bar_chart, column_chart
from config.dashboard import dashboard_data
from reviews.selectors import queue_depths


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
    charts = [
        column_chart(title="Open review items per day", points=data["queue_depth"]),
        bar_chart(
            title="Open items per queue now",
            bars=[(queue, row["depth"]) for queue, row in sorted(depths.items())],
        ),
        column_chart(title="Receipts written per day", points=data["receipts_by_day"]),
        bar_chart(title="Receipts by state", bars=data["receipts_by_state"]),
        bar_chart(title="Write-gate verdicts by reason (14 days)", bars=data["gate_verdicts"]),
        bar_chart(title="Recovery decisions by kind", bars=data["recovery"]),
    ]
    oldest = [(queue, row["oldest"]) for queue, row in sorted(depths.items()) if row["oldest"]]
    return render_page(
        request, "console/dashboard.html", {"charts": charts, "oldest": oldest}, partial="charts"
    )
