"""What a text means, as a short vector that reads alike in every language.

A static sentence embedding: each SentencePiece token of a multilingual
tokenizer has one fixed vector, and a text's vector is the mean of its tokens'
vectors at unit length. The table was distilled from multilingual-e5-small
(`python -m bench.screen_distill`): every token was read by the whole model on
its own, the vectors reduced by PCA and weighted down for frequent tokens, so an
order to "always approve refunds" lands near "toujours approuver" and "总是批准"
without the screen having seen either. The cost is a tokenizer call and a
lookup, with no model to run.

The table ships beside the learned heads (`models/meaning.npz`): the pieces and
their scores (the tokenizer is rebuilt from them), and one int8 row per piece
with its scale. Piece 0 is the unknown token and has no vector.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers

from common.screen.normalize import invisible_as_spaces

MEANING_PATH = Path(__file__).resolve().parent / "models" / "meaning.npz"
_SPACES = re.compile(r"\s+")


def plain(text: str) -> str:
    """`text` as the embedding reads it: compatibility-folded, lower-cased, one space a gap.

    Invisible characters (zero-width, bidi, tag, blank letters) read as the space they
    usually stand for; nothing else is folded. The canonical reading is no good here: it
    turns Cyrillic into the Latin letters it resembles and drops the vowel signs of Indic
    scripts, and the embedding's tokens are the words as written.
    """
    text = invisible_as_spaces(unicodedata.normalize("NFKC", text)).lower()
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class Meaning:
    tokenizer: Tokenizer
    vectors: np.ndarray  # float32 [pieces, dims]; row 0 (unknown) is zero

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text (zero when none of its tokens is known), in one call."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([plain(t) for t in texts], add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        ids = np.fromiter(
            (i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum())
        )
        pooled = np.zeros((len(texts), self.dims), dtype=np.float32)
        # Each text's tokens are one run of `ids`; a text with none has no run, so the
        # runs of the others still end where the next one starts.
        some = lengths > 0
        if some.any():
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[some]
            pooled[some] = np.add.reduceat(self.vectors[ids], starts, axis=0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.where(norms > 0, norms, 1.0)


def tokenizer_of(pieces: Sequence[str], scores: Sequence[float]) -> Tokenizer:
    """A SentencePiece unigram tokenizer over `pieces` (the first is the unknown token)."""
    tokenizer = Tokenizer(
        models.Unigram([(p, float(s)) for p, s in zip(pieces, scores, strict=True)], unk_id=0)
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="\u2581", prepend_scheme="always"
    )
    return tokenizer


def save_meaning(path: Path, *, pieces: Sequence[str], scores: np.ndarray, vectors: np.ndarray):
    """Store `vectors` (float, [pieces, dims]) as int8 rows with one scale each."""
    scale = np.abs(vectors).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    np.savez_compressed(
        path,
        pieces=np.frombuffer("\n".join(pieces).encode("utf-8"), dtype=np.uint8),
        scores=scores.astype(np.float32),
        vectors=np.round(vectors / scale[:, None]).astype(np.int8),
        scale=scale.astype(np.float32),
    )


def load_meaning(path: Path) -> Meaning:
    with np.load(path) as saved:
        pieces = saved["pieces"].tobytes().decode("utf-8").split("\n")
        vectors = saved["vectors"].astype(np.float32) * saved["scale"][:, None]
        return Meaning(tokenizer_of(pieces, saved["scores"]), vectors)


@cache
def meaning() -> Meaning:
    """The shipped table, loaded once per process."""
    return load_meaning(MEANING_PATH)
