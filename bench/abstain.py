"""`python -m bench abstain`: fit recall's relevance floor on the tuning half of the
abstention corpus (testing/corpus/recall_abstain) and measure it on the held-out half.

Every question is recalled once with abstention off, keeping the best legal claim's
relevance; the floor is then the highest that abstains on at most `ALLOWED_WRONG`
of the tuning half's answerable questions (hiding an answer is the worse mistake), and
the strong level the lowest that at most `STRONG_LEAK` of its never-provided questions
reach. Both rates are printed for both halves at the fitted floor and at the floor in
force (`RECALL_ABSTAIN_FLOOR`); the held-out half never chooses anything.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.db import connection
from django.db.models import F, TextField, Value
from django.db.models.functions import Concat, Replace
from django.utils import timezone

from accounts.models import Tenant
from accounts.services import tenant_create
from memory.embedders import embedder
from memory.models import Claim, Subject
from memory.search import ngrams
from memory.selectors.claims import claims_recall
from memory.selectors.recall_ranking import RecallQuery
from memory.services.embeddings import claims_embed_pending
from testing.abstain_corpus import SPLITS, Question, questions, subjects

ALLOWED_WRONG = 0.03
STRONG_LEAK = 0.05
LIMIT = 10


@dataclass(frozen=True)
class Asked:
    question: Question
    best: float | None  # the best legal claim's relevance
    hit: bool  # the answering claim among the first LIMIT items (abstention off)


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
        Claim.objects.bulk_create(
            [
                Claim(
                    tenant=tenant,
                    subject=subject,
                    kind="fact",
                    predicate=predicate,
                    value=value,
                    text=text,
                    authority="user_explicit",
                    basis="verified",
                    status="active",
                    gate_decision="accepted",
                    agent="bench",
                    available_at=now,
                    ngrams=ngrams(f"{predicate.replace('_', ' ')} {text} {value}"),
                )
                for predicate, text, value in rows
            ]
        )
    Claim.objects.filter(tenant=tenant).update(
        search_vector=SearchVector(
            Concat(
                Replace(F("predicate"), Value("_"), Value(" ")),
                Value(" "),
                F("text"),
                output_field=TextField(),
            ),
            config="english",
        )
    )
    claims_embed_pending(limit=Claim.objects.filter(tenant=tenant).count())
    return found


def ask(tenant: Tenant, by_key: dict[str, Subject], split: str) -> list[Asked]:
    floor = settings.RECALL_ABSTAIN_FLOOR
    settings.RECALL_ABSTAIN_FLOOR = -math.inf  # measure, never abstain
    try:
        asked = []
        for question in questions(split):
            q = RecallQuery(subject=by_key[question.subject], query=question.text, limit=LIMIT)
            result = claims_recall(tenant=tenant, q=q)
            verdict = result.verdict
            asked.append(
                Asked(
                    question=question,
                    best=verdict.best if verdict is not None else None,
                    hit=any(item.claim.predicate == question.predicate for item in result.items),
                )
            )
        return asked
    finally:
        settings.RECALL_ABSTAIN_FLOOR = floor


def fit_floor(tuning: list[Asked]) -> float:
    """The highest floor that abstains on at most ALLOWED_WRONG of the answerable."""
    bests = sorted(a.best for a in tuning if a.question.answerable and a.best is not None)
    allowed = math.floor(ALLOWED_WRONG * len(bests))
    # Abstaining below the (allowed+1)-th lowest best abstains on exactly `allowed`.
    return math.floor(bests[allowed] * 1000) / 1000


def fit_strong(tuning: list[Asked]) -> float:
    """The lowest relevance at most STRONG_LEAK of never-provided questions reach."""
    bests = sorted(a.best for a in tuning if not a.question.answerable and a.best is not None)
    index = min(len(bests) - 1, math.ceil((1 - STRONG_LEAK) * len(bests)))
    return math.ceil(bests[index] * 1000) / 1000


@dataclass(frozen=True)
class Rates:
    refused: float  # never-provided questions answered with items: []
    wrongly_abstained: float  # answerable questions answered with items: []
    hit: float  # answerable questions whose answer is among the items
    never: int
    answerable: int


def rates(asked: list[Asked], floor: float) -> Rates:
    def abstains(a: Asked) -> bool:
        return a.best is not None and a.best < floor

    never = [a for a in asked if not a.question.answerable]
    answerable = [a for a in asked if a.question.answerable]
    return Rates(
        refused=sum(abstains(a) for a in never) / len(never),
        wrongly_abstained=sum(abstains(a) for a in answerable) / len(answerable),
        hit=sum(a.hit and not abstains(a) for a in answerable) / len(answerable),
        never=len(never),
        answerable=len(answerable),
    )


def measure() -> tuple[dict[str, list[Asked]], float, float]:
    tenant, _ = tenant_create(slug="bench-abstain", name="Abstention benchmark")
    by_key = _seed(tenant)
    asked = {split: ask(tenant, by_key, split) for split in SPLITS}
    return asked, fit_floor(asked["tuning"]), fit_strong(asked["tuning"])


def _rows(label: str, asked: dict[str, list[Asked]], floor: float) -> list[str]:
    lines = []
    for split in SPLITS:
        r = rates(asked[split], floor)
        lines.append(
            f"| {label} {floor:.3f} | {split} | {r.never} | {r.refused:.3f} | {r.answerable} | "
            f"{r.wrongly_abstained:.3f} | {r.hit:.3f} |"
        )
    return lines


def report() -> str:
    model = embedder()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        asked, floor, strong = measure()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    in_force = settings.RECALL_ABSTAIN_FLOOR
    held = rates(asked["heldout"], in_force)
    goals = [
        ("never-provided answered with `items: []` >= 0.95", held.refused, held.refused >= 0.95),
        (
            "answerable wrongly abstained <= 0.03",
            held.wrongly_abstained,
            held.wrongly_abstained <= 0.03,
        ),
    ]
    return "\n".join(
        [
            "## Recall abstention: never-provided questions refused",
            "",
            f"Run `python -m bench abstain` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs; embedder "
            f"{model.model if model else 'none'}. Written by bench/abstain.py from "
            "testing/corpus/recall_abstain; see docs/recall.md.",
            "",
            f"Fitted on the tuning half: floor {floor:.3f} (at most {ALLOWED_WRONG:.0%} of "
            f"answerable questions abstained), strong {strong:.3f} (at most {STRONG_LEAK:.0%} "
            f"of never-provided questions reach it). In force: `RECALL_ABSTAIN_FLOOR` "
            f"{in_force:.3f}, `RECALL_STRONG_RELEVANCE` {settings.RECALL_STRONG_RELEVANCE:.3f}.",
            "",
            "| floor | half | never-provided | refused | answerable | wrongly abstained | hit@10 |",
            "|---|---|---:|---:|---:|---:|---:|",
            *_rows("fitted", asked, floor),
            *_rows("in force", asked, in_force),
            "",
            "| goal (held-out half, floor in force) | measured | met |",
            "|---|---:|---|",
            *(f"| {goal} | {value:.3f} | {'yes' if met else 'no'} |" for goal, value, met in goals),
            "",
        ]
    )
