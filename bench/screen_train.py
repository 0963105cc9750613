"""Fit the screen's learned injection head: `python -m bench.screen_train`.

Reproducible: the same corpus gives the same weights (fixed folds and seeds,
a deterministic solver). Reads only training data:

- `testing/screen_corpus/train/` — memory-poisoning attacks and benign memory
  notes in 17 languages, written for memdesk;
- the training split of each public set in `testing/screen_corpus/public/`;
- the corpus the rules were tuned on (`testing/corpus`, not its held-out files).

Nothing under `heldout/`, nor a public test split, is read here: those sets
measure the head (`python -m bench screen`) and never shape it.

Steps: every candidate feature set is scored by stratified 5-fold
cross-validation and by leave-one-language-out (train on all languages but
one, test on that one); the set with the best mean of the two recalls at the
review band is kept. The band thresholds are read off the
out-of-fold scores of the benign notes: `quarantine` flags at most
`QUARANTINE_FPR` of them, `review` at most `REVIEW_FPR`. Then the head is fitted
on all the training data and saved with its model card.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from bench.screen_second_look import card_section, fit_cascade, vectors
from common.screen.learned import MODELS_DIR, Bands, Features, Head
from common.screen.normalize import canonical
from common.screen.second_look import SECOND_LOOK_PATH
from testing.corpus import HERE as RULES_CORPUS
from testing.screen_corpus import HERE as CORPUS_DIR
from testing.screen_corpus import Sample, read

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


def _meaning(length: float) -> Features:
    return Features(2**20, (2, 5), (1, 2), meaning=length)


CANDIDATES: dict[str, Candidate] = {
    "char 2-5 + words 1-2, C=16": Candidate(_CHAR_WORDS, 16.0),
    "meaning only, C=16": Candidate(Features(0, None, None, meaning=1.0), 16.0),
    "char 2-5 + words 1-2 + meaning x2, C=16": Candidate(_meaning(2.0), 16.0),
    "char 2-5 + words 1-2 + meaning x4, C=16": Candidate(_meaning(4.0), 16.0),
}


@dataclass(frozen=True)
class Corpus:
    texts: list[str]  # canonical readings, which the n-grams read
    written: list[str]  # the same samples as written, which the meaning columns read
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
    texts, as_written, labels, langs, origins = [], [], [], [], []
    seen: set[str] = set()
    for origin, samples in sources:
        for sample in samples:
            reading = canonical(sample.text)
            if not reading or reading in seen:
                continue
            seen.add(reading)
            texts.append(reading)
            as_written.append(sample.text)
            labels.append(1 if sample.label == "injection" else 0)
            langs.append(sample.lang)
            origins.append(origin)
    return Corpus(texts, as_written, np.array(labels), langs, origins)


def _fit(candidate: Candidate, corpus: Corpus, rows: Sequence[int] | np.ndarray) -> Head:
    model = LogisticRegression(
        C=candidate.c, class_weight="balanced", max_iter=2000, solver="liblinear", random_state=SEED
    )
    model.fit(_matrix(candidate, corpus, rows), corpus.labels[rows])
    return Head(
        name="injection",
        features=candidate.features,
        weights=model.coef_[0].astype(np.float32),
        intercept=float(model.intercept_[0]),
        bands=Bands(quarantine=1.0, review=1.0),
    )


def _matrix(
    candidate: Candidate, corpus: Corpus, rows: Sequence[int] | np.ndarray
) -> sparse.csr_matrix:
    return candidate.features.matrix(
        [corpus.texts[i] for i in rows], [corpus.written[i] for i in rows]
    )


def _scores(head: Head, corpus: Corpus, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    return head.scores([corpus.texts[i] for i in rows], [corpus.written[i] for i in rows])


def folds_of(corpus: Corpus) -> list[tuple[np.ndarray, np.ndarray]]:
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    return list(folds.split(corpus.texts, corpus.labels))


def out_of_fold(features: Candidate, corpus: Corpus) -> np.ndarray:
    scores = np.zeros(len(corpus.texts))
    for train, test in folds_of(corpus):
        head = _fit(features, corpus, train)
        scores[test] = _scores(head, corpus, test)
    return scores


def threshold_at(benign_scores: np.ndarray, rate: float) -> float:
    """The lowest threshold that flags at most `rate` of the benign scores."""
    ordered = np.sort(benign_scores)[::-1]
    allowed = int(np.floor(rate * len(ordered)))
    return float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else 0.0


def unseen_rows(corpus: Corpus) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per language with 20 attacks or more: (every row of the other languages, its attacks)."""
    langs = sorted(
        lang
        for lang, n in Counter(
            lang for lang, label in zip(corpus.langs, corpus.labels, strict=True) if label
        ).items()
        if n >= 20 and lang != "und"
    )
    return {
        lang: (
            np.array([i for i, other in enumerate(corpus.langs) if other != lang]),
            np.array(
                [
                    i
                    for i, other in enumerate(corpus.langs)
                    if other == lang and corpus.labels[i] == 1
                ]
            ),
        )
        for lang in langs
    }


