"""Fit the learned sensitivity head: `python -m bench.sensitivity_train`.

Reproducible (fixed folds and seeds, a deterministic solver). Reads only
training and development data, never `testing/screen_corpus/heldout/`:

- `testing/screen_corpus/sensitive/train.tsv` — sensitive facts of every class and
  their look-alikes in seventeen languages, written for the head;
- the labelled sentences the rules are tested on (`tests/memory/corpus/`);
- the benign memory notes of the injection corpus (`testing/screen_corpus/train/
  benign.tsv`) in which the rules find no class: everyday user and project facts
  that must stay `none`.

Each candidate feature set is scored by stratified 5-fold cross-validation
(out-of-fold probabilities) and by leave-one-language-out on the head's own
corpus. The rules and the head are judged together, as `classify` runs them: the
head speaks only where the rules found nothing. The threshold is the lowest that
makes the head name a class for at most `NONE_RATE` of the look-alikes, and of the
benign notes, out of fold; the set that classifies most of the head's own corpus out of fold is
kept, measured on languages it never saw (leave-one-language-out), fitted on
everything and saved with its model card.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import numpy as np  # noqa: E402 - Django first: the rules read its models
from scipy import sparse  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from common.screen.learned import Features  # noqa: E402
from common.screen.normalize import canonical  # noqa: E402
from memory.claims.sensitivity import CONSENT_CLASSES, rule_classes  # noqa: E402
from memory.claims.sensitivity_head import HEAD_PATH, NONE, SensitivityHead  # noqa: E402
from testing.screen_corpus import Sample, read, read_file  # noqa: E402

TESTS_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "memory" / "corpus"
# At most this share of the `none` sentences may get a class from the head, out of fold.
NONE_RATE = 0.01
MIN_THRESHOLD = 0.3
SEED = 7
# Labels memdesk files under another name, and those that need no consent.
ALIASES = {"financial_account": "finance", "precise_location": "location", "personal": NONE}


@dataclass(frozen=True)
class Candidate:
    features: Features
    c: float


def _features(char: tuple[int, int], meaning: float) -> Features:
    return Features(n_features=2**18, char_ngrams=char, word_ngrams=(1, 2), meaning=meaning)


CANDIDATES: dict[str, Candidate] = {
    "char 2-5 + words 1-2, C=8": Candidate(_features((2, 5), 0.0), 8.0),
    "char 2-5 + words 1-2 + meaning x2, C=8": Candidate(_features((2, 5), 2.0), 8.0),
}
# Left out one at a time to see how the head reads a language it never saw: one per script
# or family, each fit costing a minute.
UNSEEN_LANGUAGES = ("ar", "hi", "ja", "ko", "ru", "tr", "vi")


@dataclass(frozen=True, eq=False)
class Corpus:
    texts: list[str]  # canonical readings
    written: list[str]
    labels: list[str]
    langs: list[str]
    origins: list[str]
    ruled: list[frozenset[str]]  # the classes needing consent the rules already find

    def rows(self, origin: str | None = None) -> list[int]:
        return [i for i, o in enumerate(self.origins) if origin is None or o == origin]


def training_corpus() -> Corpus:
    sources: list[tuple[str, list[Sample]]] = [
        ("memdesk", read("sensitive/train.tsv")),
        (
            "rules' tests",
            [
                *read_file(TESTS_CORPUS / "sensitive.tsv"),
                *read_file(TESTS_CORPUS / "sensitive_redteam.tsv"),
            ],
        ),
    ]
    consent = set(CONSENT_CLASSES)
    notes = [
        Sample(NONE, s.lang, s.text)
        for s in read("train/benign.tsv")
        if not rule_classes([s.text]) & consent
    ]
    sources.append(("benign notes", notes))
    corpus = Corpus([], [], [], [], [], [])
    seen: set[str] = set()
    for origin, samples in sources:
        for sample in samples:
            reading = canonical(sample.text)
            if not reading or reading in seen:
                continue
            seen.add(reading)
            corpus.texts.append(reading)
            corpus.written.append(sample.text)
            corpus.labels.append(ALIASES.get(sample.label, sample.label))
            corpus.langs.append(sample.lang)
            corpus.origins.append(origin)
            corpus.ruled.append(frozenset(rule_classes([sample.text]) & consent))
    return corpus


@cache
def _matrix(candidate: Candidate, corpus: Corpus) -> sparse.csr_matrix:
    return candidate.features.matrix(corpus.texts, corpus.written)


def _fit(candidate: Candidate, corpus: Corpus, rows: Sequence[int]) -> SensitivityHead:
    labels = [corpus.labels[i] for i in rows]
    # saga reaches lbfgs's answer in a fraction of its time on a quarter of a million columns.
    model = LogisticRegression(
        C=candidate.c,
        class_weight="balanced",
        max_iter=1000,
        solver="saga",
        tol=1e-3,
        random_state=SEED,
    )
    model.fit(_matrix(candidate, corpus)[list(rows)], labels)
    return SensitivityHead(
        features=candidate.features,
        classes=tuple(str(c) for c in model.classes_),
        weights=model.coef_.T.astype(np.float32),
        intercepts=model.intercept_.astype(np.float64),
        threshold=0.0,
    )


def _named(head: SensitivityHead, corpus: Corpus, rows: Sequence[int]) -> list[tuple[str, float]]:
    """The head's top class and its probability for each row."""
    probabilities = head.probabilities(
        [corpus.texts[i] for i in rows], [corpus.written[i] for i in rows]
    )
    best = probabilities.argmax(axis=1)
    return [(head.classes[c], float(probabilities[r, c])) for r, c in enumerate(best)]


