from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.models import Role
from accounts.selectors import request_membership
from reviews.models import Queue
from reviews.selectors import queue_depths


def queue_nav(request: HttpRequest) -> dict[str, Any]:
    """Every queue with its depth, for the navigation badges (one grouped query)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    membership = request_membership(request)
    if membership is None or membership.role == Role.USER:
        return {}
    depths = queue_depths(tenant=membership.tenant)
    return {
        "queue_nav": [
            {"value": q.value, "label": q.label, "depth": depths.get(q.value, {}).get("depth", 0)}
            for q in Queue
        ]
    }
