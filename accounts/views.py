"""The admin console page for agent tokens: list, issue, revoke.

Only admins of the tenant reach it (`console_context`: other roles get 403,
a person of no tenant 404), and another tenant's token is a 404. A new secret
is rendered once, in the answer to the POST that made it, and stored nowhere:
not in the database (only its hash), not in the session or messages, not in
the audit row.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.access import console_context
from accounts.actors import Actor
from accounts.forms import AgentTokenCreateForm, AgentTokenRevokeForm
from accounts.models import Membership, Role
from accounts.selectors import agent_token_get, agent_tokens
from accounts.services import agent_token_create, agent_token_revoke


def _list(
    request: HttpRequest,
    membership: Membership,
    *,
    form: AgentTokenCreateForm | None = None,
    revoke_failed: int | None = None,
    revoke_error: str = "",
    status: int = 200,
) -> HttpResponse:
    context = {
        "tokens": list(agent_tokens(tenant=membership.tenant)),
        "form": form or AgentTokenCreateForm(tenant=membership.tenant),
        "revoke_failed": revoke_failed,
        "revoke_error": revoke_error,
    }
    return render(request, "accounts/tokens.html", context, status=status)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    if request.method == "GET":
        return _list(request, membership)
    form = AgentTokenCreateForm(request.POST, tenant=membership.tenant)
    if not form.is_valid():
        return _list(request, membership, form=form, status=400)
    # None when the admin leaves "Acts for" at "Me": the service makes them the owner.
    owner_membership = form.cleaned_data["owner"]
    try:
        issued = agent_token_create(
            tenant=membership.tenant,
            name=form.cleaned_data["name"],
            capabilities=form.cleaned_data["capabilities"],
            allowed_subjects=form.cleaned_data["subjects"],
            max_authority=form.cleaned_data["max_authority"],
            actor=Actor.for_user(request.user, membership.role),
            owner=owner_membership.user if owner_membership else None,
        )
    except IntegrityError:
        form.add_error(
            "name", "A token with this name exists; tokens are shown once, pick another."
        )
        return _list(request, membership, form=form, status=400)
    # never_cache above sends Cache-Control: no-store, so the secret is not
    # kept by the browser's back/forward cache or a proxy either.
    return render(request, "accounts/token_created.html", {"issued": issued}, status=201)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    membership = console_context(request, roles=[Role.ADMIN])
    token = agent_token_get(tenant=membership.tenant, token_id=token_id)
    if token is None:
        raise Http404("No such token.")
    form = AgentTokenRevokeForm(request.POST)
    if not form.is_valid():
        return _list(
            request,
            membership,
            revoke_failed=token.pk,
            revoke_error=" ".join(str(message) for message in form.errors["reason"]),
            status=400,
        )
    if token.revoked_at is not None:
        messages.info(request, f"{token.name} was already revoked.")
        return redirect("accounts:tokens")
    agent_token_revoke(
        token=token,
        actor=Actor.for_user(request.user, membership.role),
        reason=form.cleaned_data["reason"],
    )
    messages.success(request, f"Revoked {token.name}; its next request is refused.")
    return redirect("accounts:tokens")