def out_of_fold(candidate: Candidate, corpus: Corpus) -> list[tuple[str, float]]:
    named: list[tuple[str, float]] = [(NONE, 1.0)] * len(corpus.texts)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    for train, test in folds.split(corpus.texts, corpus.labels):
        head = _fit(candidate, corpus, train)
        for i, guess in zip(test, _named(head, corpus, test), strict=True):
            named[i] = guess
    return named


def threshold_for(corpus: Corpus, named: list[tuple[str, float]]) -> float:
    """The lowest threshold at which the head names a class for at most NONE_RATE of the
    look-alikes (the `none` sentences written beside sensitive ones) and at most NONE_RATE
    of the everyday benign notes, each out of fold."""

    def lowest(rows: list[int]) -> float:
        scores = sorted((named[i][1] for i in rows if named[i][0] != NONE), reverse=True)
        allowed = int(NONE_RATE * len(rows))
        return float(np.nextafter(scores[allowed], 1.0)) if allowed < len(scores) else 0.0

    # Only where the rules found nothing: elsewhere the head is not asked.
    nones = [i for i, label in enumerate(corpus.labels) if label == NONE and not corpus.ruled[i]]
    look_alikes = [i for i in nones if corpus.origins[i] != "benign notes"]
    notes = [i for i in nones if corpus.origins[i] == "benign notes"]
    # A class the head gives less than this share is never named, however few look-alikes.
    return max(lowest(look_alikes), lowest(notes), MIN_THRESHOLD)


@dataclass(frozen=True)
class Rates:
    classified: float  # sensitive sentences whose class the rules or the head found
    rules_alone: float
    flagged: float  # `none` sentences given a class by the rules or the head
    per_class: dict[str, float]


def rates(corpus: Corpus, named: list[tuple[str, float]], threshold: float, rows) -> Rates:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    ruled = flagged = nones = 0
    for i in rows:
        cls, p = named[i]
        head_class = cls if cls != NONE and p >= threshold else None
        if corpus.labels[i] == NONE:
            nones += 1
            flagged += bool(corpus.ruled[i]) or head_class is not None
            continue
        total[corpus.labels[i]] += 1
        rules_right = corpus.labels[i] in corpus.ruled[i]
        ruled += rules_right
        right[corpus.labels[i]] += rules_right or (
            not corpus.ruled[i] and head_class == corpus.labels[i]
        )
    facts = sum(total.values())
    return Rates(
        classified=sum(right.values()) / max(1, facts),
        rules_alone=ruled / max(1, facts),
        flagged=flagged / max(1, nones),
        per_class={c: right[c] / total[c] for c in sorted(total)},
    )


