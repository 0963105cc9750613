"""Decides, in one place, whether a console request gets a page or a fragment."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def is_htmx(request: HttpRequest) -> bool:
    """htmx sent this request and wants a fragment back (a boosted link wants the page)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.boosted


def render_page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    partial: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render `template`, or only its `partial` for an htmx request that is not boosted."""
    if partial and is_htmx(request):
        template = f"{template}#{partial}"
    return render(request, template, context, status=status)
