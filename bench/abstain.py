"""`python -m bench abstain`: fit recall's relevance (its topic and attribute weights and
its floor) on the tuning half of the abstention corpus (testing/corpus/recall_abstain,
with its extra tuning questions) and the recall bench's hard paraphrases, and measure it
on the held-out half.

Every question is recalled once, with abstention off, keeping its verdict's evidence
(each legal claim's cosine, topic similarity, lexical and exact matches, and the
question's asked-attribute similarity); each candidate pair of `WEIGHTS` weighs that
evidence anew (`Verdict.best_at`), as recall would have. For a pair, the floor is the highest that
abstains on at most `ALLOWED_WRONG` of the tuning half's answerable questions (its
column and its extra questions) and keeps the recall bench's hit@10 at
`RECALL_HIT_GOAL` or more, losing at most `RECALL_LOST` of its hits (hiding an answer
is the worse mistake: refusal never buys recall); the pair chosen is the one whose floor
refuses most never-provided tuning questions (the corpus's and those asked of the
recall bench's users). The strong
level is the lowest that at most `STRONG_LEAK` of those reach. Both rates are printed for
both halves at the fitted values and at those in force, with the trade-off curve (floor
-> both rates, hit@10); the held-out half never chooses anything.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection
from django.utils import timezone

from accounts.models import Tenant
from accounts.services import tenant_create
from bench.recall import _questions as recall_questions
from bench.recall_data import active_claims_create, search_vectors_fill, seed_users
from memory.claims.embedders import embedder
from memory.claims.models import Claim, Subject
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.recall_abstention import Verdict
from memory.claims.selectors.recall_ranking import RecallQuery, cached_query_vector
from memory.claims.services.embeddings import claims_embed_pending
from testing.abstain_corpus import (
    EXTRA,
    SPLITS,
    Question,
    extra_questions,
    questions,
    recall_never_questions,
    subjects,
)

ALLOWED_WRONG = 0.03
STRONG_LEAK = 0.05
RECALL_HIT_GOAL = 0.97
RECALL_LOST = 0.005
# (RECALL_TOPIC_WEIGHT, RECALL_ATTRIBUTE_WEIGHT) pairs tried.
WEIGHTS = tuple(
    (topic, attribute)
    for topic in (0.0, 0.15, 0.25, 0.35)
    for attribute in (0.0, 0.25, 0.5, 0.75, 1.0)
)
LIMIT = 10
# The recall bench's world (bench/recall_data.py): users of 200 memories each, six hard
# paraphrases asked of each; 50 users ask the recall section's 300 questions.
RECALL_USERS = int(os.environ.get("BENCH_ABSTAIN_RECALL_USERS", "50"))


@dataclass(frozen=True)
class Asked:
    question: Question
    best: float | None  # the best legal claim's relevance
    hit: bool  # the answering claim among the first LIMIT items (abstention off)


@dataclass(frozen=True)
class Recalled:
    question: Question
    verdict: Verdict | None
    hit: bool

    def at(self, weights: tuple[float, float]) -> Asked:
        best = None
        if self.verdict is not None and self.verdict.judged:
            best = self.verdict.best_at(topic_weight=weights[0], attribute_weight=weights[1])
        return Asked(question=self.question, best=best, hit=self.hit)


def _seed(tenant: Tenant) -> dict[str, Subject]:
    now = timezone.now()
    found = {}
    for corpus_subject in subjects():
        subject = Subject.objects.create(
            tenant=tenant, kind="user", ref=corpus_subject.name.lower()
        )
        found[subject.key] = subject
        rows = [(f.predicate, f.text, f.value) for f in corpus_subject.facts]
        rows += [(f"note_{k}", note, "") for k, note in enumerate(corpus_subject.notes)]
        active_claims_create(tenant=tenant, subject=subject, rows=rows, now=now)
    search_vectors_fill(tenant=tenant)
    return found


# The recall bench's paraphrases, measured beside the corpus's halves, and
# never-provided questions asked of its users (tuning only).
RECALL = "recall"
RECALL_NEVER = "recall_never"
# What the fit reads: never the held-out half.
TUNING = ("tuning", EXTRA)


def _asked(subject: Subject, text: str, predicate: str) -> Recalled:
    q = RecallQuery(subject=subject, query=text, limit=LIMIT)
    result = claims_recall(tenant=subject.tenant, q=q)
    return Recalled(
        question=Question(subject.key, predicate, text),
        verdict=result.verdict,
        hit=bool(predicate) and any(item.claim.predicate == predicate for item in result.items),
    )


def ask(
    by_key: dict[str, Subject], paraphrases: list[tuple[Subject, str, str]]
) -> dict[str, list[Recalled]]:
    """Every question once, abstention off: its verdict's evidence and its hit."""
    floor = settings.RECALL_ABSTAIN_FLOOR
    settings.RECALL_ABSTAIN_FLOOR = -math.inf  # measure, never abstain
    try:
        asked = {
            split: [_asked(by_key[q.subject], q.text, q.predicate) for q in questions(split)]
            for split in SPLITS
        }
        asked[EXTRA] = [_asked(by_key[q.subject], q.text, q.predicate) for q in extra_questions()]
        asked[RECALL] = [_asked(s, text, predicate) for s, predicate, text in paraphrases]
        never = recall_never_questions()
        users = list(dict.fromkeys(s for s, _predicate, _text in paraphrases))
        asked[RECALL_NEVER] = [
            _asked(s, text, "") for k, s in enumerate(users) for text in never[k % 3 :: 3]
        ]
        return asked
    finally:
        settings.RECALL_ABSTAIN_FLOOR = floor


