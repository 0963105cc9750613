"""When something happened, as a person says it: "just now", "3 minutes ago"."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince, timeuntil

register = template.Library()

# Under a minute, timesince says "0 minutes": that moment is "just now".
JUST_NOW = timedelta(minutes=1)


@register.filter
def ago(at: datetime | None) -> str:
    """`{{ at|ago }}` → "just now", "5 minutes ago", "in 2 days" (for a moment ahead)."""
    if at is None:
        return ""
    now = timezone.now()
    if abs(now - at) < JUST_NOW:
        return "just now"
    if at > now:
        return f"in {timeuntil(at, now, depth=1)}"
    return f"{timesince(at, now, depth=1)} ago"
