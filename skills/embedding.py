"""Vectors for skill discovery, from the embedder memdesk already uses for recall.

The one place skills reach into memory's embedders: a version's vector is computed
when it is published and stored (``SkillEmbedding``); a task's vector once per
distinct query and process.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from memory.claims.embedders import PACKED_DTYPE, embedder, embedding_digest, pack_vector

logger = logging.getLogger(__name__)


def embedder_model() -> str | None:
    model = embedder()
    return model.model if model is not None else None


def embed_document(document: str) -> tuple[str, str, bytes] | None:
    """(model, digest of the document, packed vector), or None when semantic search is
    off or the embedder failed (the catalog then matches that version by its words)."""
    model = embedder()
    if model is None:
        return None
    try:
        vector = model.embed([document])[0]
    except Exception:  # an HTTP embedder may be down: publishing must not wait for it
        logger.warning("skill discovery: the embedder failed; stored without a vector")
        return None
    return model.model, embedding_digest(document), pack_vector(vector)


def unpack(packed: bytes) -> np.ndarray:
    return np.frombuffer(packed, dtype=PACKED_DTYPE)


@functools.lru_cache(maxsize=512)
def _query_vector(model_name: str, query: str) -> tuple[float, ...] | None:
    model = embedder()
    if model is None or model.model != model_name:
        return None
    try:
        return tuple(float(x) for x in model.embed([query])[0])
    except Exception:
        logger.warning("skill discovery: the embedder failed on a query; words only")
        return None


def query_vector(query: str) -> tuple[str, np.ndarray] | None:
    """(model, unit vector) of a task, or None when there is no embedder to ask."""
    name = embedder_model()
    if name is None or not query.strip():
        return None
    vector = _query_vector(name, query)
    return (name, np.asarray(vector, dtype=np.float32)) if vector is not None else None
