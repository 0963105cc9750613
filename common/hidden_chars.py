"""Characters that render as nothing: shown to the people who review agent text, never
handed back to an agent.

Unicode tag characters (U+E0020 to U+E007E mirror ASCII) can spell a whole instruction
that no screen shows; bidi controls reorder what a reviewer reads; zero-width
characters and blank letters hide where a word is split. One definition of
"hidden" — every format character (category Cf) and the letters that draw nothing —
serves both sides: `hidden_parts` splits a string into its visible text and its
hidden runs, which the console shows as badges; `for_agent` removes them from what
recall, hot memory and a skill's resolve return. What a reviewer is warned about is
exactly what an agent never receives.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, overload

from common.screen.decode import SELECTOR_RUN, selector_text
from common.screen.normalize import INVISIBLE_LETTERS
from common.screen.strings import strings_in

# The tag block, unassigned code points included: none of them draws anything.
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F

BIDI_CONTROLS = {
    0x061C: "ALM",
    0x200E: "LRM",
    0x200F: "RLM",
    0x202A: "LRE",
    0x202B: "RLE",
    0x202C: "PDF",
    0x202D: "LRO",
    0x202E: "RLO",
    0x2066: "LRI",
    0x2067: "RLI",
    0x2068: "FSI",
    0x2069: "PDI",
}
ZERO_WIDTH = {
    0x00AD: "SHY",
    0x180E: "MVS",
    0x200B: "ZWSP",
    0x200C: "ZWNJ",
    0x200D: "ZWJ",
    0x2060: "WJ",
    0xFEFF: "ZWNBSP",
}
_LETTER_LABELS = {
    0x115F: "FILLER",
    0x1160: "FILLER",
    0x2800: "BLANK",
    0x3164: "FILLER",
    0xFFA0: "FILLER",
}

KIND_TAG = "tag"
KIND_BIDI = "bidi"
KIND_ZERO_WIDTH = "zero_width"
KIND_LETTER = "invisible_letter"
KIND_FORMAT = "format"
# Two or more variation selectors in a row: bytes riding on the character before them.
KIND_SELECTORS = "variation_selectors"


@dataclass(frozen=True)
class Hidden:
    """One badge's worth: a run of tag characters, or any other single hidden character."""

    kind: str
    code_points: tuple[int, ...]

    @property
    def spelled(self) -> str:
        """The ASCII a run of tag characters mirrors (a language or cancel tag by name), or
        the text a run of variation selectors carries."""
        if self.kind == KIND_SELECTORS:
            return selector_text("".join(map(chr, self.code_points)))
        return "".join(_tag_letter(code) for code in self.code_points)

    @property
    def label(self) -> str:
        if self.kind == KIND_TAG:
            return f"TAG: {self.spelled}"
        if self.kind == KIND_SELECTORS:
            return f"VS: {self.spelled}"
        code = self.code_points[0]
        short = BIDI_CONTROLS.get(code) or ZERO_WIDTH.get(code) or _LETTER_LABELS.get(code)
        return short or f"U+{code:04X}"

    @property
    def name(self) -> str:
        """`U+200B ZERO WIDTH SPACE`; for a tag run, how many and where they start."""
        code = self.code_points[0]
        if self.kind == KIND_TAG:
            return f"{len(self.code_points)} tag characters from U+{code:04X}"
        if self.kind == KIND_SELECTORS:
            return f"{len(self.code_points)} variation selectors in a row"
        return f"U+{code:04X} {unicodedata.name(chr(code), 'UNASSIGNED')}"


@dataclass(frozen=True)
class HiddenSummary:
    """What a warning says about one or more values: how many, and what they hide."""

    count: int
    spelled: tuple[str, ...]
    bidi: tuple[str, ...]
    other: tuple[str, ...]


def _tag_letter(code: int) -> str:
    if 0xE0020 <= code <= 0xE007E:
        return chr(code - 0xE0000)
    return f"[{unicodedata.name(chr(code), f'U+{code:04X}')}]"


def _kind(code: int) -> str:
    if code in BIDI_CONTROLS:
        return KIND_BIDI
    if code in ZERO_WIDTH:
        return KIND_ZERO_WIDTH
    if code in INVISIBLE_LETTERS:
        return KIND_LETTER
    return KIND_FORMAT


def _ranges(codes: Iterable[int]) -> str:
    """A regex character class body for sorted code points, consecutive ones as a range."""
    parts: list[str] = []
    run: list[int] = []
    for code in codes:
        if run and code == run[-1] + 1:
            run.append(code)
            continue
        if run:
            parts.append(_span(run[0], run[-1]))
        run = [code]
    if run:
        parts.append(_span(run[0], run[-1]))
    return "".join(parts)


def _span(first: int, last: int) -> str:
    if first == last:
        return re.escape(chr(first))
    return f"{re.escape(chr(first))}-{re.escape(chr(last))}"


@cache
def _pattern() -> re.Pattern[str]:
    """A run of tag characters, a run of variation selectors, or one other hidden character."""
    # Planes 3 to 13 hold ideographs or nothing, and plane 15 and 16 private use: no
    # format characters; skipping them makes this a fifth of a full walk.
    planes = itertools.chain(range(0x30000), range(TAG_LAST + 1, 0xF0000))
    others = sorted(
        code
        for code in planes
        if code in INVISIBLE_LETTERS or unicodedata.category(chr(code)) == "Cf"
    )
    tags = _span(TAG_FIRST, TAG_LAST)
    selectors = SELECTOR_RUN.pattern
    return re.compile(f"(?P<tags>[{tags}]+)|(?P<selectors>{selectors})|[{_ranges(others)}]")


def has_hidden(text: str) -> bool:
    return _pattern().search(text) is not None


def hidden_parts(text: str) -> Iterator[str | Hidden]:
    """The text in order: visible stretches as strings, hidden characters as `Hidden`."""
    end = 0
    for match in _pattern().finditer(text):
        if match.start() > end:
            yield text[end : match.start()]
        codes = tuple(ord(char) for char in match.group())
        if match.group("tags"):
            kind = KIND_TAG
        elif match.group("selectors"):
            kind = KIND_SELECTORS
        else:
            kind = _kind(codes[0])
        yield Hidden(kind=kind, code_points=codes)
        end = match.end()
    if end < len(text):
        yield text[end:]


def hidden_summary(values: Iterable[Any]) -> HiddenSummary:
    """Every hidden character in these values (strings at any depth, keys included)."""
    count = 0
    spelled: list[str] = []
    bidi: list[str] = []
    other: list[str] = []
    for text in (text for value in values for text in strings_in(value)):
        for part in hidden_parts(text):
            if isinstance(part, str):
                continue
            count += len(part.code_points)
            if part.kind in (KIND_TAG, KIND_SELECTORS):
                spelled.append(part.spelled)
            else:
                name = unicodedata.name(chr(part.code_points[0]), part.label)
                names = bidi if part.kind == KIND_BIDI else other
                if name not in names:
                    names.append(name)
    return HiddenSummary(count=count, spelled=tuple(spelled), bidi=tuple(bidi), other=tuple(other))


@overload
def for_agent(value: str) -> str: ...
@overload
def for_agent(value: Any) -> Any: ...
def for_agent(value: Any) -> Any:
    """What an agent may be handed: `value` with every hidden character removed from
    every string in it, dict keys included. Stored text keeps them, as evidence."""
    if isinstance(value, str):
        return _pattern().sub("", value) if has_hidden(value) else value
    if isinstance(value, dict):
        return {for_agent(key): for_agent(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [for_agent(item) for item in value]
    return value
