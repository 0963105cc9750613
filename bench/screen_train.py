"""Fit the screen's learned injection head: `python -m bench.screen_train`.

Reproducible: the same corpus gives the same weights (fixed folds and seeds,
a deterministic solver). Reads only training data:

- `testing/screen_corpus/train/` — memory-poisoning attacks and benign memory
  notes in 17 languages, written for memdesk;
- the training split of each public set in `testing/screen_corpus/public/`;
- the corpus the rules were tuned on (`tests/common/corpus`, not its held-out files).

Nothing under `heldout/`, nor a public test split, is read here: those sets
measure the head (`python -m bench screen`) and never shape it.

Steps: every candidate feature set is scored by stratified 5-fold
cross-validation and by leave-one-language-out (train on all languages but
one, test on that one); the set that reads unseen languages best at a 1%
false-positive rate is kept. The band thresholds are read off the
out-of-fold scores of the benign notes: `quarantine` flags at most
`QUARANTINE_FPR` of them, `review` at most `REVIEW_FPR`. Then the head is fitted
on all the training data and saved with its model card.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from common.screen.learned import MODELS_DIR, Bands, Features, Head
from common.screen.normalize import canonical
from testing.screen_corpus import HERE as CORPUS_DIR
from testing.screen_corpus import Sample, read

RULES_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "common" / "corpus"
# The bands' targets on out-of-fold benign scores, a fifth under the rates memdesk
# promises on notes the head never saw (1% quarantined, 3% sent to review).
QUARANTINE_FPR = 0.008
REVIEW_FPR = 0.025
SEED = 7


@dataclass(frozen=True)
class Candidate:
    features: Features
    c: float


_CHAR_WORDS = Features(n_features=2**20, char_ngrams=(2, 5), word_ngrams=(1, 2))
CANDIDATES: dict[str, Candidate] = {
    "char 2-5, C=4": Candidate(Features(2**20, (2, 5), None), 4.0),
    "char 1-4 + words 1-2, C=4": Candidate(Features(2**20, (1, 4), (1, 2)), 4.0),
    "char 2-5 + words 1-2, C=1": Candidate(_CHAR_WORDS, 1.0),
    "char 2-5 + words 1-2, C=4": Candidate(_CHAR_WORDS, 4.0),
    "char 2-5 + words 1-2, C=16": Candidate(_CHAR_WORDS, 16.0),
}


@dataclass(frozen=True)
class Corpus:
    texts: list[str]
    labels: np.ndarray
    langs: list[str]
    origins: list[str]


def _rules_corpus() -> list[Sample]:
    samples = []
    for name, label in (("injection_attacks.txt", "injection"), ("benign_notes.txt", "benign")):
        for line in (RULES_CORPUS / name).read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            text = line.split("\t", 1)[1] if label == "injection" else line
            samples.append(Sample(label, "und", text.replace("\\n", "\n")))
    return samples


def training_corpus() -> Corpus:
    written = [
        sample
        for path in sorted((CORPUS_DIR / "train").glob("*.tsv"))
        for sample in read(str(path.relative_to(CORPUS_DIR)))
    ]
    sources: list[tuple[str, list[Sample]]] = [("memdesk", written), ("rules", _rules_corpus())]
    for public in sorted((CORPUS_DIR / "public").glob("*/train.tsv")):
        sources.append((public.parent.name, read(str(public.relative_to(CORPUS_DIR)))))
    texts, labels, langs, origins = [], [], [], []
    seen: set[str] = set()
    for origin, samples in sources:
        for sample in samples:
            reading = canonical(sample.text)
            if not reading or reading in seen:
                continue
            seen.add(reading)
            texts.append(reading)
            labels.append(1 if sample.label == "injection" else 0)
            langs.append(sample.lang)
            origins.append(origin)
    return Corpus(texts, np.array(labels), langs, origins)


def _fit(candidate: Candidate, texts: list[str], labels: np.ndarray) -> Head:
    model = LogisticRegression(
        C=candidate.c, class_weight="balanced", max_iter=2000, solver="liblinear", random_state=SEED
    )
    model.fit(candidate.features.matrix(texts), labels)
    return Head(
        name="injection",
        features=candidate.features,
        weights=model.coef_[0].astype(np.float32),
        intercept=float(model.intercept_[0]),
        bands=Bands(quarantine=1.0, review=1.0),
    )


def out_of_fold(features: Candidate, corpus: Corpus) -> np.ndarray:
    scores = np.zeros(len(corpus.texts))
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    for train, test in folds.split(corpus.texts, corpus.labels):
        head = _fit(features, [corpus.texts[i] for i in train], corpus.labels[train])
        scores[test] = head.scores([corpus.texts[i] for i in test])
    return scores


def threshold_at(benign_scores: np.ndarray, rate: float) -> float:
    """The lowest threshold that flags at most `rate` of the benign scores."""
    ordered = np.sort(benign_scores)[::-1]
    allowed = int(np.floor(rate * len(ordered)))
    return float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else 0.0


def leave_one_language_out(features: Candidate, corpus: Corpus, bands: Bands) -> dict[str, float]:
    """Per language: the share of its attacks a head fitted without that language flags."""
    langs = sorted(
        lang
        for lang, n in Counter(
            lang for lang, label in zip(corpus.langs, corpus.labels, strict=True) if label
        ).items()
        if n >= 20 and lang != "und"
    )
    recall = {}
    for lang in langs:
        train = [i for i, other in enumerate(corpus.langs) if other != lang]
        test = [
            i for i, other in enumerate(corpus.langs) if other == lang and corpus.labels[i] == 1
        ]
        head = _fit(features, [corpus.texts[i] for i in train], corpus.labels[train])
        scores = head.scores([corpus.texts[i] for i in test])
        recall[lang] = float(np.mean(scores >= bands.review))
    return recall


def evaluate(candidate: Candidate, corpus: Corpus) -> dict[str, object]:
    oof = out_of_fold(candidate, corpus)
    benign = oof[corpus.labels == 0]
    attacks = oof[corpus.labels == 1]
    bands = Bands(
        quarantine=threshold_at(benign, QUARANTINE_FPR), review=threshold_at(benign, REVIEW_FPR)
    )
    return {
        "bands": bands,
        "auc": roc_auc_score(corpus.labels, oof),
        "recall_quarantine": float(np.mean(attacks >= bands.quarantine)),
        "recall_review": float(np.mean(attacks >= bands.review)),
    }


def model_card(
    corpus: Corpus, chosen: str, results: dict[str, dict[str, object]], lolo: dict[str, float]
) -> str:
    counts = Counter(zip(corpus.origins, corpus.labels.tolist(), strict=True))
    langs = Counter(
        lang for lang, label in zip(corpus.langs, corpus.labels, strict=True) if label == 1
    )
    best = results[chosen]
    bands = best["bands"]
    assert isinstance(bands, Bands)
    lines = [
        "# Model card: the injection head",
        "",
        f"Fitted by `python -m bench.screen_train` on {datetime.now(UTC):%Y-%m-%d} UTC.",
        "",
        "**What it judges.** Whether a piece of memory reads like an instruction to a future "
        "agent (override, persistence, a new role, exfiltration, an unauthorised action, "
        "concealment, a forged system or developer message) rather than a fact, preference "
        "or experience about its subject. It reads the canonical reading "
        "(`common.screen.normalize.canonical`) of every string of a claim, and of every payload "
        "the decode ladder finds in them; the highest score counts.",
        "",
        f"**Model.** Logistic regression (liblinear, balanced class weights) over "
        f"hashed n-grams ({chosen}; 2^20 buckets, each part unit length; character n-grams "
        "inside word boundaries). No word lists, no "
        "vocabulary: any script is read by its characters.",
        "",
        "**Training data** (deduplicated on the canonical reading):",
        "",
        "| origin | injections | benign |",
        "|---|---:|---:|",
        *(
            f"| {origin} | {counts[(origin, 1)]} | {counts[(origin, 0)]} |"
            for origin in sorted({o for o, _ in counts})
        ),
        "",
        "Injections per language: "
        + ", ".join(f"{lang} {n}" for lang, n in sorted(langs.items()))
        + ".",
        "",
        "**Bands** (read off out-of-fold scores of the benign training notes): "
        f"quarantine at ≥ {bands.quarantine:.4f} (≤ {QUARANTINE_FPR:.1%} of benign notes), "
        f"review at ≥ {bands.review:.4f} (≤ {REVIEW_FPR:.1%}).",
        "",
        "**Feature sets compared** (training data only, 5-fold out-of-fold; the set that "
        "flags the most attacks at the review band is kept):",
        "",
        "| features | AUC | recall at quarantine | recall at review |",
        "|---|---:|---:|---:|",
        *(
            f"| {name}{' (kept)' if name == chosen else ''} | {r['auc']:.4f} "
            f"| {r['recall_quarantine']:.1%} | {r['recall_review']:.1%} |"
            for name, r in results.items()
        ),
        "",
        "Leave-one-language-out (fitted without a language, its attacks flagged at the "
        "review band; how the head reads a language it never saw): "
        + ", ".join(f"{lang} {v:.0%}" for lang, v in sorted(lolo.items()))
        + ".",
        "",
        "**Held-out measurement** is not here: `python -m bench screen-heldout` measures the "
        "head on `testing/screen_corpus/heldout/` and on each public set's test split, none "
        "of which this script reads (bench/RESULTS.md).",
        "",
        "**Limits.** A head of n-grams learns the words and pieces of words of orders in the "
        "languages it saw; a language it never saw, or an order phrased like a plain fact, can "
        "pass. The rules (`injection_signals.py`) stay beside it for the crisp cases, and editors' "
        "decisions on screened items are kept as labelled examples for recalibration.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CANDIDATES), help="skip the comparison")
    args = parser.parse_args()
    corpus = training_corpus()
    print(
        f"training samples: {len(corpus.texts)} "
        f"({int(corpus.labels.sum())} injections, {int((corpus.labels == 0).sum())} benign)"
    )
    names = [args.only] if args.only else list(CANDIDATES)
    results = {}
    for name in names:
        results[name] = evaluate(CANDIDATES[name], corpus)
        r = results[name]
        print(
            f"{name}: AUC {r['auc']:.4f}, recall q {r['recall_quarantine']:.1%} "
            f"r {r['recall_review']:.1%}"
        )
    chosen = max(results, key=lambda n: results[n]["recall_review"])  # type: ignore[arg-type,return-value]
    bands = results[chosen]["bands"]
    assert isinstance(bands, Bands)
    lolo = leave_one_language_out(CANDIDATES[chosen], corpus, bands)
    print(f"unseen language: {statistics.mean(lolo.values()) if lolo else 0:.1%}")
    head = _fit(CANDIDATES[chosen], corpus.texts, corpus.labels)
    head = Head(head.name, head.features, head.weights, head.intercept, bands)
    MODELS_DIR.mkdir(exist_ok=True)
    head.save(MODELS_DIR / "injection.npz")
    (MODELS_DIR / "injection.md").write_text(model_card(corpus, chosen, results, lolo))
    print(f"kept {chosen}; bands {bands}; saved {MODELS_DIR / 'injection.npz'}")


if __name__ == "__main__":
    main()
