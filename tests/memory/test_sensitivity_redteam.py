"""The sensitivity rules against a red-team set written apart from the main corpus.

`corpus/sensitive_redteam.tsv` says the same things as `sensitive.tsv` the way people
say them sideways ("on dialysis since March", "served two years for fraud", "her
23andMe results"), at least twice for every class in each of fifteen languages, beside
look-alikes an engineer writes ("genetic algorithm", "technical debt", "minor
version", "party endpoint") that must need no consent. No database.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from memory.claims.models import Sensitivity
from memory.claims.sensitivity import CONSENT_CLASSES, classify
from testing.screen_corpus import read_file

CORPUS = Path(__file__).parent / "corpus" / "sensitive_redteam.tsv"
LANGUAGES = {
    "en", "zh", "es", "fr", "de", "ru", "ja", "ko", "ar", "pt", "it", "tr", "nl", "pl", "hi",
}  # fmt: skip


LINES = [(sample.label, sample.lang, sample.text) for sample in read_file(CORPUS)]


@pytest.mark.parametrize(
    ("cls", "lang", "text"),
    [line for line in LINES if line[0] in CONSENT_CLASSES],
    ids=str,
)
def test_a_sideways_sensitive_sentence_needs_consent_for_its_class(cls, lang, text):
    assert cls in classify([text]).consent_classes, (lang, text)


@pytest.mark.parametrize(
    ("lang", "text"),
    [(lang, text) for cls, lang, text in LINES if cls == Sensitivity.PERSONAL],
    ids=str,
)
def test_a_personal_detail_is_personal(lang, text):
    assert classify([text]).sensitivity == Sensitivity.PERSONAL, (lang, text)


@pytest.mark.parametrize(
    ("lang", "text"), [(lang, text) for cls, lang, text in LINES if cls == "none"], ids=str
)
def test_a_look_alike_needs_no_consent(lang, text):
    assert classify([text]).consent_classes == (), (lang, text)


def test_the_red_team_covers_every_class_twice_in_every_language():
    lines: dict[tuple[str, str], int] = defaultdict(int)
    for cls, lang, _ in LINES:
        lines[cls, lang] += 1

    for cls in (*CONSENT_CLASSES, Sensitivity.PERSONAL):
        if cls == Sensitivity.SENSITIVE:
            continue  # the class an agent names, not one the rules find
        for lang in LANGUAGES:
            assert lines[cls, lang] >= 2, (cls, lang)
    assert sum(n for (cls, _), n in lines.items() if cls == "none") >= 60
    assert {lang for _, lang in lines} == LANGUAGES