def _abstains(a: Asked, floor: float) -> bool:
    return a.best is not None and a.best < floor


@dataclass(frozen=True)
class Rates:
    refused: float  # never-provided questions answered with items: []
    wrongly_abstained: float  # answerable questions answered with items: []
    hit: float  # answerable questions whose answer is among the items
    never: int
    answerable: int


def rates(asked: list[Asked], floor: float) -> Rates:
    never = [a for a in asked if not a.question.answerable]
    answerable = [a for a in asked if a.question.answerable]
    asked_of = max(1, len(answerable))
    return Rates(
        refused=sum(_abstains(a, floor) for a in never) / max(1, len(never)),
        wrongly_abstained=sum(_abstains(a, floor) for a in answerable) / asked_of,
        hit=sum(a.hit and not _abstains(a, floor) for a in answerable) / asked_of,
        never=len(never),
        answerable=len(answerable),
    )


def _tuning(asked: dict[str, list[Asked]]) -> list[Asked]:
    return [a for split in TUNING for a in asked[split]]


def _allowed(asked: dict[str, list[Asked]], floor: float) -> bool:
    tuning = rates(_tuning(asked), floor)
    paraphrases = asked[RECALL]
    hits = sum(a.hit for a in paraphrases)
    lost = sum(a.hit and _abstains(a, floor) for a in paraphrases)
    return (
        tuning.wrongly_abstained <= ALLOWED_WRONG
        and rates(paraphrases, floor).hit >= RECALL_HIT_GOAL
        and lost <= RECALL_LOST * hits
    )


def fit_floor(asked: dict[str, list[Asked]]) -> float:
    """The highest floor (to 0.001) that hides no more answers than allowed: at most
    ALLOWED_WRONG of the tuning half's answerable questions, and at most RECALL_LOST of
    the recall bench's hits with its hit@10 still at RECALL_HIT_GOAL."""
    bests = sorted(
        {
            math.floor(a.best * 1000) / 1000
            for a in _tuning(asked) + asked[RECALL]
            if a.best is not None
        }
    )
    fitted = -1.0
    for floor in bests:  # more is abstained the higher the floor: the last allowed wins
        if not _allowed(asked, floor):
            break
        fitted = floor
    return fitted


def fit_strong(tuning: list[Asked]) -> float:
    """The lowest relevance at most STRONG_LEAK of never-provided questions reach."""
    bests = sorted(a.best for a in tuning if not a.question.answerable and a.best is not None)
    index = min(len(bests) - 1, math.ceil((1 - STRONG_LEAK) * len(bests)))
    return math.ceil(bests[index] * 1000) / 1000


@dataclass(frozen=True)
class Fit:
    weight: float
    attribute_weight: float
    floor: float
    asked: dict[str, list[Asked]]

    @property
    def tuning(self) -> Rates:
        """Every never-provided question the fit may read, and its answerable ones."""
        return rates(_tuning(self.asked) + self.asked[RECALL_NEVER], self.floor)


def measure() -> dict[tuple[float, float], Fit]:
    tenant, _ = tenant_create(slug="bench-abstain", name="Abstention benchmark")
    by_key = _seed(tenant)
    paraphrase_tenant, _ = tenant_create(slug="bench-abstain-recall", name="Recall paraphrases")
    paraphrases = recall_questions(seed_users(paraphrase_tenant, RECALL_USERS))
    claims_embed_pending(limit=Claim.objects.count())
    cached_query_vector.cache_clear()
    in_force = (settings.RECALL_TOPIC_WEIGHT, settings.RECALL_ATTRIBUTE_WEIGHT)
    recalled = ask(by_key, paraphrases)
    fits = {}
    for weights in sorted({*WEIGHTS, in_force}):
        asked = {split: [r.at(weights) for r in rows] for split, rows in recalled.items()}
        fits[weights] = Fit(
            weight=weights[0], attribute_weight=weights[1], floor=fit_floor(asked), asked=asked
        )
    return fits


def _half_rows(label: str, fit: Fit, floor: float) -> list[str]:
    paraphrases = rates(fit.asked[RECALL], floor)
    lines = []
    for split in (*SPLITS, EXTRA, RECALL_NEVER):
        r = rates(fit.asked[split], floor)
        lines.append(
            f"| {label}: weights {fit.weight:.2f}/{fit.attribute_weight:.2f}, floor "
            f"{floor:.3f} | {split} | {r.never} | "
            f"{r.refused:.3f} | {r.answerable} | {r.wrongly_abstained:.3f} | {r.hit:.3f} | "
            f"{paraphrases.hit:.3f} |"
        )
    return lines