def leave_one_language_out(
    candidate: Candidate, corpus: Corpus, threshold: float
) -> dict[str, float]:
    """Per language of the head's own corpus: its sensitive sentences classified (rules and
    head) by a head fitted without any sentence in that language."""
    own = corpus.rows("memdesk")
    recall = {}
    for lang in UNSEEN_LANGUAGES:
        train = [i for i in range(len(corpus.texts)) if corpus.langs[i] != lang]
        test = [i for i in own if corpus.langs[i] == lang and corpus.labels[i] != NONE]
        head = _fit(candidate, corpus, train)
        named: list[tuple[str, float]] = [(NONE, 1.0)] * len(corpus.texts)
        for i, guess in zip(test, _named(head, corpus, test), strict=True):
            named[i] = guess
        recall[lang] = rates(corpus, named, threshold, test).classified
    return recall


@dataclass(frozen=True)
class Result:
    threshold: float
    own: Rates  # out of fold, on the head's own corpus
    everything: Rates  # out of fold, on all of it
    # Leave-one-language-out, measured for the kept set only (one fit per language).
    unseen: dict[str, float] | None = None

    @property
    def unseen_mean(self) -> float | None:
        return statistics.mean(self.unseen.values()) if self.unseen else None


def evaluate(candidate: Candidate, corpus: Corpus) -> Result:
    named = out_of_fold(candidate, corpus)
    threshold = threshold_for(corpus, named)
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        own = rates(corpus, named, t, corpus.rows("memdesk"))
        every = rates(corpus, named, t, corpus.rows())
        print(
            f"  at {t}: own {own.classified:.1%} classified, {own.flagged:.1%} flagged; "
            f"all {every.classified:.1%}, {every.flagged:.1%}",
            flush=True,
        )
    return Result(
        threshold=threshold,
        own=rates(corpus, named, threshold, corpus.rows("memdesk")),
        everything=rates(corpus, named, threshold, corpus.rows()),
    )


def _line(name: str, r: Result, chosen: str) -> str:
    unseen = "" if r.unseen_mean is None else f"{r.unseen_mean:.1%}"
    return (
        f"| {name}{' (kept)' if name == chosen else ''} | {r.threshold:.3f} "
        f"| {r.own.rules_alone:.1%} | **{r.own.classified:.1%}** | {r.own.flagged:.1%} "
        f"| {r.everything.classified:.1%} | {r.everything.flagged:.1%} | {unseen} |"
    )


