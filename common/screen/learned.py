"""Learned heads: what the screen judges by example rather than by pattern.

A head is a logistic regression over hashed character and word n-grams of a
text's canonical reading (`normalize.canonical`). Character n-grams need no
word parser and no vocabulary, so one head reads Latin, Cyrillic, Arabic,
Devanagari, Han, kana and Hangul alike, and keeps reading a phrasing it never
saw when it shares pieces of words with the ones it did. The weights, the
thresholds of its bands and its model card live beside this file
(`models/<name>.npz`, `models/<name>.md`); `python -m bench.screen_train`
fits them again from the corpus in `testing/screen_corpus` and measures them.

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
    """How a text becomes a vector: the n-gram ranges and the size of the hashed space."""

    n_features: int
    char_ngrams: tuple[int, int]
    word_ngrams: tuple[int, int] | None

    @cache  # noqa: B019 - a handful of frozen instances, each kept for the process
    def _vectorizers(self) -> tuple[HashingVectorizer, ...]:
        common = {
            "n_features": self.n_features,
            "alternate_sign": False,
            "lowercase": False,
            "norm": "l2",
            "dtype": np.float32,
        }
        parts = [HashingVectorizer(analyzer="char_wb", ngram_range=self.char_ngrams, **common)]
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

    def matrix(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """One row per text: the sum of each part's unit-length n-gram counts."""
        # The vectorizers' arguments are fixed above; checking them again on every call
        # costs more than hashing a short note.
        with config_context(skip_parameter_validation=True, assume_finite=True):
            parts = [vectorizer.transform(texts) for vectorizer in self._vectorizers()]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return sparse.csr_matrix(total)


@dataclass(frozen=True)
class Head:
    name: str
    features: Features
    weights: np.ndarray
    intercept: float
    bands: Bands

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The probability, for each text, that it belongs to the head's positive class."""
        if not texts:
            return np.zeros(0)
        logits = self.features.matrix(texts) @ self.weights + self.intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))

    def save(self, path: Path) -> None:
        nonzero = np.flatnonzero(self.weights)
        np.savez_compressed(
            path,
            indices=nonzero.astype(np.int32),
            values=self.weights[nonzero].astype(np.float32),
            intercept=np.float64(self.intercept),
            n_features=np.int64(self.features.n_features),
            char_ngrams=np.array(self.features.char_ngrams),
            word_ngrams=np.array(self.features.word_ngrams or (0, 0)),
            bands=np.array([self.bands.quarantine, self.bands.review]),
        )


def load_head(path: Path, *, name: str) -> Head:
    with np.load(path) as saved:
        n_features = int(saved["n_features"])
        weights = np.zeros(n_features, dtype=np.float32)
        weights[saved["indices"]] = saved["values"]
        word = tuple(int(n) for n in saved["word_ngrams"])
        char = tuple(int(n) for n in saved["char_ngrams"])
        quarantine, review = (float(t) for t in saved["bands"])
        return Head(
            name=name,
            features=Features(
                n_features=n_features,
                char_ngrams=(char[0], char[1]),
                word_ngrams=(word[0], word[1]) if word[1] else None,
            ),
            weights=weights,
            intercept=float(saved["intercept"]),
            bands=Bands(quarantine=quarantine, review=review),
        )


@cache
def head(name: str) -> Head:
    """The fitted head `name`, loaded once per process."""
    return load_head(MODELS_DIR / f"{name}.npz", name=name)
