from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from accounts.selectors import membership_for_user
from common.htmx import render_page
from reviews.models import Queue
from reviews.selectors import queue_depths


@login_required
def index(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(user=request.user, tenant_id=request.session.get("tenant_id"))
    depths = queue_depths(tenant=membership.tenant) if membership else {}
    queues = [
        {"value": q.value, "label": q.label, **depths.get(q.value, {"depth": 0, "oldest": None})}
        for q in Queue
    ]
    return render_page(request, "reviews/index.html", {"queues": queues})