def model_card(corpus: Corpus, chosen: str, results: dict[str, Result]) -> str:
    counts = Counter(zip(corpus.origins, corpus.labels, strict=True))
    origins = sorted(set(corpus.origins))
    classes = sorted(set(corpus.labels))
    best = results[chosen]
    langs = Counter(corpus.langs[i] for i in corpus.rows("memdesk") if corpus.labels[i] != NONE)
    return "\n".join(
        [
            "# Model card: the sensitivity head",
            "",
            f"Fitted by `python -m bench.sensitivity_train` on {datetime.now(UTC):%Y-%m-%d} UTC.",
            "",
            "**What it judges.** Which sensitive class a piece of memory reads as (health, "
            "minors, genetic or biometric data, sexual orientation, criminal record, religion, "
            "ethnic origin, political opinion, trade-union membership, finance, a precise "
            "location, next to a credential) or `none`. `memory.claims.sensitivity.classify` "
            "asks it only when the phrase rules found no class that needs consent; it reads "
            "every string of a claim and every payload the decode ladder finds in them, and a "
            "class is named when the head gives it at least the threshold.",
            "",
            f"**Model.** Multinomial logistic regression (saga, balanced class weights) over "
            f"{chosen} (2^18 buckets): the features of the injection head "
            "(`common.screen.learned.Features`), hashed n-grams of the canonical reading and, "
            "where the features name them, the multilingual meaning columns of the text as "
            "written (`common.screen.meaning`).",
            "",
            "**Training data** (deduplicated on the canonical reading):",
            "",
            "| class | " + " | ".join(origins) + " |",
            "|---|" + "---:|" * len(origins),
            *(
                f"| {cls} | " + " | ".join(str(counts[(o, cls)]) for o in origins) + " |"
                for cls in classes
            ),
            "",
            "Sensitive facts per language in the head's own corpus: "
            + ", ".join(f"{lang} {n}" for lang, n in sorted(langs.items()))
            + ".",
            "",
            f"**Threshold** {best.threshold:.3f}: the lowest at which the head, out of fold, "
            f"names a class for at most {NONE_RATE:.0%} of the look-alikes and of the benign "
            "notes the rules leave alone (and never below "
            f"{MIN_THRESHOLD}).",
            "",
            "**Feature sets compared** (training data only, rules and head together as "
            "`classify` runs them; 5-fold out of fold on the head's own corpus and on all of "
            "it; the set that classifies most of its own corpus out of fold is kept, then "
            "measured leave-one-language-out on its own corpus). The phrase rules were "
            "broadened while this corpus was written, so `rules alone` is their rate on "
            "sentences they were fitted to, not a measure of how they read new ones:",
            "",
            "| features | threshold | rules alone | classified (own, out of fold) "
            "| look-alikes flagged (own) | classified (all) | `none` flagged (all) "
            "| unseen language |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            *(_line(name, r, chosen) for name, r in results.items()),
            "",
            "Per class, kept set, own corpus out of fold: "
            + ", ".join(f"{c} {v:.0%}" for c, v in best.own.per_class.items())
            + ".",
            "",
            "Leave-one-language-out of the kept set: "
            + ", ".join(f"{lang} {v:.0%}" for lang, v in sorted((best.unseen or {}).items()))
            + ".",
            "",
            "**Held-out measurement** is not here: `python -m bench screen-heldout` measures "
            "rules and head on `testing/screen_corpus/heldout/sensitive.tsv`, which this "
            "script never reads (bench/RESULTS.md).",
            "",
            "**Limits.** The head learns the words and meanings of the facts it saw; a class "
            "phrased far from all of them, or in a language the meaning table reads poorly, can "
            "pass as `none`, and a technical sentence close to a sensitive one can get a class. "
            "It never lowers what the rules or the agent's hint named.",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CANDIDATES), help="skip the comparison")
    args = parser.parse_args()
    corpus = training_corpus()
    print(f"training sentences: {len(corpus.texts)} {dict(Counter(corpus.origins))}")
    results = {}
    for name in [args.only] if args.only else list(CANDIDATES):
        r = results[name] = evaluate(CANDIDATES[name], corpus)
        print(
            f"{name}: threshold {r.threshold:.3f}; own: rules {r.own.rules_alone:.1%}, "
            f"classified {r.own.classified:.1%}, flagged {r.own.flagged:.1%}; all: "
            f"{r.everything.classified:.1%}, flagged {r.everything.flagged:.1%}; "
            f"{r.own.per_class}",
            flush=True,
        )
    chosen = max(results, key=lambda n: (results[n].own.classified, -results[n].own.flagged))
    unseen = leave_one_language_out(CANDIDATES[chosen], corpus, results[chosen].threshold)
    results[chosen] = replace(results[chosen], unseen=unseen)
    print(f"{chosen}: unseen language {results[chosen].unseen_mean:.1%} {unseen}", flush=True)
    head = _fit(CANDIDATES[chosen], corpus, range(len(corpus.texts)))
    kept = results[chosen]
    head = replace(
        head,
        threshold=kept.threshold,
        cross_validated=(kept.own.classified, kept.own.flagged),
    )
    head.save(HEAD_PATH)
    HEAD_PATH.with_suffix(".md").write_text(model_card(corpus, chosen, results))
    print(f"kept {chosen}; saved {HEAD_PATH}")


if __name__ == "__main__":
    main()
