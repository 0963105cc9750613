"""The admins' console page for platforms: the tenant's list and the register form.

It calls the same service as the API and `manage.py register_platform`, so
the address check and the name rules are the same wherever a platform is
registered from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from accounts.access import console_context
from accounts.actors import Actor
from accounts.models import Membership, Role
from accounts.selectors import audit_trail
from common.htmx import render_page
from common.problems import Problem
from memory.receipts.forms import (
    OperationPolicyForm,
    PlatformAbsenceProofForm,
    PlatformRegisterForm,
    VerifierControlsForm,
)
from memory.receipts.models import Platform
from memory.receipts.selectors.platforms import operation_policies_list, platforms_list
from memory.receipts.selectors.receipts import receipt_compensations, receipt_for_console
from memory.receipts.services.platforms import (
    operation_policy_set,
    platform_absence_proof_set,
    platform_register,
)
from memory.receipts.services.verifier_controls import platform_controls_set


def _platform_names(membership: Membership) -> list[str]:
    return [platform.name for platform in platforms_list(tenant=membership.tenant)]


def _policy_form(membership: Membership, data: Any = None) -> OperationPolicyForm:
    return OperationPolicyForm(data, platforms=_platform_names(membership))


def _absence_form(membership: Membership, data: Any = None) -> PlatformAbsenceProofForm:
    # Its fields share names with the register form's on the same page; ids must not.
    return PlatformAbsenceProofForm(
        data, platforms=_platform_names(membership), auto_id="id_change_%s"
    )


def _controls_form(membership: Membership, data: Any = None) -> VerifierControlsForm:
    return VerifierControlsForm(
        data, platforms=_platform_names(membership), auto_id="id_controls_%s"
    )


def _context(
    membership: Membership,
    form: PlatformRegisterForm | None = None,
    policy_form: OperationPolicyForm | None = None,
    absence_form: PlatformAbsenceProofForm | None = None,
    controls_form: VerifierControlsForm | None = None,
) -> dict[str, Any]:
    return {
        "platforms": list(platforms_list(tenant=membership.tenant)),
        "policies": list(operation_policies_list(tenant=membership.tenant)),
        "form": form or PlatformRegisterForm(),
        "policy_form": policy_form or _policy_form(membership),
        "absence_form": absence_form or _absence_form(membership),
        "controls_form": controls_form or _controls_form(membership),
    }


def _show_problem(form: Any, problem: Problem) -> None:
    form.add_error(None, str(problem.detail))
    for field, errors in (problem.errors or {}).items():
        if field in form.fields:
            for error in errors:
                form.add_error(field, error)


@login_required
@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    if request.method == "GET":
        return render_page(
            request,
            "memory/platforms.html",
            _context(membership),
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
            _show_problem(form, problem)
        else:
            verb = "Registered" if created else "Already registered:"
            messages.success(request, f"{verb} {platform.name} at {platform.base_url}.")
            return redirect("platforms:index")
    return render_page(request, "memory/platforms.html", _context(membership, form), status=400)


@login_required
@require_http_methods(["POST"])
def policy_set(request: HttpRequest) -> HttpResponse:
    """Set what an agent's `succeeded` needs for one operation (the same service as the API)."""
    membership = console_context(request, roles=[Role.ADMIN])
    form = _policy_form(membership, request.POST)
    if form.is_valid():
        try:
            policy, created = operation_policy_set(
                tenant=membership.tenant,
                actor=Actor.for_user(request.user, membership.role),
                **form.cleaned_data,
            )
        except Problem as problem:
            _show_problem(form, problem)
        else:
            verb = "Set" if created else "Replaced"
            needs = ", ".join(policy.requirements())
            messages.success(request, f"{verb} the policy for {policy.operation}: {needs}.")
            return redirect("platforms:index")
    return render_page(
        request, "memory/platforms.html", _context(membership, policy_form=form), status=400
    )


def _platform_setting_post(
    request: HttpRequest,
    *,
    form_for: Callable[[Membership, Any], Any],
    service: Callable[..., Platform],
    done: Callable[[Platform], str],
    form_name: str,
) -> HttpResponse:
    """One platform form posted by an admin: the API's service, a message, or the page
    again with the form's errors."""
    membership = console_context(request, roles=[Role.ADMIN])
    form = form_for(membership, request.POST)
    if form.is_valid():
        try:
            platform = service(
                tenant=membership.tenant,
                actor=Actor.for_user(request.user, membership.role),
                name=form.cleaned_data.pop("platform"),
                **form.cleaned_data,
            )
        except Problem as problem:
            _show_problem(form, problem)
        else:
            messages.success(request, done(platform))
            return redirect("platforms:index")
    return render_page(
        request, "memory/platforms.html", _context(membership, **{form_name: form}), status=400
    )


@login_required
@require_http_methods(["POST"])
def absence_proof_set(request: HttpRequest) -> HttpResponse:
    """Change how a platform proves absence (the same service as the API)."""
    return _platform_setting_post(
        request,
        form_for=_absence_form,
        service=platform_absence_proof_set,
        done=lambda platform: f"{platform.name} now proves absence by: {platform.absence_proof}.",
        form_name="absence_form",
    )


@login_required
@require_http_methods(["POST"])
def controls_set(request: HttpRequest) -> HttpResponse:
    """Set a platform's verifier controls (the same service as the API)."""
    return _platform_setting_post(
        request,
        form_for=_controls_form,
        service=platform_controls_set,
        done=lambda platform: f"Set the verifier controls of {platform.name}.",
        form_name="controls_form",
    )


@login_required
@require_http_methods(["GET"])
def receipt_page(request: HttpRequest, receipt_id: Any) -> HttpResponse:
    """One receipt for editors and admins: its timeline, reads, audit trail, and the
    effect it compensates or the compensations planned for it, linked both ways."""
    membership = console_context(request, roles=[Role.EDITOR, Role.ADMIN])
    receipt = receipt_for_console(tenant=membership.tenant, receipt_id=receipt_id)
    if receipt is None:
        raise Http404("No such receipt.")
    return render_page(
        request,
        "memory/receipt_page.html",
        {
            "receipt": receipt,
            "compensations": list(receipt_compensations(receipt)),
            "audit": list(
                audit_trail(tenant=membership.tenant, target_type="receipt", target_id=receipt.pk)
            ),
        },
    )
