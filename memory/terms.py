"""The deleted content's words: what a deletion searches for, and how a report names them.

A deletion reads a claim's content before wiping it (`claim_content`),
keeps its distinctive words (`candidate_terms`, narrowed by the deletion to
words no other claim holds), finds them in text (`like_patterns`) and names
them in its report only by keyed digest (`term_digest`). Both the erasure
(which rows repeat the content) and the probes (did any survive) use them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from django.utils.crypto import salted_hmac

from memory.search import _CJK, _WORD, normalise

MIN_TERM_CHARS = 4
CANDIDATE_TERMS = 64


def term_digest(term: str) -> str:
    """A keyed digest of a word: a report can name it without holding it, and without
    offering a dictionary attack on common words."""
    digest = salted_hmac("memdesk.deletion.term", term, algorithm="sha256").hexdigest()
    return f"hmac-sha256:{digest}"


def like_patterns(terms: Iterable[str]) -> list[str]:
    """ILIKE patterns finding each term anywhere in a text."""
    escaped = (t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for t in terms)
    return [f"%{t}%" for t in escaped]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def claim_content(*, text: str, value: Any) -> str:
    """A claim's searchable content, normalised the way recall normalises it."""
    return normalise(" ".join([text, *_strings(value)]))


def candidate_terms(contents: Iterable[str]) -> list[str]:
    """Words of the content, the longest and rarest first. Only candidates: a deletion
    keeps those that occur in no other claim of the tenant."""
    counts: Counter[str] = Counter()
    for content in contents:
        for run in _CJK.findall(content):
            if len(run) >= 2:
                counts[run] += 1
        for word in _WORD.findall(_CJK.sub(" ", content)):
            if len(word) >= MIN_TERM_CHARS:
                counts[word] += 1
    ranked = sorted(counts, key=lambda term: (-len(term), counts[term], term))
    return ranked[:CANDIDATE_TERMS]
