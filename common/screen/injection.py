"""Does a string read like an instruction to the agent rather than a fact?

Two judges read every reading of a claim's strings (as written, with invisible
characters removed, and every payload the decode ladder finds): the rules, whose
weighted signals (`injection_signals`) quarantine a text that reaches `THRESHOLD`, and
the learned head (`learned`), whose score falls in a band (quarantine, review, pass).
The stronger of the two decides. A text the head scores just under its review band
gets a second look (`second_look`): a multilingual encoder and a head of its own,
which may send it to review or quarantine. `python -m bench screen` and `screen-heldout` measure
both on their labelled corpora and on held-out sets never used to tune them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import NamedTuple

import numpy as np

from common.screen.decode import hidden_readings
from common.screen.injection_signals import SIGNALS, THRESHOLD
from common.screen.learned import PASS, QUARANTINE, Bands, head
from common.screen.needles import LabelledPatterns
from common.screen.normalize import (
    canonical,
    canonical_joined,
    fold_leet,
    has_invisible,
    strip_invisible,
)
from common.screen.second_look import SecondLook, second_look


def _across_lines(pattern: str) -> str:
    """Let a space in `pattern` (outside a character class) match a line break too.

    The strings of a claim are judged joined one per line (see `judge_injection`),
    so a phrase split across two fields is still read as one phrase.
    """
    out: list[str] = []
    in_class = escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == " " and not in_class:
            out.append("[ \n]")
            continue
        out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class InjectionResult:
    """The rules' score and the learned head's, and the band the stronger one puts a text in."""

    score: int
    signals: tuple[str, ...] = field(default=())
    # The reading the signals fired on: "written" (as sent), "joined" (invisible
    # characters removed rather than read as spaces), a decoding ("base64",
    # "base64>rot13", "tags"…), or "combined" (only all readings together).
    reading: str = "written"
    # The learned head's highest probability over the readings, and on which.
    learned: float = 0.0
    learned_reading: str = ""
    band: str = PASS
    # The second look's score of that reading, when the head's score fell in its band.
    second: float | None = None

    @property
    def is_injection(self) -> bool:
        return self.band == QUARANTINE

    @property
    def rules_fired(self) -> bool:
        return self.score >= THRESHOLD


CLEAN = InjectionResult(0)


_LATIN = re.compile(r"[a-z]")
_HAN = re.compile(r"[\u3400-\u9fff]")


@cache
def _patterns() -> tuple[LabelledPatterns, LabelledPatterns]:
    """Every signal's patterns under its code: (those written in ASCII, those in Chinese)."""
    latin, cjk = (
        [
            (signal.code, _across_lines(pattern))
            for signal in SIGNALS
            for pattern in signal.patterns
            if pattern.isascii() == ascii_written
        ]
        for ascii_written in (True, False)
    )
    # Hundreds of needles, over notes that share their words: remembering pays.
    flags = re.MULTILINE | re.DOTALL
    return (
        LabelledPatterns(latin, flags=flags, remembers_words=True),
        LabelledPatterns(cjk, flags=flags, remembers_words=True),
    )


def _signals_in(texts: Iterable[str]) -> set[str]:
    """The signals that fire in any of `texts`; a pattern written in ASCII is read only in
    Latin text, one written in Chinese only in Han text."""
    latin, cjk = _patterns()
    fired: set[str] = set()
    for text in texts:
        if _LATIN.search(text):
            fired |= latin.labels_in(text, known=fired)
        if _HAN.search(text):
            fired |= cjk.labels_in(text, known=fired)
    return fired


def _leet_readings(text: str) -> list[str]:
    """`text` as written, and with leetspeak read as letters when that changes it."""
    readings = [text]
    leet = fold_leet(text)
    if leet != text:
        readings.append(leet)
    return readings


def _result(fired: set[str], reading: str) -> InjectionResult:
    weights = {signal.code: signal.weight for signal in SIGNALS}
    ordered = tuple(signal.code for signal in SIGNALS if signal.code in fired)
    return InjectionResult(sum(weights[code] for code in ordered), ordered, reading)


class Reading(NamedTuple):
    name: str
    text: str  # canonical: what the rules and the n-grams read
    written: str  # as written (or decoded): what the meaning columns read


