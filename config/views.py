"""Console pages that belong to no single app: the landing redirect and the dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from accounts.models import Role
from accounts.selectors import request_membership
from common.htmx import render_page


@login_required
def home(request: HttpRequest) -> HttpResponse:
    membership = request_membership(request)
    if membership is not None and membership.role == Role.USER:
        return redirect("memory:me")
    return redirect("reviews:index")


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    return render_page(request, "console/dashboard.html", {})
