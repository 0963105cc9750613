"""The embedding worker's writes: a batch of vectors goes to the database in one
statement, each row holding what the model made for its own claim (the packed bytes and
the float copy alike), and a second pass over unchanged claims writes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.claims.embedders import PACKED_DTYPE, embedder, embedding_document
from memory.claims.models import Claim, ClaimEmbedding
from memory.claims.services.embeddings import claims_embed
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db


def test_a_batch_of_vectors_is_written_in_one_statement_each_row_its_own(agent, settings):
    settings.EMBED_BATCH_SIZE = 64
    ids = [
        submit(agent, predicate=f"note_{n}", value=str(n), text=f"Alice wrote note {n} about {w}")[
            "id"
        ]
        for n, w in enumerate(["tea", "tennis", "a red car", "the export", "her dog", "Lisbon"])
    ]
    ClaimEmbedding.objects.filter(claim_id__in=ids).delete()
    model = embedder()
    assert model is not None

    with CaptureQueriesContext(connection) as captured:
        assert claims_embed(claim_ids=ids) == len(ids)
    writes = [q["sql"] for q in captured.captured_queries if "INSERT INTO" in q["sql"]]
    assert len(writes) == 1, writes
    assert ClaimEmbedding._meta.db_table in writes[0]

    claims = {str(c.pk): c for c in Claim.objects.filter(pk__in=ids)}
    rows = list(ClaimEmbedding.objects.filter(claim_id__in=ids, model=model.model))
    assert sorted(str(r.claim_id) for r in rows) == sorted(ids)
    for row in rows:
        claim = claims[str(row.claim_id)]
        document = embedding_document(predicate=claim.predicate, text=claim.text, value=claim.value)
        expected = model.embed([document])[0]
        packed = np.frombuffer(bytes(row.packed), dtype=PACKED_DTYPE)
        assert row.dim == len(expected) == len(row.vector)
        # The float copy is the packed vector, value for value; both are the claim's own.
        assert np.array_equal(np.asarray(row.vector, dtype=np.float32), packed)
        assert float(packed @ expected) > 0.999
        assert row.lag_seconds >= 0

    # Nothing changed: nothing is embedded or written again.
    with CaptureQueriesContext(connection) as captured:
        assert claims_embed(claim_ids=ids) == 0
    assert not [q for q in captured.captured_queries if "INSERT INTO" in q["sql"]]