def readings_of(strings: Iterable[str]) -> list[Reading]:
    """Each way to read `strings`, named, as the screens judge them.

    Every reading joins its units one per line: each keeps its own start, where
    patterns anchored at the start of a sentence look, and a space in a pattern
    also matches the line break, so a phrase split across fields ("ignore all
    previous" in the text, "instructions" in the value) is read whole.
    """
    raw = list(dict.fromkeys(s for s in strings if s))
    if not raw:
        return []
    readings = [Reading("written", "\n".join(canonical(s) for s in raw), "\n".join(raw))]
    if any(has_invisible(s) for s in raw):
        readings.append(
            Reading(
                "joined",
                "\n".join(canonical_joined(s) for s in raw),
                "\n".join(strip_invisible(s) for s in raw),
            )
        )
    readings += [
        Reading(how, canonical(hidden), hidden) for s in raw for how, hidden in hidden_readings(s)
    ]
    return readings


def _rules(readings: list[Reading]) -> InjectionResult:
    """The first reading whose signals reach the threshold; else all readings together,
    so an order half in the text and half in an encoded payload is still read whole."""
    fired_anywhere: set[str] = set()
    for name, text, _ in readings:
        fired = _signals_in(_leet_readings(text))
        result = _result(fired, name)
        if result.rules_fired:
            return result
        fired_anywhere |= fired
    return _result(fired_anywhere, "combined" if len(readings) > 1 else "written")


def _judged(readings: list[Reading], scores: np.ndarray, bands: Bands) -> InjectionResult:
    rules = _rules(readings)
    best = max(range(len(readings)), key=lambda i: scores[i])
    learned = float(scores[best])
    band = QUARANTINE if rules.rules_fired else bands.band(learned)
    return replace(rules, learned=learned, learned_reading=readings[best][0], band=band)


def judge_injection(strings: Iterable[str], *, bands: Bands | None = None) -> InjectionResult:
    """Judge every reading of `strings` by the rules and by the learned head.

    Rules that fire quarantine; otherwise the head's highest score over the
    readings picks the band (`bands`, or the head's own calibration).
    """
    return judge_injection_many([list(strings)], bands=bands)[0]


def judge_injection_many(
    items: Sequence[Iterable[str]], *, bands: Bands | None = None
) -> list[InjectionResult]:
    """`judge_injection` for many items, with one pass of the head (one tokenizer call and
    one product) over all their readings, and one encoder call for the second looks."""
    readings = [readings_of(strings) for strings in items]
    model = head("injection")
    bands = bands or model.bands
    flat = [reading for item in readings for reading in item]
    scores = model.scores([r.text for r in flat], [r.written for r in flat])
    results, best_written, start = [], [], 0
    for item in readings:
        if not item:
            results.append(CLEAN)
            best_written.append("")
            continue
        item_scores = scores[start : start + len(item)]
        results.append(_judged(item, item_scores, bands))
        best_written.append(item[int(np.argmax(item_scores))].written)
        start += len(item)
    second = second_look()
    # A tenant whose review threshold is above any score has set the learned screen aside;
    # one that raised it past the head's own lets the scores in between pass unread.
    if second is not None and bands.review <= 1.0:
        ceiling = min(bands.review, model.bands.review)
        results = _looked_again(second, results, best_written, ceiling)
    return results


# The encoder reads at most this much of a text: a few of its 512-token windows. The
# first head and the rules still read all of it.
SECOND_LOOK_CHARS = 2000


def _looked_again(
    second: SecondLook,
    results: list[InjectionResult],
    best_written: list[str],
    ceiling: float,
) -> list[InjectionResult]:
    """Give the reading the head scored highest (`best_written`, as written) a second
    look, for every item whose score fell just under `ceiling` (the review threshold)
    and that nothing else flagged."""
    doubtful = [
        i
        for i, result in enumerate(results)
        if result.band == PASS and second.looks_at(result.learned, ceiling)
    ]
    if not doubtful:
        return results
    scores = second.scores([best_written[i][:SECOND_LOOK_CHARS] for i in doubtful])
    looked = list(results)
    for i, score in zip(doubtful, scores, strict=True):
        band = second.bands.band(float(score))
        looked[i] = replace(
            results[i], second=float(score), band=band if band != PASS else results[i].band
        )
    return looked
