"""What the screen read in agent text: `{{ claim.text|decoded_readings }}`.

Each payload the decode ladder finds (base64, rot13, tag characters, …) with the
name of the decoding, so an editor sees the words the screen judged, not only the
encoded run. Strings of a value are read too (`decoded_readings_of`).
"""

from __future__ import annotations

from typing import Any

from django import template

from common.screen.decode import hidden_readings
from common.screen.strings import strings_in

register = template.Library()

# Readings shown per claim: the ladder keeps at most 24 per string.
SHOWN = 12


@register.filter
def decoded_readings(value: Any) -> list[tuple[str, str]]:
    """(decoding, payload) of every string in `value`, in reading order."""
    found: list[tuple[str, str]] = []
    for text in strings_in(value):
        found += [pair for pair in hidden_readings(text) if pair not in found]
    return found[:SHOWN]
