"""The learned sensitivity head: which sensitive class a fact reads as, judged by example.

The phrase rules (`memory.claims.sensitivity`) catch the crisp cases; this head
reads the ones a list of phrases cannot foresee ("goes to the mosque on Fridays",
"voted Green", "her boy is in year 4") in any of the languages the screen reads.
It is a multinomial logistic regression over the same features as the injection
head (`common.screen.learned.Features`: hashed character and word n-grams of the
canonical reading, and the multilingual meaning columns of the text as written),
with one output per class and one for `none`.

A class is named only when the head gives it at least `threshold` of the
probability; the threshold was read off out-of-fold scores of the training
look-alikes ("the health-check endpoint", "union types", "genetic algorithm") so
that few of them get a class. The weights and the model card live beside the
other heads (`common/screen/models/sensitivity.npz`, `.md`);
`python -m bench.sensitivity_train` fits them again and measures them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from common.screen.learned import MODELS_DIR, Features

NONE = "none"
HEAD_PATH = MODELS_DIR / "sensitivity.npz"
# The least probability at which the head names a class, whatever its fitted threshold.
# The threshold was read off full sentences of its corpus; the short notes agents store
# ("Alice had a dog", "Alice went in 2019") score higher than any of them, and a false
# class refuses an ordinary memory for want of consent. Only a confident head speaks.
MIN_CONFIDENCE = 0.9


@dataclass(frozen=True)
class SensitivityHead:
    features: Features
    classes: tuple[str, ...]  # one per column; `none` among them
    weights: np.ndarray  # float32 [features.width, len(classes)]
    intercepts: np.ndarray  # float64 [len(classes)]
    threshold: float
    # Out of fold on the head's own training corpus, rules and head together: the share of
    # its sensitive facts classified and of its look-alikes flagged (model card).
    cross_validated: tuple[float, float] = (float("nan"), float("nan"))

    def probabilities(self, texts: Sequence[str], written: Sequence[str]) -> np.ndarray:
        """One row per canonical reading (and the same text as `written`): each class's share."""
        if not texts:
            return np.zeros((0, len(self.classes)))
        n = self.features.n_features
        logits = np.asarray(self.features.ngrams(texts) @ self.weights[:n], dtype=np.float64)
        meant = self.features.meant(written)
        if meant is not None:
            logits += meant @ self.weights[n:]
        logits += self.intercepts
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)

    def classes_of(self, groups: Sequence[Sequence[tuple[str, str]]]) -> list[frozenset[str]]:
        """For each group of (canonical, written) readings, the classes any reading is named.

        Every reading of every group is scored in one call: a batch costs one pass.
        """
        flat = [reading for group in groups for reading in group]
        if not flat:
            return [frozenset() for _ in groups]
        probabilities = self.probabilities([c for c, _ in flat], [w for _, w in flat])
        best = probabilities.argmax(axis=1)
        named = [
            self.classes[column]
            if self.classes[column] != NONE
            and probabilities[row, column] >= max(self.threshold, MIN_CONFIDENCE)
            else NONE
            for row, column in enumerate(best)
        ]
        found: list[frozenset[str]] = []
        start = 0
        for group in groups:
            found.append(frozenset(named[start : start + len(group)]) - {NONE})
            start += len(group)
        return found

    def save(self, path: Path) -> None:
        rows, columns = np.nonzero(self.weights)
        np.savez_compressed(
            path,
            rows=rows.astype(np.int32),
            columns=columns.astype(np.int8),
            values=self.weights[rows, columns].astype(np.float16),
            intercepts=self.intercepts.astype(np.float64),
            classes=np.array(self.classes),
            n_features=np.int64(self.features.n_features),
            char_ngrams=np.array(self.features.char_ngrams or (0, 0)),
            word_ngrams=np.array(self.features.word_ngrams or (0, 0)),
            meaning=np.float64(self.features.meaning),
            threshold=np.float64(self.threshold),
            cross_validated=np.array(self.cross_validated, dtype=np.float64),
        )


def load_sensitivity_head(path: Path) -> SensitivityHead:
    with np.load(path) as saved:
        char = tuple(int(n) for n in saved["char_ngrams"])
        word = tuple(int(n) for n in saved["word_ngrams"])
        features = Features(
            n_features=int(saved["n_features"]),
            char_ngrams=(char[0], char[1]) if char[1] else None,
            word_ngrams=(word[0], word[1]) if word[1] else None,
            meaning=float(saved["meaning"]),
        )
        classes = tuple(str(c) for c in saved["classes"])
        weights = np.zeros((features.width, len(classes)), dtype=np.float32)
        weights[saved["rows"], saved["columns"]] = saved["values"]
        return SensitivityHead(
            features=features,
            classes=classes,
            weights=weights,
            intercepts=saved["intercepts"],
            threshold=float(saved["threshold"]),
            cross_validated=(
                float(saved["cross_validated"][0]),
                float(saved["cross_validated"][1]),
            ),
        )


@cache
def sensitivity_head() -> SensitivityHead | None:
    """The shipped head, loaded once per process; None before one has been fitted."""
    return load_sensitivity_head(HEAD_PATH) if HEAD_PATH.exists() else None