def leave_one_language_out(features: Candidate, corpus: Corpus) -> dict[str, np.ndarray]:
    """Per language: the scores of its attacks by a head fitted without that language."""
    return {
        lang: _scores(_fit(features, corpus, train), corpus, test)
        for lang, (train, test) in unseen_rows(corpus).items()
    }


@dataclass(frozen=True)
class Result:
    bands: Bands
    auc: float
    recall_quarantine: float
    recall_review: float
    unseen: dict[str, float]  # leave-one-language-out recall at the review band
    oof: np.ndarray  # out-of-fold score of every training sample
    unseen_scores: dict[str, np.ndarray]  # leave-one-language-out scores of each one's attacks

    @property
    def unseen_mean(self) -> float:
        return statistics.mean(self.unseen.values()) if self.unseen else 0.0

    @property
    def merit(self) -> float:
        """Attacks flagged at the review band, out of fold and in a language never seen."""
        return (self.recall_review + self.unseen_mean) / 2


def evaluate(candidate: Candidate, corpus: Corpus, *, unseen_languages: bool = True) -> Result:
    oof = out_of_fold(candidate, corpus)
    benign = oof[corpus.labels == 0]
    attacks = oof[corpus.labels == 1]
    bands = Bands(
        quarantine=threshold_at(benign, QUARANTINE_FPR), review=threshold_at(benign, REVIEW_FPR)
    )
    unseen = leave_one_language_out(candidate, corpus) if unseen_languages else {}
    return Result(
        bands=bands,
        auc=float(roc_auc_score(corpus.labels, oof)),
        recall_quarantine=float(np.mean(attacks >= bands.quarantine)),
        recall_review=float(np.mean(attacks >= bands.review)),
        unseen={lang: float(np.mean(s >= bands.review)) for lang, s in unseen.items()},
        oof=oof,
        unseen_scores=unseen,
    )


def _worst(result: Result) -> str:
    if not result.unseen:
        return ""
    lang = min(result.unseen, key=lambda name: result.unseen[name])
    return f"{lang} {result.unseen[lang]:.0%}"


