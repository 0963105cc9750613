"""Whether a recall knows enough to answer (docs/recall.md, "Abstention").

Ranking always orders the legal set, however unrelated it is to the question; this
module judges the evidence itself. Each legal claim's relevance fuses what the ranking
statement and the query's vector already gave: its cosine similarity to the question,
plus `RECALL_TOPIC_WEIGHT` times the question's similarity to the words of its predicate
(`predicate_topics`: "where do they live" is near `home_city` whatever city the text
names), a bonus when every query term is in its full text or most of the question's
n-grams are in it, and exact evidence (an identifier of the question such as `ERR_4711`
in it, or its predicate named by the question) that clears any floor. When the best
claim's relevance is below `RECALL_ABSTAIN_FLOOR`, recall returns nothing and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from memory.claims.search import CJK_PATTERN, WORD_PATTERN, ngrams, normalise
from memory.claims.selectors.predicate_topics import predicate_phrase
from memory.claims.selectors.recall_ranking import Ranked

# The stable code of an abstention: the legal set held claims, none about the question.
NOTHING_RELEVANT = "nothing_relevant"

STRONG = "strong"
WEAK = "weak"

# Relevance added by a lexical match (every query term in the claim's full text, or at
# least `MATCH_THRESHOLD` of its n-grams): a bonus, not proof, since a one-word question
# ("their height") matches a claim about something else ("afraid of heights"). Exact
# evidence adds more than any similarity, so it clears any floor.
LEXICAL_BONUS = 0.1
EXACT_BONUS = 1.0

# A query word is an identifier when it carries a digit or a joiner that prose does not
# use inside words (`ERR_4711`, `src/app.py`, `v2.3`, `E1234`).
_IDENTIFIER_MARK = re.compile(r"[0-9_./:]")
_MIN_IDENTIFIER = 4


def query_identifiers(query: str) -> list[str]:
    """The query's identifier-like words, as normalised (lower case, NFKC)."""
    words = WORD_PATTERN.findall(CJK_PATTERN.sub(" ", normalise(query)))
    return [
        w for w in dict.fromkeys(words) if len(w) >= _MIN_IDENTIFIER and _IDENTIFIER_MARK.search(w)
    ]


def identifier_grams(query: str) -> list[str]:
    """The n-grams a claim must hold for every identifier of the query to be in it."""
    return ngrams(" ".join(query_identifiers(query)))


def _query_stems(query: str) -> set[str]:
    words = WORD_PATTERN.findall(CJK_PATTERN.sub(" ", normalise(query)))
    return {word[:5] for part in words for word in re.split(r"[_./:\-]", part) if len(word) > 2}


def predicate_named(predicate: str, query_stems: set[str]) -> bool:
    """Whether the question names the claim's predicate (`home_city`: "home city")."""
    words = [w[:5] for w in re.split(r"[_./:\-\s]+", normalise(predicate)) if len(w) > 2]
    return bool(words) and all(word in query_stems for word in words)


@dataclass(frozen=True)
class Verdict:
    """What the evidence says about a recall: whether it could judge at all (a question,
    and a vector or exact evidence for every legal claim), whether it abstains, the best
    relevance it found and the floor it was held to."""

    asked: bool
    judged: bool
    abstained: bool
    best: float | None
    floor: float
    strong: float
    reason: str | None = None

    def relevance(self, score: float | None) -> str | None:
        """An item's label: none for a recall without a question."""
        if not self.asked:
            return None
        return STRONG if score is not None and score >= self.strong else WEAK

    def trace(self) -> dict[str, object]:
        return {
            "judged": self.judged,
            "abstained": self.abstained,
            "best": None if self.best is None else round(self.best, 4),
            "floor": self.floor,
            "strong": self.strong,
            "reason": self.reason,
        }


def relevance_score(r: Ranked, *, query_stems: set[str], topic_weight: float) -> float | None:
    """The claim's relevance to the question; none when nothing measured it (no vector,
    or only a lexical match, which the floor was not fitted on)."""
    exact = bool(r.identifier_hit) or predicate_named(r.predicate, query_stems)
    lexical = r.fulltext_rank is not None or r.ngram_rank is not None
    if r.cosine is None and not exact:
        return None  # a lexical bonus alone is not on the floor's scale
    if r.topic is None and predicate_phrase(r.predicate) and not exact:
        return None  # its predicate's words were not embedded: the floor assumes them
    score = (r.cosine or 0.0) + topic_weight * (r.topic or 0.0)
    if lexical:
        score += LEXICAL_BONUS
    if exact:
        score += EXACT_BONUS
    return score


def recall_verdict(*, legal: Sequence[Ranked], query: str, has_question: bool) -> Verdict:
    """Score every legal claim (`Ranked.relevance`) and judge the recall.

    Only a recall with a question can abstain: a recall by subject without a query is a
    listing. It abstains only when every legal claim was measured (had a vector or exact
    evidence) and none reached the floor; while a claim waits for its vector, or with
    the embedder off, absence cannot be told from a claim not yet compared.
    """
    floor = settings.RECALL_ABSTAIN_FLOOR
    strong = settings.RECALL_STRONG_RELEVANCE
    if not has_question:
        return Verdict(
            asked=False, judged=False, abstained=False, best=None, floor=floor, strong=strong
        )
    stems = _query_stems(query)
    topic_weight = settings.RECALL_TOPIC_WEIGHT
    scores = []
    for r in legal:
        r.relevance = relevance_score(r, query_stems=stems, topic_weight=topic_weight)
        if r.relevance is not None:
            scores.append(r.relevance)
    best = max(scores) if scores else None
    judged = bool(legal) and len(scores) == len(legal)
    abstained = judged and best is not None and best < floor
    return Verdict(
        asked=True,
        judged=judged,
        abstained=abstained,
        best=best,
        floor=floor,
        strong=strong,
        reason=NOTHING_RELEVANT if abstained else None,
    )
