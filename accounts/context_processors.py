from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest
from django.urls import get_script_prefix, reverse

from accounts.selectors import request_membership

# The navigation's links, by the name base.html uses for each.
_NAV = {
    "home": "console:home",
    "review": "reviews:index",
    "me": "memory:me",
    "skills": "skills:index",
    "ledger": "desk:ledger",
    "dashboard": "console:dashboard",
    "platforms": "platforms:index",
    "tokens": "accounts:tokens",
    "retention": "retention:settings",
    "logout": "logout",
}


@cache
def _nav_urls(script_prefix: str) -> dict[str, str]:
    # Every console page shows the same links: reversed once per process (and
    # script prefix), not ten times per page.
    return {name: reverse(view) for name, view in _NAV.items()}


def console(request: HttpRequest) -> dict[str, Any]:
    """The signed-in person's tenant and role, and the navigation's links."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"membership": request_membership(request), "nav": _nav_urls(get_script_prefix())}