def _curve(fit: Fit, floors: list[float]) -> list[str]:
    """Each floor's rates on the corpus's own tuning and held-out columns."""
    lines = [
        "| floor | refused (tuning) | refused (held-out) | wrongly abstained (tuning) | "
        "wrongly abstained (held-out) | recall bench hit@10 |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for floor in floors:
        tuning, held = rates(fit.asked["tuning"], floor), rates(fit.asked["heldout"], floor)
        lines.append(
            f"| {floor:.3f} | {tuning.refused:.3f} | {held.refused:.3f} | "
            f"{tuning.wrongly_abstained:.3f} | {held.wrongly_abstained:.3f} | "
            f"{rates(fit.asked[RECALL], floor).hit:.3f} |"
        )
    return lines


def report() -> str:
    model = embedder()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        fits = measure()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    chosen = max(
        fits.values(),
        key=lambda f: (f.tuning.refused, -f.tuning.wrongly_abstained, -f.attribute_weight),
    )
    strong = fit_strong(_tuning(chosen.asked) + chosen.asked[RECALL_NEVER])
    weight, floor = settings.RECALL_TOPIC_WEIGHT, settings.RECALL_ABSTAIN_FLOOR
    attribute_weight = settings.RECALL_ATTRIBUTE_WEIGHT
    in_force = fits[(weight, attribute_weight)]
    held = rates(in_force.asked["heldout"], floor)
    tuning = rates(_tuning(in_force.asked), floor)
    paraphrases = rates(in_force.asked[RECALL], floor)
    goals = [
        ("never-provided answered with `items: []` (held-out) >= 0.95", held.refused, 0.95, 1),
        ("answerable wrongly abstained (held-out) <= 0.03", held.wrongly_abstained, 0.03, -1),
        ("answerable wrongly abstained (tuning) <= 0.03", tuning.wrongly_abstained, 0.03, -1),
        ("recall bench hit@10 (hard paraphrases) >= 0.97", paraphrases.hit, 0.97, 1),
    ]
    floors = sorted({round(0.1 + 0.02 * k, 3) for k in range(14)} | {floor})
    return "\n".join(
        [
            "## Recall abstention: never-provided questions refused",
            "",
            f"Run `python -m bench abstain` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs; embedder "
            f"{model.model if model else 'none'}. Written by bench/abstain.py from "
            "testing/corpus/recall_abstain and the recall bench's paraphrases "
            f"({len(chosen.asked[RECALL])} questions, {RECALL_USERS} users); see "
            "docs/recall.md.",
            "",
            "Fitted on the tuning half (its column, its extra questions, and never-provided "
            "questions asked of the recall bench's users) and the recall bench (the "
            "held-out half chooses nothing): for each pair of weights the highest floor that "
            f"abstains on at most {ALLOWED_WRONG:.0%} of answerable tuning questions and "
            f"keeps the recall bench's hit@10 at {RECALL_HIT_GOAL} or more, losing at most "
            f"{RECALL_LOST:.1%} of its hits.",
            "",
            "| topic weight | attribute weight | fitted floor | refused (tuning) | "
            "wrongly abstained (tuning) | recall bench hit@10 |",
            "|---:|---:|---:|---:|---:|---:|",
            *(
                f"| {f.weight:.2f} | {f.attribute_weight:.2f} | {f.floor:.3f} | "
                f"{f.tuning.refused:.3f} | "
                f"{f.tuning.wrongly_abstained:.3f} | {rates(f.asked[RECALL], f.floor).hit:.3f} |"
                for f in fits.values()
            ),
            "",
            f"Chosen: topic weight {chosen.weight:.2f}, attribute weight "
            f"{chosen.attribute_weight:.2f}, floor {chosen.floor:.3f}, strong "
            f"{strong:.3f} (at most {STRONG_LEAK:.0%} of never-provided tuning questions reach "
            f"it). In force: `RECALL_TOPIC_WEIGHT` {weight:.2f}, `RECALL_ATTRIBUTE_WEIGHT` "
            f"{attribute_weight:.2f}, `RECALL_ABSTAIN_FLOOR` "
            f"{floor:.3f}, `RECALL_STRONG_RELEVANCE` {settings.RECALL_STRONG_RELEVANCE:.3f}.",
            "",
            "| relevance | half | never-provided | refused | answerable | wrongly abstained | "
            "hit@10 | recall bench hit@10 |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
            *_half_rows("fitted", chosen, chosen.floor),
            *_half_rows("in force", in_force, floor),
            "",
            f"Trade-off at the weights in force ({weight:.2f}/{attribute_weight:.2f}): each "
            "floor's rates.",
            "",
            *_curve(in_force, floors),
            "",
            "| goal (floor in force) | measured | met |",
            "|---|---:|---|",
            *(
                f"| {goal} | {value:.3f} | {'yes' if (value - bound) * sign >= 0 else 'no'} |"
                for goal, value, bound, sign in goals
            ),
            "",
        ]
    )
