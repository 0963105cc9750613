"""Template helpers for the skills console: relative times and status chips."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

register = template.Library()


@register.simple_tag
def reltime(value: datetime | None, prefix: str = "", suffix: str = " ago") -> SafeString | str:
    """`3 hours ago`, with the absolute UTC time on hover and in `datetime`."""
    if value is None:
        return ""
    absolute = timezone.localtime(value).strftime("%Y-%m-%d %H:%M:%S %Z")
    # timesince gives "3\xa0hours, 2\xa0minutes"; the first unit is enough in a list.
    relative = timesince(value).split(",")[0]
    return format_html(
        '<time datetime="{}" title="{}">{}{}{}</time>',
        value.isoformat(),
        absolute,
        prefix,
        relative,
        suffix,
    )


@register.simple_tag
def chip(state: str | None, label: Any = None) -> SafeString | str:
    """A status chip: the state as text and as the class that colours it."""
    if not state:
        return ""
    text = label if label is not None else str(state).replace("_", " ")
    return format_html('<span class="chip {}">{}</span>', state, text)


@register.filter
def short_hash(value: str | None) -> str:
    """`sha256:1a2b3c4d5e6f` — enough to tell versions apart at a glance."""
    if not value:
        return ""
    algorithm, _, digest = value.partition(":")
    return f"{algorithm}:{digest[:12]}" if digest else value[:12]


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON for the collapsible "raw" sections; autoescaped by the template."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


@register.filter
def as_text(value: Any) -> str:
    """A manifest value as one readable line: lists joined, mappings as key: value."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, dict):
        return "; ".join(f"{key}: {as_text(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(as_text(item) for item in value)
    return str(value)
