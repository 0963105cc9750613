"""Strings a regular expression cannot match without: a search skipped when none is there.

Python's regex engine finds a pattern that opens with plain letters quickly,
but one that opens with an alternation, a word boundary or a case-insensitive
word is tried at every position of the text, and each pattern run from Python
costs a call or two besides. Most strings an agent sends hold no credential,
so most of those searches find nothing, and most notes fire no injection
signal. `needles` reads a pattern once and finds literal strings one of which
every match must contain; a `Haystack` finds which of all the patterns'
needles a text holds in one pass, and only the patterns whose needles are
there run. `LabelledPatterns` does this for rules written as many patterns
under a few labels (injection signals, sensitivity classes). The answer is
never different: a pattern is skipped only when it could not match.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
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


# A needle made of word characters alone lies inside one run of them wherever it
# is found, so a text's words tell which such needles it holds.
_WORD = re.compile(r"[A-Za-z0-9_]+")


class Haystack:
    """Which of many patterns may match a text, from their needles found in one pass.

    Each needle is looked for in the text, unless the haystack `remembers_words`:
    then the needles inside each word of a text are remembered, and a text of
    known words costs one pass to find them and one look-up per word, whatever
    the number of needles. That pays for hundreds of needles over texts that
    repeat their words (notes in a batch); for a few dozen, trying each is
    cheaper. Either way a text all in ASCII cannot hold a needle that is not,
    so those are not looked for in it.
    """

    # Words remembered per haystack before it starts over, and the most new words one
    # text may add: a text of many unseen words (a file of identifiers) is answered
    # all the same, but fills no memory.
    _WORDS_REMEMBERED = 20_000
    _NEW_WORDS_PER_TEXT = 64

    def __init__(self, items: Sequence[Needles], *, remembers_words: bool = False) -> None:
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
        exact_words, exact_ascii, self._exact_other = _by_kind(exact)
        folded_words, folded_ascii, _ = _by_kind(folded)  # folded needles are ASCII
        self._remembers_words = remembers_words and bool(exact_words or folded_words)
        if self._remembers_words:
            self._exact_ascii, self._folded_ascii = exact_ascii, folded_ascii
            self._exact_words = _WordNeedles(exact_words)
            self._folded_words = _WordNeedles(folded_words)
            self._held_by_word: dict[str, frozenset[int]] = {}
        else:
            self._exact_ascii = exact_words + exact_ascii
            self._folded_ascii = folded_words + folded_ascii

    def may_match(self, text: str) -> list[int]:
        """The positions, in order, of the items whose patterns may match `text`; the
        others cannot."""
        ascii_only = text.isascii()
        found = self._in_words(text) if self._remembers_words else []
        found += [at for needle, at in self._exact_ascii if needle in text]
        if ascii_only:
            if self._folded_ascii:
                lowered = text.lower()
                found += [at for needle, at in self._folded_ascii if needle in lowered]
        else:
            found += [at for needle, at in self._exact_other if needle in text]
            # Folded needles stand for the case-insensitive reading of ASCII only.
            found.append(self._folded_anywhere)
        return sorted(self._always.union(*found))

    def _in_words(self, text: str) -> list[frozenset[int]]:
        """The positions of the word needles in `text`: exact ones in its words, folded
        ones in its words lower-cased (in other text than ASCII those all count anyway)."""
        words = set(_WORD.findall(text))
        memory = self._held_by_word
        try:
            return [memory[word] for word in words]
        except KeyError:
            pass
        new = [word for word in words if word not in memory]
        if len(new) > self._NEW_WORDS_PER_TEXT:
            return [self._exact_words.held_in(text) | self._folded_words.held_in(text.lower())]
        if len(memory) + len(new) > self._WORDS_REMEMBERED:
            memory.clear()
        found = []
        for word in words:
            held = memory.get(word)
            if held is None:
                held = memory[word] = self._exact_words.held_in(word) | self._folded_words.held_in(
                    word.lower()
                )
            found.append(held)
        return found


_Placed = list[tuple[str, frozenset[int]]]  # needles with the positions they stand for


def _by_kind(positions: dict[str, set[int]]) -> tuple[_Placed, _Placed, _Placed]:
    """Needles with their positions: (made of word characters, other ASCII, not ASCII)."""
    words: _Placed = []
    ascii_: _Placed = []
    other: _Placed = []
    for needle, at in sorted(positions.items()):
        kind = words if _WORD.fullmatch(needle) else ascii_ if needle.isascii() else other
        kind.append((needle, frozenset(at)))
    return words, ascii_, other


_NONE: frozenset[int] = frozenset()  # what most words hold: one set for them all


class _WordNeedles:
    """Needles made of word characters, found in a text from the needles each of its
    characters opens rather than by trying every needle."""

    def __init__(self, needles: _Placed) -> None:
        self._one_char = {needle: at for needle, at in needles if len(needle) == 1}
        self._opening: dict[str, list[tuple[str, frozenset[int]]]] = {}
        for needle, at in needles:
            if len(needle) > 1:
                self._opening.setdefault(needle[:2], []).append((needle, at))

    def held_in(self, text: str) -> frozenset[int]:
        """The positions of the needles `text` holds."""
        found = []
        for start in range(len(text)):
            one = self._one_char.get(text[start])
            if one is not None:
                found.append(one)
            for needle, at in self._opening.get(text[start : start + 2], ()):
                if text.startswith(needle, start):
                    found.append(at)
        return frozenset().union(*found) if found else _NONE


class LabelledPatterns:
    """Patterns under labels, answering which labels have a pattern that matches a text.

    Each pattern is cut at its top-level bars and each piece gets the needles
    it needs (`needles_required`), so a piece runs only on text that holds one
    of each: the answer is the one searching the text with every pattern would
    give.
    """

    def __init__(
        self, labelled: Iterable[tuple[str, str]], *, flags: int = 0, remembers_words: bool = False
    ) -> None:
        self._pieces = tuple(
            (label, re.compile(piece, flags))
            for label, pattern in labelled
            for piece in alternatives(pattern)
        )
        required = [needles_required(regex) for _, regex in self._pieces]
        # The haystack's first items are the pieces' most selective needles, in the
        # pieces' order; the others follow, and each piece knows where its own are.
        extra: list[Needles] = []
        self._also_required: list[range] = []
        for _most_selective, *others in required:
            start = len(self._pieces) + len(extra)
            extra += others
            self._also_required.append(range(start, start + len(others)))
        self._haystack = Haystack(
            [first for first, *_ in required] + extra, remembers_words=remembers_words
        )

    def labels_in(self, text: str, *, known: AbstractSet[str] = frozenset()) -> set[str]:
        """The labels, besides those `known` already, of the patterns that match `text`."""
        found: set[str] = set()
        held = self._haystack.may_match(text)
        present = set(held)
        for index in held:
            if index >= len(self._pieces):
                break
            label, regex = self._pieces[index]
            if (
                label not in found
                and label not in known
                and all(other in present for other in self._also_required[index])
                and regex.search(text)
            ):
                found.add(label)
        return found


# Global inline flags ("(?i)" first) would apply to the first piece alone once cut.
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def alternatives(pattern: str) -> list[str]:
    """`pattern` cut at its top-level bars: it matches wherever one of the pieces does.
    A pattern that opens with global inline flags stays whole."""
    if _GLOBAL_FLAGS.match(pattern):
        return [pattern]
    pieces: list[str] = []
    start = depth = 0
    in_class = escaped = False
    for at, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            pieces.append(pattern[start:at])
            start = at + 1
    pieces.append(pattern[start:])
    return pieces


def needles(regex: re.Pattern[str]) -> Needles:
    ignorecase = bool(regex.flags & re.IGNORECASE)
    try:
        found = _in_sequence(sre_parse.parse(regex.pattern, regex.flags), ignorecase)
    except _Unknown:
        found = None
    if not found:
        return Needles(known=False)
    return _kept(found, ignorecase)


def needles_required(regex: re.Pattern[str]) -> list[Needles]:
    """Needles a match of `regex` holds one of each: the most selective (`needles`) first.

    A pattern whose words are apart ("if anyone asks") is ruled out by any of
    them missing, not only by the rarest.
    """
    best = needles(regex)
    if not best.known:
        return [best]
    ignorecase = bool(regex.flags & re.IGNORECASE)
    sets = _sets_in_sequence(sre_parse.parse(regex.pattern, regex.flags), ignorecase)
    # A set with a string of one or two characters rules out little (most texts hold
    # "a" or "to") and costs as much to look for as any other.
    others = [_kept(found, ignorecase) for found in sets if min(map(len, found)) >= 3]
    return [best, *(other for other in others if other != best)]


def _kept(found: frozenset[str], ignorecase: bool) -> Needles:
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

    Any of `_sets_in_sequence` will do: the most selective wins, the one with
    the longest shortest string.
    """
    candidates = _sets_in_sequence(items, ignorecase)
    if not candidates:
        return None
    return max(candidates, key=lambda strings: (min(map(len, strings)), -len(strings)))


def _sets_in_sequence(items: Any, ignorecase: bool) -> list[frozenset[str]]:
    """Sets of literal strings, every match of the sequence `items` containing one of each.

    Each element of a sequence is part of every match, so each element's set
    holds; runs of literal characters are matched side by side and count as
    one string.
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
    return candidates
