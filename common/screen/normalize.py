"""One canonical spelling of a string, so the screen judges what a reader sees.

An attacker hides a phrase from a pattern by changing how it is written, not
what it says: full-width or compatibility letters, zero-width and soft-hyphen
splits, invisible Unicode tag characters, combining marks, Cyrillic or Greek
letters and small capitals that look like Latin ones, letters spelled out with
separators ("i.g.n.o.r.e"), words joined by underscores, or leetspeak.

An invisible character can stand where a space was ("ignore\u200ball\u200bprevious")
or inside a word ("ig\u00adnore"). `canonical` reads it as a separator, so fused
words come apart; `canonical_joined` removes it, so a split word is whole again;
the screens judge both. Secrets are matched on `strip_invisible`, which removes
them. `fold_leet` undoes leetspeak, and is kept apart because digits in a secret
or a date must survive. The results are for judging only, never stored.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache, lru_cache

from confusable_homoglyphs.confusables import confusables_data

# Letters that render as nothing; category Lo or So, so the format-character
# strip below does not remove them. The console's badges (common.hidden_chars) read
# the same set.
INVISIBLE_LETTERS = frozenset({0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0})
# Lower-case Cyrillic and Greek letters that look like a Latin letter only in
# their capital form (Cyrillic Ve, En, Ka; Greek Tau...). The Unicode confusables table maps the
# capitals; we compare lower-cased text, so the small letters are added here.
_LOWERCASE_LOOKALIKES = {
    "в": "b",
    "к": "k",
    "м": "m",
    "н": "h",
    "п": "n",
    "т": "t",
    "ь": "b",
    "β": "b",
    "ε": "e",
    "ζ": "z",
    "η": "n",
    "κ": "k",
    "μ": "m",
    "τ": "t",
    "χ": "x",
    "ω": "w",
}
# Latin small capitals (U+0262 "LATIN LETTER SMALL CAPITAL G"...): the confusables
# table lacks most of them and NFKC keeps them; each reads as the letter it names.
_SMALL_CAPITALS = (
    0x262,
    0x26A,
    0x274,
    0x280,
    0x28F,
    0x299,
    0x29C,
    0x29F,
    0x1D00,
    0x1D04,
    0x1D05,
    0x1D07,
    0x1D0A,
    0x1D0B,
    0x1D0D,
    0x1D0F,
    0x1D18,
    0x1D1B,
    0x1D1C,
    0x1D20,
    0x1D21,
    0x1D22,
    0xA730,
    0xA731,
    0xA7AF,
)
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)
# A run of letters and leet characters; folded only when it holds a letter.
_LEET_WORD = re.compile(r"[a-z0-9@$]+")
_LEET_AFTER_LETTER = re.compile(r"[a-z][0-9@$]")
# Strings up to this length are remembered, so the injection and secret screens
# that both read a string normalise and decode it once.
CACHED_UP_TO = 4096
_SPACES = re.compile(r"\s+")
# "i.g.n.o.r.e" or "i g n o r e": three or more single letters, each followed by the
# same separator; a different separator (or two) between such runs splits words.
_SPACED_LETTERS = re.compile(r"(?<![^\W_])[^\W\d_]([\s.\-_*])(?:[^\W\d_]\1){1,}[^\W\d_](?![^\W_])")
# Underscores and hyphens joining words ("ignore_all_previous") read as spaces.
_JOINERS = re.compile(r"[_]+")


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return 0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or code >= 0x20000


@cache
def _strip_table() -> dict[int, None]:
    """Format characters (Cf: zero-width, soft hyphen, bidi, tags) and invisible letters."""
    codes = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    return dict.fromkeys([*codes, *sorted(INVISIBLE_LETTERS)])


@cache
def _confusable_table() -> dict[int, str]:
    """Every non-ASCII letter that looks like one ASCII letter or digit, mapped to it.

    A capital prefers a capital target, a small letter a small one; the target
    is lower-cased, as the text will be. The table files capital I under l (they
    look alike); a capital that looks like l is read as I (Greek Iota).
    """
    table: dict[int, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii() or _is_cjk(char):
            continue
        targets = [
            glyph["c"]
            for glyph in homoglyphs
            if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalnum()
        ]
        if not targets:
            continue
        same_case = [t for t in targets if t.isalpha() and t.isupper() == char.isupper()]
        target = (same_case or targets)[0].lower()
        table[ord(char)] = "i" if target == "l" and char.isupper() else target
    table.update({ord(k): v for k, v in _LOWERCASE_LOOKALIKES.items()})
    table.update({code: unicodedata.name(chr(code))[-1].lower() for code in _SMALL_CAPITALS})
    return table


@cache
def _separator_table() -> dict[int, str]:
    return dict.fromkeys(_strip_table(), " ")


def strip_invisible(text: str) -> str:
    return text.translate(_strip_table())


def invisible_as_spaces(text: str) -> str:
    """Every format character (zero-width, bidi, tag) and invisible letter read as a space."""
    return text.translate(_separator_table())


def has_invisible(text: str) -> bool:
    return not text.isascii() and text.translate(_strip_table()) != text


def canonical(text: str) -> str:
    """Compatibility-fold, invisibles as separators, drop accents, lower-case, fold look-alikes."""
    return _canonical_cached(text, True) if len(text) <= CACHED_UP_TO else _canonical(text, True)


def canonical_joined(text: str) -> str:
    """`canonical`, with invisible characters removed instead of read as separators."""
    return _canonical_cached(text, False) if len(text) <= CACHED_UP_TO else _canonical(text, False)


def clear_cache() -> None:
    _canonical_cached.cache_clear()


@lru_cache(maxsize=2048)
def _canonical_cached(text: str, separate: bool) -> str:
    return _canonical(text, separate)


def _canonical(text: str, separate: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = text.translate(_separator_table() if separate else _strip_table())
    if not text.isascii():
        decomposed = unicodedata.normalize("NFD", text)
        text = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
        text = unicodedata.normalize("NFC", text)
    if not text.isascii():
        # Before and after lower-casing: a capital and its small letter can
        # look like different Latin letters (Greek Nu is N, nu is v).
        text = text.translate(_confusable_table()).lower().translate(_confusable_table())
    else:
        text = text.lower()
    text = _SPACED_LETTERS.sub(lambda m: m.group().replace(m.group(1), ""), text)
    text = _JOINERS.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def fold_leet(text: str) -> str:
    """Read digits and symbols inside words as the letters they stand for."""

    def fold(match: re.Match[str]) -> str:
        word = match.group()
        # A leet word has a substitute right after a letter ("1gn0r3", "m3"); ordinals,
        # times and short codes ("14th", "3pm", "q4") are left alone.
        return word.translate(_LEET) if len(word) >= 3 and _LEET_AFTER_LETTER.search(word) else word

    return _LEET_WORD.sub(fold, text)
