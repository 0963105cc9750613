"""The admins' retention settings page (/settings/retention/): periods per record, kind and
class.

Only admins of the tenant reach it; another tenant's policy is a 404. The
page shows what the next sweep would reach and the deletions the last sweeps
started, each with its report.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from common.problems import Problem
from memory.claims.models import ClaimKind, Sensitivity
from memory.privacy.models import RetainedRecord
from memory.privacy.selectors.retention import retention_overview
from memory.privacy.services.retention import retention_policy_remove, retention_policy_set


def _page(
    request: HttpRequest,
    membership: Membership,
    *,
    errors: dict[str, list[str]] | None = None,
    status: int = 200,
) -> HttpResponse:
    context: dict[str, Any] = {
        **retention_overview(tenant=membership.tenant),
        "records": RetainedRecord.choices,
        "kinds": ClaimKind.choices,
        "classes": Sensitivity.choices,
        "errors": errors or {},
        "posted": request.POST if request.method == "POST" else {},
    }
    return render(request, "memory/retention.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def retention_settings(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    if request.method == "GET":
        return _page(request, membership)
    days = request.POST.get("days", "").strip()
    try:
        retention_policy_set(
            tenant=membership.tenant,
            actor=Actor.for_user(request.user, membership.role),
            record=request.POST.get("record", RetainedRecord.CLAIM),
            kind=request.POST.get("kind", "").strip(),
            sensitivity=request.POST.get("sensitivity", ""),
            days=int(days) if days.isdigit() else days,
            user=request.user,
        )
    except Problem as problem:
        return _page(request, membership, errors=problem.errors or {}, status=400)
    messages.success(request, "Retention period saved. The next sweep applies it.")
    return redirect("retention:settings")


@login_required
@require_POST
def retention_remove(request: HttpRequest, policy_id: int) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    try:
        retention_policy_remove(
            tenant=membership.tenant,
            actor=Actor.for_user(request.user, membership.role),
            policy_id=policy_id,
        )
    except Problem as problem:
        raise Http404("no such retention policy") from problem
    messages.success(request, "Retention period removed: what it reached is kept again.")
    return redirect("retention:settings")
