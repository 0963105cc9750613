"""Text features for recall: character n-grams beside PostgreSQL full-text search.

Full-text search splits words, which fails for unsegmented scripts (Chinese)
and for identifiers (ERR_4711, src/app/main.py). Character n-grams stored in a
GIN-indexed array find both, with no extension needed: bigrams for CJK runs,
trigrams for everything else.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

CJK_PATTERN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
WORD_PATTERN = re.compile(r"[^\W_]+(?:[_./:\-][^\W_]+)*", re.UNICODE)
MAX_NGRAMS = 2000
# Query n-grams that must be present for a claim to count as matching.
MATCH_THRESHOLD = 0.6


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def ngrams(text: str) -> list[str]:
    text = normalise(text)
    grams: set[str] = set()
    for run in CJK_PATTERN.findall(text):
        if len(run) == 1:
            grams.add(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    latin = CJK_PATTERN.sub(" ", text)
    for word in WORD_PATTERN.findall(latin):
        if len(word) <= 3:
            grams.add(word)
            continue
        grams.update(word[i : i + 3] for i in range(len(word) - 2))
    return sorted(grams)[:MAX_NGRAMS]


def searchable_text(*, predicate: str, text: str, value: Any) -> str:
    value_text = value if isinstance(value, str) else ""
    return " ".join(part for part in (predicate.replace("_", " "), text, value_text) if part)


def matched_terms(query: str, text: str) -> list[str]:
    """Query words found in the text, for the `why` explanation."""
    haystack = normalise(text)
    terms: list[str] = []
    for word in WORD_PATTERN.findall(CJK_PATTERN.sub(" ", normalise(query))):
        stem = word[:4] if len(word) > 4 else word
        if len(word) > 2 and stem in haystack and word not in terms:
            terms.append(word)
    for run in CJK_PATTERN.findall(normalise(query)):
        if run in haystack:
            terms.append(run)
    return terms
