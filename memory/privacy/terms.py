"""The deleted content's words: what a deletion searches for, and how a report names them.

A deletion reads a claim's content before wiping it (`claim_content`),
keeps its distinctive words (`candidate_terms`, narrowed by the deletion to
words no other claim holds), finds them in text (`like_patterns`) and names
them in its report only by keyed digest (`term_digest`). Both the erasure
(which rows repeat the content) and the probes (did any survive) use them; after
a restore brings the content back, the digests pick the same words out of it
again (`recover_terms`).
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from django.utils.crypto import salted_hmac

from memory.claims.search import CJK_PATTERN, WORD_PATTERN, normalise

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


def candidate_terms(contents: Iterable[str], *, limit: int | None = CANDIDATE_TERMS) -> list[str]:
    """Words of the content, the longest and rarest first (the first `limit`; None for
    all). Only candidates: a deletion keeps those that occur in no other claim of the
    tenant."""
    # One pass of each pattern over all the contents at once (a subject's 10,000
    # claims): no word or CJK run crosses the newline between two of them.
    text = "\n".join(contents)
    runs = CJK_PATTERN.findall(text)
    counts = Counter(run for run in runs if len(run) >= 2)
    latin = CJK_PATTERN.sub(" ", text) if runs else text
    counts.update(word for word in WORD_PATTERN.findall(latin) if len(word) >= MIN_TERM_CHARS)
    ranking = [(-len(term), count, term) for term, count in counts.items()]
    ranked = sorted(ranking) if limit is None else heapq.nsmallest(limit, ranking)
    return [term for _, _, term in ranked]


def quotable_terms(terms: Iterable[str]) -> list[str]:
    """The words worth looking for outside the memory's own rows. A number alone is
    left out: outside a claim it cannot be told from ids, counts and digests."""
    return [term for term in terms if not term.isdigit()]


def word_regex(terms: Iterable[str]) -> str:
    """A case-insensitive PostgreSQL regular expression (for `~*`) finding any of the
    terms as a whole word: not inside a longer run of letters and digits, so a short
    word does not match the middle of a hex digest."""
    escaped = [re.sub(r"([.\\^$*+?()\[\]{}|])", r"\\\1", term) for term in terms]
    return "(^|[^[:alnum:]])(" + "|".join(escaped) + ")([^[:alnum:]]|$)"


def word_pattern(terms: Iterable[str]) -> re.Pattern[str]:
    """The same in Python: any of the terms as a whole word, ignoring case."""
    ordered = sorted(set(terms), key=len, reverse=True)
    return re.compile(
        r"(?<![^\W_])(?:" + "|".join(re.escape(t) for t in ordered) + r")(?![^\W_])",
        re.IGNORECASE,
    )


def recover_terms(contents: Iterable[str], digests: Iterable[str]) -> list[str]:
    """The words of `contents` whose keyed digest is one of `digests`: a deletion's
    distinctive words, found again in the rows a restore brought back."""
    wanted = set(digests)
    if not wanted:
        return []
    return [term for term in candidate_terms(contents, limit=None) if term_digest(term) in wanted]
