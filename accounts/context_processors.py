from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.selectors import request_membership


def console(request: HttpRequest) -> dict[str, Any]:
    """The signed-in person's tenant and role, for the navigation."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"membership": request_membership(request)}
