"""Whether a recall knows enough to answer (docs/recall.md, "Abstention").

Ranking always orders the legal set, however unrelated it is to the question; this
module judges the evidence itself. Each legal claim's relevance fuses what the ranking
statement and the query's vector already gave: its cosine similarity to the question,
plus `RECALL_TOPIC_WEIGHT` times the question's similarity to the words of its predicate
(`predicate_topics`: "where do they live" is near `home_city` whatever city the text
names), a bonus when every query term is in its full text or most of the question's
n-grams are in it, and exact evidence (an identifier of the question such as `ERR_4711`
in it, or its predicate named by the question) that clears any floor. A claim whose
topic is further from the question than the question's asked attribute
(`asked_attributes`: the nearest of what people are commonly asked about) is about
something else: it loses `RECALL_ATTRIBUTE_WEIGHT` times the shortfall. When the best
claim's relevance is below `RECALL_ABSTAIN_FLOOR`, recall returns nothing and says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

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
    # The question's similarity to its nearest common attribute (`asked_attributes`).
    asked_similarity: float | None = None
    # Each measured legal claim's evidence: what `best_at` weighs anew (the calibration).
    evidence: tuple[Evidence, ...] = field(default=(), repr=False, compare=False)

    def relevance(self, score: float | None) -> str | None:
        """An item's label: none for a recall without a question."""
        if not self.asked:
            return None
        return STRONG if score is not None and score >= self.strong else WEAK

    def best_at(self, *, topic_weight: float, attribute_weight: float) -> float | None:
        """The best relevance the same evidence gives under other weights."""
        scores = [
            e.score(
                topic_weight=topic_weight,
                asked=self.asked_similarity,
                attribute_weight=attribute_weight,
            )
            for e in self.evidence
        ]
        return max(scores) if scores else None

    def trace(self) -> dict[str, object]:
        return {
            "judged": self.judged,
            "abstained": self.abstained,
            "best": None if self.best is None else round(self.best, 4),
            "floor": self.floor,
            "strong": self.strong,
            "reason": self.reason,
            "asked": None if self.asked_similarity is None else round(self.asked_similarity, 4),
        }


@dataclass(frozen=True, slots=True)
class Evidence:
    """What measured one legal claim's relevance, before any weight: its cosine
    similarity to the question, the question's similarity to its predicate's words, and
    whether it matched lexically or exactly."""

    cosine: float
    topic: float | None
    lexical: bool
    exact: bool

    def score(self, *, topic_weight: float, asked: float | None, attribute_weight: float) -> float:
        """The claim's relevance: `asked` is the question's similarity to its nearest
        common attribute, and a claim whose topic falls short of it loses
        `attribute_weight` times the shortfall."""
        score = self.cosine + topic_weight * (self.topic or 0.0)
        if self.lexical:
            score += LEXICAL_BONUS
        if self.exact:
            score += EXACT_BONUS
        if asked is not None and self.topic is not None:
            score -= attribute_weight * max(0.0, asked - self.topic)
        return score


def claim_evidence(r: Ranked, *, query_stems: set[str]) -> Evidence | None:
    """The claim's evidence; none when nothing measured it (no vector, or only a lexical
    match, which the floor was not fitted on)."""
    exact = bool(r.identifier_hit) or predicate_named(r.predicate, query_stems)
    lexical = r.fulltext_rank is not None or r.ngram_rank is not None
    if r.cosine is None and not exact:
        return None  # a lexical bonus alone is not on the floor's scale
    if r.topic is None and predicate_phrase(r.predicate) and not exact:
        return None  # its predicate's words were not embedded: the floor assumes them
    return Evidence(cosine=r.cosine or 0.0, topic=r.topic, lexical=lexical, exact=exact)


def recall_verdict(
    *, legal: Sequence[Ranked], query: str, has_question: bool, asked: float | None = None
) -> Verdict:
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
    attribute_weight = settings.RECALL_ATTRIBUTE_WEIGHT
    scores = []
    measured = []
    for r in legal:
        evidence = claim_evidence(r, query_stems=stems)
        r.relevance = None
        if evidence is not None:
            r.relevance = evidence.score(
                topic_weight=topic_weight, asked=asked, attribute_weight=attribute_weight
            )
            scores.append(r.relevance)
            measured.append(evidence)
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
        asked_similarity=asked,
        evidence=tuple(measured),
    )
