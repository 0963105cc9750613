"""Strings a regular expression cannot match without: a search skipped when none is there.

Python's regex engine finds a pattern that opens with plain letters quickly,
but one that opens with an alternation, a word boundary or a case-insensitive
word is tried at every position of the text, and each pattern run from Python
costs a call or two besides. Most strings an agent sends hold no credential,
so most of those searches find nothing. `needles` reads a pattern once and
finds literal strings one of which every match must contain; a `Haystack`
finds which of all the patterns' needles a text holds in one pass, and only
the patterns whose needles are there run. The answer is never different: a
pattern is skipped only when it could not match.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# The regular-expression parser behind `re` (CPython's own, stable across 3.11+); typed
# loosely because typeshed describes these private modules differently across versions.
sre: Any = importlib.import_module("re._constants")
sre_parse: Any = importlib.import_module("re._parser")

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}


@dataclass(frozen=True)
class Needles:
    """Strings one of which every match of some patterns contains.

    `exact` strings are looked for in the text as written; `folded` ones (from
    case-insensitive patterns) are lower-case and looked for in the lower-cased
    text, which is exact for ASCII text only: in other text (where the long s
    or the Kelvin sign match `s` and `k`) they always count as present. Without
    `known` needles the patterns always run.
    """

    exact: frozenset[str] = frozenset()
    folded: frozenset[str] = frozenset()
    known: bool = True

    def __or__(self, other: Needles) -> Needles:
        """The needles of a match of either."""
        return Needles(
            self.exact | other.exact, self.folded | other.folded, self.known and other.known
        )


class Haystack:
    """Which of many patterns may match a text, from their needles found in one pass."""

    def __init__(self, items: Sequence[Needles]) -> None:
        exact: dict[str, set[int]] = {}
        folded: dict[str, set[int]] = {}
        for index, item in enumerate(items):
            for needle in item.exact if item.known else ():
                exact.setdefault(needle, set()).add(index)
            for needle in item.folded if item.known else ():
                folded.setdefault(needle, set()).add(index)
        self._always = frozenset(i for i, item in enumerate(items) if not item.known)
        self._folded_anywhere = frozenset(
            i for i, item in enumerate(items) if item.known and item.folded
        )
        self._exact = tuple((needle, frozenset(at)) for needle, at in sorted(exact.items()))
        self._folded = tuple((needle, frozenset(at)) for needle, at in sorted(folded.items()))

    def may_match(self, text: str) -> list[int]:
        """The positions, in order, of the items whose patterns may match `text`; the
        others cannot."""
        found = [at for needle, at in self._exact if needle in text]
        if text.isascii():
            lowered = text.lower()
            found += [at for needle, at in self._folded if needle in lowered]
        else:
            found.append(self._folded_anywhere)
        return sorted(self._always.union(*found))


def needles(regex: re.Pattern[str]) -> Needles:
    ignorecase = bool(regex.flags & re.IGNORECASE)
    try:
        found = _in_sequence(sre_parse.parse(regex.pattern, regex.flags), ignorecase)
    except _Unknown:
        found = None
    if not found:
        return Needles(known=False)
    # A string that holds another of the set adds nothing: the shorter one is there too.
    kept = frozenset(s for s in found if not any(t != s and t in s for t in found))
    return Needles(folded=kept) if ignorecase else Needles(exact=kept)


def needles_of(regexes: Iterable[re.Pattern[str]]) -> Needles:
    """The needles of a match of any of `regexes`."""
    combined = Needles()
    for regex in regexes:
        combined |= needles(regex)
    return combined


class _Unknown(Exception):
    """A construct whose effect on the literals this reading does not follow."""


def _in_sequence(items: Any, ignorecase: bool) -> frozenset[str] | None:
    """Literal strings one of which every match of the sequence `items` contains.

    Each element of a sequence is part of every match, so any element's set
    will do; runs of literal characters are matched side by side and count as
    one string. The most selective set wins: the longest shortest string.
    """
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            candidates.append(frozenset(["".join(run)]))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL:
            char = chr(av)
            if not ignorecase:
                run.append(char)
                continue
            if char.isascii():
                run.append(char.lower())
                continue
            close_run()
            continue
        close_run()
        found: frozenset[str] | None = None
        if op is sre.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if (add_flags | del_flags) & re.IGNORECASE:
                raise _Unknown
            found = _in_sequence(sub, ignorecase)
        elif op is sre.ATOMIC_GROUP:
            found = _in_sequence(av, ignorecase)
        elif op is sre.BRANCH:
            options = [_in_sequence(option, ignorecase) for option in av[1]]
            known = [option for option in options if option is not None]
            found = frozenset().union(*known) if len(known) == len(options) else None
        elif op in _REPEATS and av[0] >= 1:
            found = _in_sequence(av[2], ignorecase)
        elif op in (sre.GROUPREF, sre.GROUPREF_EXISTS):
            raise _Unknown
        # Anything else (classes, any character, anchors, lookarounds) adds no literal.
        if found:
            candidates.append(found)
    close_run()
    if not candidates:
        return None
    return max(candidates, key=lambda strings: (min(map(len, strings)), -len(strings)))
