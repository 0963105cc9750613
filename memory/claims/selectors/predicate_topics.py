"""How close a question is to what a claim is about: its predicate's topic (docs/recall.md,
"Abstention").

A claim's full text carries a name and a value ("Ana lives in Lisbon") that dilute its
likeness to a question; its predicate (`home_city`) names the topic alone. Each
predicate's words are embedded once per process and model (words with digits dropped:
`note_17` is a "note"), so a recall compares its question with them for the cost of a
dot product, and no statement more.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import httpx
import numpy as np

from memory.claims.embedders import embedder

logger = logging.getLogger(__name__)

# Distinct predicate phrases kept per process: a tenant's predicates are a vocabulary,
# not one per claim; past this, the least recently used are embedded again when asked.
CACHE_SIZE = 4096

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def predicate_phrase(predicate: str) -> str:
    """The predicate's words as prose: `home_city` is "home city", `note_17` "note"."""
    words = re.split(r"[_./:\-\s]+", predicate.lower())
    return " ".join(w for w in words if w and not any(ch.isdigit() for ch in w))


def phrase_vectors(model_name: str, phrases: Iterable[str]) -> dict[str, np.ndarray]:
    """The phrases' vectors under `model_name`; the ones not cached embedded in one call.
    Only the cached ones when the embedder in force is another model or fails: the
    others' topics are then not measured, and recall does not judge their claims."""
    wanted = sorted(set(phrases) - {""})
    found: dict[str, np.ndarray] = {}
    with _lock:
        for phrase in wanted:
            vector = _cache.get((model_name, phrase))
            if vector is not None:
                _cache.move_to_end((model_name, phrase))
                found[phrase] = vector
    missing = [phrase for phrase in wanted if phrase not in found]
    if not missing:
        return found
    model = embedder()
    if model is None or model.model != model_name:
        return found
    try:
        vectors = model.embed(missing)
    except (httpx.HTTPError, ValueError, KeyError, LookupError) as exc:
        logger.warning("predicate embedding failed", extra={"error": type(exc).__name__})
        return found
    with _lock:
        for phrase, vector in zip(missing, vectors, strict=True):
            _cache[(model_name, phrase)] = vector
            found[phrase] = vector
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def topic_similarities(
    predicates: Iterable[str], *, model_name: str, query_vector: Sequence[float]
) -> dict[str, float]:
    """Each predicate's topic similarity to the question (cosine: unit vectors); a
    predicate with no words left (`n_17`) or not embedded has none."""
    phrases = {predicate: predicate_phrase(predicate) for predicate in set(predicates)}
    vectors = phrase_vectors(model_name, phrases.values())
    query = np.asarray(query_vector, dtype=np.float32)
    return {
        predicate: float(vectors[phrase] @ query)
        for predicate, phrase in phrases.items()
        if phrase in vectors and vectors[phrase].shape == query.shape
    }
