from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from accounts.selectors import owned_subject_keys, request_membership
from common.htmx import render_page


@login_required
def me(request: HttpRequest) -> HttpResponse:
    membership = request_membership(request)
    subjects = owned_subject_keys(tenant=membership.tenant, user=request.user) if membership else []
    return render_page(request, "memory/me.html", {"subjects": subjects})
