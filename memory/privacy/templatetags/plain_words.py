"""Template filters for the end user's pages: memdesk's states in plain words."""

from __future__ import annotations

from django import template

from memory.privacy.plain import (
    DELETION_STATES,
    event_title,
    history_words,
    memory_state,
    source_words,
)

register = template.Library()


@register.filter
def plain_state(status: str) -> dict[str, str]:
    """`{{ memory.status|plain_state }}` → {"word": "in use", "meaning": "Agents may…"}."""
    return memory_state(status)


@register.filter
def plain_history(verb: str) -> str:
    """`{{ event.verb|plain_history }}` → "Accepted: agents may recall it"."""
    return history_words(verb)


@register.filter
def plain_event(kind: str) -> str:
    """`{{ event.kind|plain_event }}` → "What you said"."""
    return event_title(kind)


@register.filter
def plain_deletion(status: str) -> str:
    """`{{ deletion.status|plain_deletion }}` → "done"."""
    return DELETION_STATES.get(status, status.replace("_", " "))


@register.filter
def plain_source(uri: str) -> str:
    """`{{ source.uri|plain_source }}` → "an email"."""
    return source_words(uri or "")
