from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from common.htmx import render_page


@login_required
def index(request: HttpRequest) -> HttpResponse:
    return render_page(request, "skills/index.html", {})
