from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from accounts.selectors import membership_for_user, owned_subject_keys
from common.htmx import render_page


@login_required
def me(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(user=request.user, tenant_id=request.session.get("tenant_id"))
    subjects = owned_subject_keys(tenant=membership.tenant, user=request.user) if membership else []
    return render_page(request, "memory/me.html", {"subjects": subjects})
