"""Learned heads: what the screen judges by example rather than by pattern.

A head is a logistic regression over hashed character and word n-grams of a
text's canonical reading (`normalize.canonical`). Character n-grams need no
word parser and no vocabulary, so one head reads Latin, Cyrillic, Arabic,
Devanagari, Han, kana and Hangul alike, and keeps reading a phrasing it never
saw when it shares pieces of words with the ones it did. The weights, the
thresholds of its bands and its model card live beside this file
(`models/<name>.npz`, `models/<name>.md`); `python -m bench.screen_train`
fits them again from the corpus in `testing/screen_corpus` and measures them.

A head may also read what a text means (`meaning`): a static multilingual
sentence embedding of the text as written, a few columns beside the hashed
ones, so that an order phrased in a language or wording the n-grams never saw
still lands near the orders they did see.

A score maps to one of three bands: `quarantine`, `review` (the candidates
queue, with the score shown) or `pass`. The thresholds were calibrated on
out-of-fold scores of the training data; a tenant's editors can move them for
that tenant (`manage.py screen_calibrate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn import config_context
from sklearn.feature_extraction.text import HashingVectorizer

from common.screen.meaning import meaning

MODELS_DIR = Path(__file__).resolve().parent / "models"

QUARANTINE = "quarantine"
REVIEW = "review"
PASS = "pass"  # noqa: S105 - a band's name, not a password


@dataclass(frozen=True)
class Bands:
    """Scores at or above `quarantine` are quarantined, at or above `review` reviewed."""

    quarantine: float
    review: float

    def band(self, score: float) -> str:
        if score >= self.quarantine:
            return QUARANTINE
        if score >= self.review:
            return REVIEW
        return PASS


@dataclass(frozen=True)
class Features:
    """How a text becomes a vector: the n-gram ranges, the size of the hashed space, and
    the length of the meaning columns that follow it (0: none)."""

    n_features: int
    char_ngrams: tuple[int, int] | None
    word_ngrams: tuple[int, int] | None
    meaning: float = 0.0

    @property
    def width(self) -> int:
        return self.n_features + (meaning().dims if self.meaning else 0)

    @cache  # noqa: B019 - a handful of frozen instances, each kept for the process
    def _vectorizers(self) -> tuple[HashingVectorizer, ...]:
        common = {
            "n_features": self.n_features,
            "alternate_sign": False,
            "lowercase": False,
            "norm": "l2",
            "dtype": np.float32,
        }
        parts = []
        if self.char_ngrams:
            parts.append(
                HashingVectorizer(analyzer="char_wb", ngram_range=self.char_ngrams, **common)
            )
        if self.word_ngrams:
            parts.append(
                HashingVectorizer(
                    analyzer="word",
                    ngram_range=self.word_ngrams,
                    token_pattern=r"(?u)\b\w+\b",  # noqa: S106 - words, not a password
                    **common,
                )
            )
        return tuple(parts)

    def ngrams(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """One row per canonical reading: the sum of each part's unit-length n-gram counts."""
        # The vectorizers' arguments are fixed above; checking them again on every call
        # costs more than hashing a short note.
        with config_context(skip_parameter_validation=True, assume_finite=True):
            parts = [vectorizer.transform(texts) for vectorizer in self._vectorizers()]
        total = parts[0] if parts else sparse.csr_matrix((len(texts), self.n_features))
        for part in parts[1:]:
            total = total + part
        return sparse.csr_matrix(total)

    def meant(self, written: Sequence[str]) -> np.ndarray | None:
        """The meaning columns of each text as written, at their length; None without them."""
        return meaning().embed(written) * self.meaning if self.meaning else None

    def matrix(
        self, texts: Sequence[str], written: Sequence[str] | None = None
    ) -> sparse.csr_matrix:
        """One row per canonical reading in `texts`: its n-grams, then the meaning of the same
        text as `written` (default: `texts`)."""
        meant = self.meant(written if written is not None else texts)
        if meant is None:
            return self.ngrams(texts)
        return sparse.hstack([self.ngrams(texts), sparse.csr_matrix(meant)], format="csr")


@dataclass(frozen=True)
class Head:
    name: str
    features: Features
    weights: np.ndarray
    intercept: float
    bands: Bands

    def scores(self, texts: Sequence[str], written: Sequence[str] | None = None) -> np.ndarray:
        """The probability, for each canonical reading (and the text as `written`, which
        the meaning columns read), that it belongs to the head's positive class."""
        if not texts:
            return np.zeros(0)
        n = self.features.n_features
        logits = self.features.ngrams(texts) @ self.weights[:n] + self.intercept
        meant = self.features.meant(written if written is not None else texts)
        if meant is not None:
            logits = logits + meant @ self.weights[n:]
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))

    def save(self, path: Path) -> None:
        nonzero = np.flatnonzero(self.weights)
        np.savez_compressed(
            path,
            indices=nonzero.astype(np.int32),
            values=self.weights[nonzero].astype(np.float32),
            intercept=np.float64(self.intercept),
            n_features=np.int64(self.features.n_features),
            char_ngrams=np.array(self.features.char_ngrams or (0, 0)),
            word_ngrams=np.array(self.features.word_ngrams or (0, 0)),
            meaning=np.float64(self.features.meaning),
            bands=np.array([self.bands.quarantine, self.bands.review]),
        )


def load_head(path: Path, *, name: str) -> Head:
    with np.load(path) as saved:
        word = tuple(int(n) for n in saved["word_ngrams"])
        char = tuple(int(n) for n in saved["char_ngrams"])
        features = Features(
            n_features=int(saved["n_features"]),
            char_ngrams=(char[0], char[1]) if char[1] else None,
            word_ngrams=(word[0], word[1]) if word[1] else None,
            meaning=float(saved["meaning"]) if "meaning" in saved else 0.0,
        )
        weights = np.zeros(features.width, dtype=np.float32)
        weights[saved["indices"]] = saved["values"]
        quarantine, review = (float(t) for t in saved["bands"])
        return Head(
            name=name,
            features=features,
            weights=weights,
            intercept=float(saved["intercept"]),
            bands=Bands(quarantine=quarantine, review=review),
        )


@cache
def head(name: str) -> Head:
    """The fitted head `name`, loaded once per process."""
    return load_head(MODELS_DIR / f"{name}.npz", name=name)
