"""The sensitivity rules on their own, against a labelled corpus. No database.

`corpus/sensitive.tsv` holds one sentence a line, `class<TAB>lang<TAB>text`: what an
agent might say about a person in fifteen languages, in leetspeak or base64, each with
the class it must get; `none` lines are look-alikes an engineer writes ("the
health-check endpoint", "union of two sets") that must stay normal or personal.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from memory.claims.models import Sensitivity
from memory.claims.sensitivity import CONSENT_CLASSES, classify
from memory.claims.sensitivity_terms import MEDICATIONS
from testing.screen_corpus import read_file

CORPUS = Path(__file__).parent / "corpus" / "sensitive.tsv"
NEW_CLASSES = (
    Sensitivity.SEXUAL_ORIENTATION,
    Sensitivity.RELIGION,
    Sensitivity.POLITICAL,
    Sensitivity.TRADE_UNION,
    Sensitivity.ETHNIC_ORIGIN,
    Sensitivity.GENETIC_BIOMETRIC,
    Sensitivity.CRIMINAL_RECORD,
)
# Every class the corpus must cover, each in at least ten languages.
COVERED = (Sensitivity.HEALTH, Sensitivity.MINORS, Sensitivity.LOCATION, Sensitivity.FINANCE)


LINES = [(sample.label, sample.lang, sample.text) for sample in read_file(CORPUS)]


@pytest.mark.parametrize(
    ("cls", "lang", "text"), [line for line in LINES if line[0] != "none"], ids=str
)
def test_a_sensitive_sentence_gets_its_class(cls, lang, text):
    classification = classify([text])

    assert classification.sensitivity == cls, (lang, text)
    assert cls in classification.consent_classes


@pytest.mark.parametrize(
    ("lang", "text"), [(lang, text) for cls, lang, text in LINES if cls == "none"], ids=str
)
def test_a_look_alike_stays_normal(lang, text):
    assert classify([text]).sensitivity in {Sensitivity.NORMAL, Sensitivity.PERSONAL}, lang


def test_the_corpus_covers_every_class_in_ten_languages():
    languages: dict[str, set[str]] = defaultdict(set)
    lines: dict[str, int] = defaultdict(int)
    for cls, lang, _ in LINES:
        languages[cls].add(lang)
        lines[cls] += 1

    for cls in (*NEW_CLASSES, *COVERED, "none"):
        assert lines[cls] >= 10, cls
        assert len(languages[cls]) >= 10, cls
    assert lines["none"] >= 40
    assert set(languages) <= {*CONSENT_CLASSES, "none"}


def test_the_new_classes_need_consent_and_rank_below_health_and_minors():
    assert set(NEW_CLASSES) <= set(CONSENT_CLASSES)
    assert CONSENT_CLASSES[:2] == (Sensitivity.MINORS, Sensitivity.HEALTH)


def test_a_medicine_named_alone_is_health_in_any_case_and_ending():
    assert len(MEDICATIONS) >= 150
    for text in ("Alice takes BIKTARVY", "toma metformina", "prend de l'insuline", "on Ozempic"):
        assert classify([text]).sensitivity == Sensitivity.HEALTH, text


def test_the_hidden_and_leet_readings_are_classed_like_plain_text():
    assert classify(["QWxpY2UgaXMgSElWIHBvc2l0aXZl"]).sensitivity == Sensitivity.HEALTH
    assert classify(["4l1c3 15 g4y"]).sensitivity == Sensitivity.SEXUAL_ORIENTATION
    # A base64-looking identifier that decodes to nothing readable stays what it is.
    assert classify(["build 9f8e7d6c5b4a3210ffee"]).sensitivity == Sensitivity.NORMAL


def test_the_strongest_class_names_a_text_that_touches_several():
    classification = classify(["Alice is HIV positive and a member of the Labour Party"])

    assert classification.sensitivity == Sensitivity.HEALTH
    assert classification.consent_classes == (Sensitivity.HEALTH, Sensitivity.POLITICAL)
