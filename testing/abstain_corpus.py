"""The abstention corpus (testing/corpus/recall_abstain): subjects, the facts each told,
and questions about them, answerable or never provided, in a tuning and a held-out half.

A subject holds the topics of `topics.tsv` whose line number has the parity of its own;
a question about a topic it lacks, or about a topic of `never.tsv`, asks for something
never provided. Each topic and each never-provided topic has one question in each half:
the relevance floor is fitted on `tuning` alone, and `heldout` measures it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "corpus" / "recall_abstain"

SPLITS = ("tuning", "heldout")


def _rows(name: str) -> list[list[str]]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


@dataclass(frozen=True)
class Fact:
    predicate: str
    text: str
    value: str


@dataclass(frozen=True)
class CorpusSubject:
    name: str
    facts: list[Fact]
    notes: list[str]

    @property
    def key(self) -> str:
        return f"user:{self.name.lower()}"


@dataclass(frozen=True)
class Question:
    subject: str  # the subject's key
    # The predicate that answers it; empty when the subject never provided the answer.
    predicate: str
    text: str

    @property
    def answerable(self) -> bool:
        return bool(self.predicate)


def subjects() -> list[CorpusSubject]:
    topics = _rows("topics.tsv")
    notes = _rows("notes.txt")
    found = []
    for number, (name, note_count) in enumerate(_rows("subjects.tsv")):
        facts = []
        for line, (predicate, statement, values, *_questions) in enumerate(topics):
            if line % 2 == number % 2:
                options = values.split("|")
                value = options[number % len(options)]
                facts.append(Fact(predicate, statement.format(n=name, v=value), value))
        written = [
            notes[k % len(notes)][0].format(k=100 + number * 100 + k)
            for k in range(int(note_count))
        ]
        found.append(CorpusSubject(name=name, facts=facts, notes=written))
    return found


def questions(split: str) -> list[Question]:
    """Every question of one half: each subject asked about every topic."""
    column = SPLITS.index(split)
    topics = _rows("topics.tsv")
    never = _rows("never.tsv")
    asked = []
    for subject in subjects():
        held = {fact.predicate for fact in subject.facts}
        for predicate, _statement, _values, *phrasings in topics:
            answer = predicate if predicate in held else ""
            asked.append(Question(subject.key, answer, phrasings[column]))
        for _topic, *phrasings in never:
            asked.append(Question(subject.key, "", phrasings[column]))
    return asked


# The tuning half's more questions (tuning_extra.tsv, never_extra.tsv): only the fit
# reads them, beside the `tuning` column.
EXTRA = "tuning_extra"


def extra_questions() -> list[Question]:
    """Every subject asked the extra tuning phrasings and the extra never-provided topics."""
    phrasings = _rows("tuning_extra.tsv")
    never = _rows("never_extra.tsv")
    asked = []
    for subject in subjects():
        held = {fact.predicate for fact in subject.facts}
        for predicate, text in phrasings:
            asked.append(Question(subject.key, predicate if predicate in held else "", text))
        asked.extend(Question(subject.key, "", text) for _topic, _where, text in never)
    return asked


def recall_never_questions() -> list[str]:
    """Never-provided questions that no family of the recall bench answers either."""
    return [text for _topic, where, text in _rows("never_extra.tsv") if where == "recall"]
