"""The admins' console page for platforms: the tenant's list and the register form.

It calls the same service as the API and `manage.py register_platform`, so
the address check and the name rules are the same wherever a platform is
registered from.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from common.htmx import render_page
from common.problems import Problem
from memory.forms import PlatformRegisterForm
from memory.selectors.platforms import platforms_list
from memory.services.platforms import platform_register


def _context(membership: Membership, form: PlatformRegisterForm) -> dict[str, Any]:
    return {"platforms": list(platforms_list(tenant=membership.tenant)), "form": form}


@login_required
@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    if request.method == "GET":
        return render_page(
            request,
            "memory/platforms.html",
            _context(membership, PlatformRegisterForm()),
            partial="platforms",
        )
    form = PlatformRegisterForm(request.POST)
    if form.is_valid():
        try:
            platform, created = platform_register(
                tenant=membership.tenant,
                actor=Actor.for_user(request.user, membership.role),
                **form.cleaned_data,
            )
        except Problem as problem:
            form.add_error(None, str(problem.detail))
            for field, errors in (problem.errors or {}).items():
                if field in form.fields:
                    for error in errors:
                        form.add_error(field, error)
        else:
            verb = "Registered" if created else "Already registered:"
            messages.success(request, f"{verb} {platform.name} at {platform.base_url}.")
            return redirect("platforms:index")
    return render_page(request, "memory/platforms.html", _context(membership, form), status=400)
