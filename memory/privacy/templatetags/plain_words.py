"""Template filters for the end user's pages: memdesk's states in plain words."""

from __future__ import annotations

from django import template

from memory.privacy.plain import memory_state

register = template.Library()


@register.filter
def plain_state(status: str) -> dict[str, str]:
    """`{{ memory.status|plain_state }}` → {"word": "in use", "meaning": "Agents may…"}."""
    return memory_state(status)
