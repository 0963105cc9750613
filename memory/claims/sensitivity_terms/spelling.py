# ruff: noqa: RUF001 -- words in fifteen languages: their letters are meant as written.
"""How a phrase is spelled the way the rules will read text; the package's docstring says why."""

from __future__ import annotations

import re
import unicodedata

from common.screen.normalize import canonical

_PLACEHOLDERS = {
    "…": r"(?:\S+ ){0,3}",
    "#": r"\d+",
    "§": r"(?<!\d)(?:[1-9]|1[0-7])(?!\d)",
}
_PLACEHOLDER = re.compile("([…#§])")


def _literal(part: str) -> str:
    """One run of a phrase's own words as a pattern: canonical, escaped, its edges kept."""
    lead = " " if part[:1].isspace() else ""
    trail = " " if part[-1:].isspace() and part.strip() else ""
    escaped = re.escape(lead + canonical(part) + trail)
    return escaped.replace(r"\-", "[- ]?").replace("'", "['’]?").replace("’", "['’]?")


def _spellings(phrase: str) -> list[str]:
    # `…` takes the space after each word it stands for; the phrase's own goes.
    phrase = phrase.replace("… ", "…")
    forms = {phrase, phrase.lower(), phrase.upper(), phrase.capitalize(), phrase.title()}
    spelled = {
        "".join(
            _PLACEHOLDERS[part] if part in _PLACEHOLDERS else _literal(part)
            for part in _PLACEHOLDER.split(form)
            if part
        )
        for form in forms
    }
    return sorted(spelled, key=lambda s: (-len(s), s))


def alternation(phrases: tuple[str, ...]) -> str:
    return "(?:" + "|".join(s for p in phrases for s in _spellings(p)) + ")"


def _script(spelling: str) -> str:
    """Where a spelling's first letter outside ASCII lies (its Unicode block), or ''."""
    return next((unicodedata.name(c, "?").split()[0] for c in spelling if not c.isascii()), "")


def _by_script(phrases: tuple[str, ...], template: str) -> str:
    """`template` around the phrases, once per script they are spelled in, joined at the top
    level: the rules run a part only on text in its script (see memory.claims.sensitivity)."""
    grouped: dict[str, list[str]] = {}
    for spelling in (s for p in phrases for s in _spellings(p)):
        grouped.setdefault(_script(spelling), []).append(spelling)
    return "|".join(template.format("(?:" + "|".join(g) + ")") for g in grouped.values())


def words(*phrases: str) -> str:
    """Any of `phrases` as whole words (scripts that space their words)."""
    return _by_script(phrases, r"\b{}\b")


def word_starts(*phrases: str) -> str:
    """Any of `phrases` opening a word, whatever ending it takes (inflected languages)."""
    return _by_script(phrases, r"\b{}\w*")


def anywhere(*phrases: str) -> str:
    """Any of `phrases` anywhere: scripts without spaces, or words that take prefixes."""
    return _by_script(phrases, "{}")