def model_card(corpus: Corpus, chosen: str, results: dict[str, Result]) -> str:
    counts = Counter(zip(corpus.origins, corpus.labels.tolist(), strict=True))
    langs = Counter(
        lang for lang, label in zip(corpus.langs, corpus.labels, strict=True) if label == 1
    )
    best = results[chosen]
    bands = best.bands
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
        "inside word boundaries), and, where the features name it, the meaning of the text as "
        "written: a static multilingual sentence embedding (`common.screen.meaning`, distilled "
        "from multilingual-e5-small by `python -m bench.screen_distill`) of that length. No word "
        "lists: any script is read by its characters and by its tokens' meaning.",
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
        "**Feature sets compared** (training data only: 5-fold out-of-fold, and "
        "leave-one-language-out — fitted without a language, its attacks flagged at the review "
        "band, the mean over languages; the set with the best mean of the two recalls at the "
        "review band is kept):",
        "",
        "| features | AUC | recall at quarantine | recall at review | unseen language | worst |",
        "|---|---:|---:|---:|---:|---:|",
        *(
            f"| {name}{' (kept)' if name == chosen else ''} | {r.auc:.4f} "
            f"| {r.recall_quarantine:.1%} | {r.recall_review:.1%} "
            f"| {f'{r.unseen_mean:.1%}' if r.unseen else 'not run'} | {_worst(r)} |"
            for name, r in results.items()
        ),
        "",
        "Leave-one-language-out of the kept set (how the head reads a language it never saw): "
        + (
            ", ".join(f"{lang} {v:.0%}" for lang, v in sorted(best.unseen.items())) + "."
            if best.unseen
            else "not run this time (`--no-unseen`)."
        ),
        "",
        "**Held-out measurement** is not here: `python -m bench screen-heldout` measures the "
        "head on `testing/screen_corpus/heldout/` and on each public set's test split, none "
        "of which this script reads (bench/RESULTS.md).",
        "",
        "**Limits.** A head of n-grams learns the words and pieces of words of orders in the "
        "languages it saw; a language it never saw, or an order phrased like a plain fact, can "
        "pass. The meaning columns narrow that gap without closing it: a static embedding is a "
        "mean of its tokens' meanings, blind to word order and negation, and weaker in languages "
        "the distilled model read less. The rules (`injection_signals.py`) stay beside it for "
        "the crisp cases, and editors' decisions on screened items are kept as labelled "
        "examples for recalibration.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CANDIDATES), help="skip the comparison")
    parser.add_argument(
        "--no-second-look", action="store_true", help="fit the first head only, keep no second look"
    )
    parser.add_argument(
        "--no-unseen",
        action="store_true",
        help="skip leave-one-language-out (17 more fits); the card then has no unseen column",
    )
    parser.add_argument(
        "--encoder-cache", type=Path, help="an .npz that keeps the encoder's vectors between runs"
    )
    args = parser.parse_args()
    corpus = training_corpus()
    print(
        f"training samples: {len(corpus.texts)} "
        f"({int(corpus.labels.sum())} injections, {int((corpus.labels == 0).sum())} benign)"
    )
    names = [args.only] if args.only else list(CANDIDATES)
    results = {}
    for name in names:
        results[name] = evaluate(CANDIDATES[name], corpus, unseen_languages=not args.no_unseen)
        r = results[name]
        print(
            f"{name}: AUC {r.auc:.4f}, recall q {r.recall_quarantine:.1%} "
            f"r {r.recall_review:.1%}, unseen language {r.unseen_mean:.1%} ({_worst(r)})",
            flush=True,
        )
    chosen = max(results, key=lambda n: results[n].merit)
    kept = results[chosen]
    head = _fit(CANDIDATES[chosen], corpus, range(len(corpus.texts)))
    head = Head(head.name, head.features, head.weights, head.intercept, kept.bands)
    MODELS_DIR.mkdir(exist_ok=True)
    head.save(MODELS_DIR / "injection.npz")
    card = model_card(corpus, chosen, results)
    print(f"kept {chosen}; bands {kept.bands}; saved {MODELS_DIR / 'injection.npz'}", flush=True)
    if args.no_second_look:
        SECOND_LOOK_PATH.unlink(missing_ok=True)
    else:
        cascade = fit_cascade(
            vecs=vectors(corpus.written, args.encoder_cache),
            labels=corpus.labels,
            folds=folds_of(corpus),
            first_oof=kept.oof,
            bands=kept.bands,
            unseen_rows={} if args.no_unseen else unseen_rows(corpus),
            first_unseen=kept.unseen_scores,
        )
        cascade.second.save(SECOND_LOOK_PATH)
        card += "\n" + "\n".join(card_section(cascade))
        print(
            f"second look: band [{cascade.second.low:.4f}, {kept.bands.review:.4f}), "
            f"{cascade.benign_looked:.1%} of benign notes looked at; attacks flagged "
            f"{cascade.first_recall_review:.1%} -> {cascade.recall_review:.1%}, unseen language "
            f"{kept.unseen_mean:.1%} -> {cascade.unseen_mean:.1%}; saved {SECOND_LOOK_PATH}"
        )
    (MODELS_DIR / "injection.md").write_text(card)


if __name__ == "__main__":
    main()
