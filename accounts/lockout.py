"""The login lockout: django-axes's count per address on top of its count per
username and address, and the page a locked-out login gets (axes calls
`lockout_response`)."""

from __future__ import annotations

import math
from typing import Any

from axes.attempts import get_cool_off_threshold  # type: ignore[import-untyped]
from axes.handlers.database import AxesDatabaseHandler  # type: ignore[import-untyped]
from axes.helpers import get_failure_limit  # type: ignore[import-untyped]
from axes.models import AccessAttempt  # type: ignore[import-untyped]
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    minutes = max(1, math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    response = render(
        request,
        "registration/locked_out.html",
        {"minutes": minutes, "failure_limit": settings.AXES_FAILURE_LIMIT},
        status=429,
    )
    response["Retry-After"] = str(minutes * 60)
    return response


class AddressLockoutHandler(AxesDatabaseHandler):
    """Locks out an address, whatever username it tries, after AXES_ADDRESS_FAILURE_LIMIT.

    Axes counts failures per username and address, so one address trying
    many usernames a few times each was never slowed. Naming "ip_address" in
    AXES_LOCKOUT_PARAMETERS would hold the address to the same small limit as
    one username (too low for an office behind one address), and a successful
    sign-in would wipe the address's count with the username's. So the address
    gets its own, higher limit here, and only its own cool-off ends it.
    """

    def get_failures(self, request: Any, credentials: dict | None = None) -> int:
        failures = super().get_failures(request, credentials)
        limit = get_failure_limit(request, credentials)
        if failures >= limit:
            return failures
        from_address = AccessAttempt.objects.filter(
            ip_address=request.axes_ip_address, attempt_time__gte=get_cool_off_threshold(request)
        ).aggregate(total=Sum("failures_since_start"))["total"]
        if (from_address or 0) >= settings.AXES_ADDRESS_FAILURE_LIMIT:
            return limit
        return failures
