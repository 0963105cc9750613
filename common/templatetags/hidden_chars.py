"""Agent text as a person should read it: every hidden character shown as a badge.

`{{ claim.text|revealed }}` escapes the text and draws each hidden character (see
`common.hidden_chars`) as a labelled badge: a run of tag characters as the ASCII it
spells, a bidi control by its name, anything else by its short name or code point.
`{% hidden_warning claim.text claim.value %}` says above the evidence how many there
are and what the tag characters spell. `|revealed_plain` is for attributes (labels,
confirmations), where markup cannot go: the same labels in brackets.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from common.hidden_chars import Hidden, has_hidden, hidden_parts, hidden_summary

register = template.Library()


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        # JSON keeps a string's characters as they are; repr would escape some (Cf)
        # and not others (the blank letters).
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _badge(part: Hidden) -> str:
    return (
        f'<span class="hidden-char {part.kind}" title="{escape(part.name)}">'
        f"{escape(part.label)}</span>"
    )


def reveal_html(text: str) -> str:
    """`text` escaped, each hidden character a badge; for code that builds HTML itself."""
    if not has_hidden(text):
        return escape(text)
    return "".join(
        escape(part) if isinstance(part, str) else _badge(part) for part in hidden_parts(text)
    )


@register.filter
def revealed(value: Any) -> SafeString:
    # Every visible stretch is escaped and every badge built from escaped labels.
    return mark_safe(reveal_html(_as_text(value)))  # noqa: S308


@register.filter
def revealed_plain(value: Any) -> str:
    """For an attribute: each hidden character as `[ZWSP]`, `[TAG: …]`; autoescaped."""
    text = _as_text(value)
    if not has_hidden(text):
        return text
    return "".join(
        part if isinstance(part, str) else f"[{part.label}]" for part in hidden_parts(text)
    )


@register.simple_tag
def hidden_warning(*values: Any) -> SafeString | str:
    """One line above the evidence when any of `values` holds hidden characters."""
    summary = hidden_summary(values)
    if not summary.count:
        return ""
    details = []
    if summary.spelled:
        spelled = format_html_join(
            "; ", '“<span class="spelled">{}</span>”', ((s,) for s in summary.spelled)
        )
        details.append(format_html("tag characters spelling: {}", spelled))
    if summary.bidi:
        details.append(format_html("bidi controls: {}", ", ".join(summary.bidi)))
    if summary.other:
        details.append(format_html("invisible: {}", ", ".join(summary.other)))
    noun = "character" if summary.count == 1 else "characters"
    return format_html(
        '<p class="message warn hidden-warning" role="note">This text holds {} hidden {} ({}). '
        "Recall, hot memory and skill loads leave them out; the stored text keeps them.</p>",
        summary.count,
        noun,
        format_html_join("; ", "{}", ((d,) for d in details)),
    )
