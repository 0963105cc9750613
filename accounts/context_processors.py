from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from accounts.selectors import membership_for_user


def console(request: HttpRequest) -> dict[str, Any]:
    """The signed-in person's tenant and role, for the navigation."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    membership = membership_for_user(user=user, tenant_id=request.session.get("tenant_id"))
    return {"membership": membership}
