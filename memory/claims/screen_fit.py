"""Fitting a tenant's band thresholds to its editors' labels, and measuring bands on them.

Only scores and labels come in; no text. The learned head's score is what the
bands cut, so that is all a fit moves: the rules quarantine what they catch
whatever the thresholds say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from common.screen.learned import PASS, QUARANTINE, Bands
from memory.claims.models.screening import ExampleLabel

# Fewer examples than this say more about chance than about the tenant.
MIN_BENIGN = 30
MIN_INJECTION = 5
# The share of benign examples each band may hold, in percent.
QUARANTINE_BENIGN_PERCENT = 1
FLAGGED_BENIGN_PERCENT = 3
# Claims keep the head's score to four places (`screen_record`): one step of that grid.
STEP = 0.0001

Example = tuple[str, float]  # (label, score)


def lowest_threshold(benign: Sequence[float], *, percent: int) -> float:
    """The lowest threshold, on the grid scores are kept on, at or above which at most
    `percent`% of the `benign` scores lie. The lowest such threshold catches the most
    injections, whatever their scores."""
    allowed = len(benign) * percent // 100
    # Every benign score from the (allowed + 1)-th highest down must fall below the threshold.
    must_pass = sorted(benign, reverse=True)[allowed]
    return round(must_pass + STEP, 4)


def fit_bands(examples: Sequence[Example], *, default: Bands) -> Bands:
    """At most 1% of the benign examples quarantined and 3% flagged (reviewed or
    quarantined), with the review threshold never above the head's own.

    Only claims that reached the review queue are ever labelled: an injection that
    scored below the review threshold passed and nobody saw it. So the examples can
    show that a lower review threshold costs few benign reviews, never that a higher
    one misses nothing; a fit may review more than the head would, never less. The
    quarantine threshold may rise: what it no longer quarantines it still reviews.
    """
    benign = [score for label, score in examples if label == ExampleLabel.BENIGN]
    review = min(lowest_threshold(benign, percent=FLAGGED_BENIGN_PERCENT), default.review)
    quarantine = max(lowest_threshold(benign, percent=QUARANTINE_BENIGN_PERCENT), review)
    return Bands(quarantine=quarantine, review=review)


@dataclass(frozen=True)
class Rates:
    """How one cut (quarantine, or any flag) sorts the examples."""

    benign_share: float
    precision: float | None  # None: the cut holds no example
    recall: float


@dataclass(frozen=True)
class Quality:
    quarantined: Rates
    flagged: Rates


def _rates(examples: Sequence[Example], caught: Sequence[bool]) -> Rates:
    labelled = list(zip((label for label, _ in examples), caught, strict=True))
    injections = [hit for label, hit in labelled if label == ExampleLabel.INJECTION]
    benign = [hit for label, hit in labelled if label == ExampleLabel.BENIGN]
    true_hits, false_hits = sum(injections), sum(benign)
    return Rates(
        benign_share=false_hits / len(benign) if benign else 0.0,
        precision=true_hits / (true_hits + false_hits) if true_hits + false_hits else None,
        recall=true_hits / len(injections) if injections else 0.0,
    )


def band_quality(examples: Sequence[Example], bands: Bands) -> Quality:
    """Precision and recall of `bands` on the examples, at quarantine and at any flag."""
    cut = [bands.band(score) for _, score in examples]
    return Quality(
        quarantined=_rates(examples, [band == QUARANTINE for band in cut]),
        flagged=_rates(examples, [band != PASS for band in cut]),
    )
