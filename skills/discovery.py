"""Finding skills by meaning: what is embedded for a version, and how candidates are ranked.

Pure: the catalog selector and the discovery benchmark (``python -m bench
skills-discovery``) rank with these same functions, so the measured figures are
the served ones. A candidate's score is its cosine similarity to the task
(name, description, triggers and the start of the body, embedded at publish
time) plus a small bonus for task words it contains, then moved by what is
known of it: risk, how many preconditions it has, and how it did on this task
type (use reports, its evaluation against the no-skill baseline). A task no
skill covers should find nothing: candidates under the floor are dropped, and
a skill with negative transfer on the task type sinks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Under this similarity a skill is not about the task: between the best negative (0.17)
# and the weakest positive (0.26) of the tuning half of testing/skill_discovery, with
# the packaged MiniLM; measured on the held-out half (bench/RESULTS.md).
SIMILARITY_FLOOR = 0.22
BODY_SUMMARY_CHARS = 400
WORD_SHARE_FLOOR = 0.5
WORD_BONUS = 0.08
RISK_PENALTY = {"low": 0.0, "medium": 0.01, "high": 0.03}
PRECONDITION_PENALTY = 0.005
PRECONDITION_PENALTY_CAP = 0.02
SUCCESS_WEIGHT = 0.1
NEGATIVE_TRANSFER_PENALTY = 0.25
BASELINE_BONUS = 0.01

_WORD = re.compile(r"\w{2,}")
_HEADING = re.compile(r"^\s*#+\s*", re.MULTILINE)
_STOP_WORDS = frozenset(
    [
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "for",
        "from",
        "how",
        "in",
        "into",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "that",
        "the",
        "this",
        "to",
        "use",
        "using",
        "we",
        "what",
        "when",
        "with",
        "you",
        "your",
    ]
)


def task_words(query: str, limit: int = 20) -> list[str]:
    """The words of a task that say something: lowercased, unique, stop words left out."""
    words = [word for word in _WORD.findall(query.casefold()) if word not in _STOP_WORDS]
    return list(dict.fromkeys(words))[:limit]


def body_summary(body: str) -> str:
    """The start of a SKILL.md body, headings as plain words, at most a few sentences."""
    text = " ".join(_HEADING.sub("", body).split())
    return text[:BODY_SUMMARY_CHARS]


def discovery_document(*, name: str, manifest: dict[str, Any], body: str) -> str:
    """What is embedded for a version: what it is called, what it does, when to use it."""
    triggers = "; ".join(str(trigger) for trigger in manifest.get("triggers") or [])
    parts = [
        name.replace("-", " "),
        str(manifest.get("description") or ""),
        f"Use when: {triggers}" if triggers else "",
        body_summary(body),
    ]
    return ". ".join(part.strip().rstrip(".") for part in parts if part.strip())


def lexical_text(*, slug: str, name: str, manifest: dict[str, Any]) -> str:
    triggers = " ".join(str(trigger) for trigger in manifest.get("triggers") or [])
    return " ".join([slug, name, str(manifest.get("description") or ""), triggers]).casefold()


def words_matched(words: list[str], text: str) -> list[str]:
    # Whole words for scripts with spaces; unsegmented scripts (Chinese) by substring.
    tokens = frozenset(_WORD.findall(text))
    return [word for word in words if (word in tokens if word.isascii() else word in text)]


@dataclass(frozen=True)
class TaskRecord:
    """How a skill did on one task type: agents' use reports and its baseline evaluation."""

    successes: int = 0
    failures: int = 0
    negative_transfers: int = 0
    beats_baseline: bool = False

    @property
    def reports(self) -> int:
        return self.successes + self.failures


@dataclass(frozen=True)
class Candidate:
    key: str
    manifest: dict[str, Any]
    lexical: str
    vector: np.ndarray | None
    record: TaskRecord = field(default_factory=TaskRecord)


@dataclass(frozen=True)
class Ranked:
    key: str
    score: float
    why: dict[str, Any]


def _preconditions(manifest: dict[str, Any]) -> int:
    return sum(len(manifest.get(name) or []) for name in ("tools", "capabilities", "credentials"))


def rank(
    candidates: list[Candidate],
    *,
    query_vector: np.ndarray | None,
    words: list[str],
    floor: float = SIMILARITY_FLOOR,
) -> list[Ranked]:
    """The candidates about the task, best first. Without a query (no words, no vector)
    every candidate is kept, ordered by what is known of it."""
    ranked = []
    for candidate in candidates:
        matched = words_matched(words, candidate.lexical)
        word_share = len(matched) / len(words) if words else 0.0
        semantic: float | None = None
        if query_vector is not None and candidate.vector is not None:
            semantic = float(np.dot(query_vector, candidate.vector))
        # About the task: close in meaning, or holding most of its words (what a model
        # trained on English misses in another language, say).
        if words and not (
            (semantic is not None and semantic >= floor) or word_share >= WORD_SHARE_FLOOR
        ):
            continue
        record = candidate.record
        risk = str(candidate.manifest.get("risk") or "low")
        preconditions = _preconditions(candidate.manifest)
        success = (record.successes + 1) / (record.reports + 2) - 0.5 if record.reports else 0.0
        negative = record.negative_transfers / record.reports if record.reports else 0.0
        score = (
            (semantic if semantic is not None else word_share)
            + WORD_BONUS * word_share
            - RISK_PENALTY.get(risk, 0.0)
            - min(PRECONDITION_PENALTY * preconditions, PRECONDITION_PENALTY_CAP)
            + SUCCESS_WEIGHT * success
            - NEGATIVE_TRANSFER_PENALTY * negative
            + (BASELINE_BONUS if record.beats_baseline else 0.0)
        )
        ranked.append(
            Ranked(
                key=candidate.key,
                score=round(score, 4),
                why={
                    "semantic": round(semantic, 4) if semantic is not None else "unavailable",
                    "matched": matched,
                    "risk": risk,
                    "preconditions": preconditions,
                    "reports": record.reports,
                    "success_rate": round(record.successes / record.reports, 3)
                    if record.reports
                    else None,
                    "negative_transfer": record.negative_transfers,
                    "beats_baseline": record.beats_baseline,
                },
            )
        )
    ranked.sort(key=lambda entry: (-entry.score, entry.key))
    return ranked
