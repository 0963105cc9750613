from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest
from django.urls import get_script_prefix, reverse

from accounts.access import CONSOLE_READERS
from accounts.models import Tenant
from accounts.selectors import request_membership
from reviews.models import Queue
from reviews.selectors import depth_label, queue_depths_capped


def request_queue_depths(request: HttpRequest, *, tenant: Tenant) -> dict[str, int]:
    """The capped depths, read at most once per request (badges and the page's count)."""
    if not hasattr(request, _DEPTHS):
        remember_queue_depths(request, queue_depths_capped(tenant=tenant))
    depths: dict[str, int] = getattr(request, _DEPTHS)
    return depths


def remember_queue_depths(request: HttpRequest, depths: dict[str, int]) -> None:
    """Keep depths a page read with its own reads for the badges, which then read none."""
    # A per-request memo, which HttpRequest's type does not declare.
    setattr(request, _DEPTHS, depths)


_DEPTHS = "_memdesk_queue_depths"


@cache
def _queue_urls(script_prefix: str) -> dict[str, str]:
    # The badges link every page to every queue: reversed once per process.
    return {q.value: reverse("reviews:queue", args=[q.value]) for q in Queue}


def queue_nav(request: HttpRequest) -> dict[str, Any]:
    """Every queue with its depth, for the navigation badges.

    The depths are read only if a template shows them (a fragment without the
    navigation reads none), once per request (the queue page's own count of an
    unfiltered queue reuses them), capped (`1,000+`) so the cost does not grow
    with the queues.
    """
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    membership = request_membership(request)
    # The badges show only to those the queues are open to (`console_context`).
    if membership is None or membership.role not in CONSOLE_READERS:
        return {}

    @cache
    def badges() -> list[dict[str, Any]]:
        depths = request_queue_depths(request, tenant=membership.tenant)
        urls = _queue_urls(get_script_prefix())
        return [
            {
                "value": q.value,
                "label": q.label,
                "depth": depth_label(depths.get(q.value, 0)),
                "url": urls[q.value],
            }
            for q in Queue
        ]

    # Templates call a callable variable; the first use runs the query.
    return {"queue_nav": badges}
