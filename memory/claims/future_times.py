"""When something was seen, or became true, cannot lie ahead of memdesk's clock.

A fact dated in the future would outrank every genuine correction made before
that date, so such times are refused, not stored. Clocks disagree a little:
`MEMDESK_FUTURE_SKEW` is how far ahead a time may still be. Ends and reminders
(`valid_to`, `expires_at`, `refresh_after`) are meant to lie ahead and are
never passed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from common.problems import Problem


def refuse_future_times(times: Mapping[str, datetime | None]) -> None:
    """Raise `time_in_future` naming each field of `times` past now plus the skew."""
    skew = settings.MEMDESK_FUTURE_SKEW
    latest = timezone.now() + skew
    ahead = [name for name, at in times.items() if at is not None and at > latest]
    if ahead:
        raise Problem(
            "time_in_future",
            f"{', '.join(ahead)} lies in the future; a time says when something was seen "
            "or became true, so it cannot be later than now. Nothing was stored.",
            errors={
                name: [f"At most {int(skew.total_seconds())} seconds after now."] for name in ahead
            },
        )
