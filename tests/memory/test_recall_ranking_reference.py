"""The ranking statement against a brute-force reference: every signal it computes for a
legal claim (full-text rank and hit, shared n-grams, exact identifiers, the ranks of
each signal) and the packed vector it reads are what a claim-by-claim computation finds
on the same rows. The statement may be rewritten for speed; its answers may not move."""

from __future__ import annotations

import pytest
from django.db import connection

from common.rows import fetch_bound
from memory.claims.embedders import embedder
from memory.claims.models import AUTHORITY_RANK, Claim, ClaimEmbedding, Subject
from memory.claims.search import ngrams
from memory.claims.selectors.claims import ranking_params
from memory.claims.selectors.recall_abstention import identifier_grams
from memory.claims.selectors.recall_ranking import RecallQuery, ranking_sql
from tests.memory.helpers import submit
from tests.memory.test_semantic_recall import embed_all

pytestmark = pytest.mark.django_db

FACTS = [
    ("home_city", "Shanghai", "Alice lives in Shanghai"),
    ("drink", "tea", "Alice drinks green tea every morning"),
    ("pet", "Rex", "Alice has a dog named Rex"),
    ("job", "nurse", "Alice works as a nurse at the children's hospital"),
    ("sport", "tennis", "Alice plays tennis on weekends"),
    ("car", "Tesla", "Alice drives a red Tesla"),
    ("order", "tea", "Alice ordered green tea for the team meeting"),
    ("ticket", "ERR_4711", "Ticket ERR_4711: the morning export failed"),
    ("ticket_2", "ERR_4712", "Ticket ERR_4712: the evening export failed"),
    ("meeting", "Monday", "Team meeting every Monday morning about the export"),
    ("reminder", "tea", "Remind Alice to buy tea and tennis balls"),
    ("editor", "vim", "Alice writes code in vim"),
]

QUESTIONS = [
    "what does she drink in the morning",
    "green tea",
    "ERR_4711 export",
    "which city does Alice live in",
    "tennis on weekends",
    "zzz qqq",
]


def _rank_desc(values: dict[str, float]) -> dict[str, int]:
    """SQL's rank() in descending order: one plus how many values are greater."""
    return {
        key: 1 + sum(other > value for other in values.values()) for key, value in values.items()
    }


def _reference(claims: list[Claim], question: str, needed: int) -> dict[str, dict]:
    """Each claim's signals computed one claim at a time."""
    grams = set(ngrams(question))
    identifiers = identifier_grams(question)
    full_text: dict[str, tuple[float, bool]] = {}
    with connection.cursor() as cursor:
        for claim in claims:
            cursor.execute(
                "SELECT ts_rank(search_vector, plainto_tsquery('english', %s))::float8, "
                "search_vector @@ plainto_tsquery('english', %s) FROM memory_claim WHERE id = %s",
                [question, question, claim.pk],
            )
            text_rank, text_hit = cursor.fetchone()
            full_text[str(claim.pk)] = (text_rank, text_hit)
    shared = {str(c.pk): len(set(c.ngrams) & grams) for c in claims}
    recency = _rank_desc({str(c.pk): c.recorded_at.timestamp() for c in claims})
    ranks = {str(name): rank for name, rank in AUTHORITY_RANK.items()}
    authority = {str(c.pk): ranks.get(c.authority, 0) for c in claims}
    authority_pos = _rank_desc({key: float(value) for key, value in authority.items()})
    hits = {key: rank for key, (rank, hit) in full_text.items() if hit}
    fulltext_rank = _rank_desc(hits)
    ngram_rank = _rank_desc({k: float(v) for k, v in shared.items() if v >= needed})
    return {
        str(c.pk): {
            "recency_rank": recency[str(c.pk)],
            "authority_pos": authority_pos[str(c.pk)],
            "authority_rank": authority[str(c.pk)],
            "fulltext_rank": fulltext_rank.get(str(c.pk)),
            "text_rank": full_text[str(c.pk)][0],
            "ngram_rank": ngram_rank.get(str(c.pk)),
            "gram_hits": shared[str(c.pk)],
            "chars": len(c.text),
            "identifier_hit": bool(identifiers) and set(identifiers) <= set(c.ngrams),
        }
        for c in claims
    }


def test_the_ranking_statement_matches_a_claim_by_claim_reference(acme, agent):
    for predicate, value, text in FACTS:
        submit(agent, predicate=predicate, value=value, text=text)
    embed_all()
    model = embedder()
    assert model is not None
    alice = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    claims = list(Claim.objects.filter(tenant=acme, subject=alice, status="active"))
    assert len(claims) == len(FACTS)
    vectors = {
        str(e.claim_id): bytes(e.packed)
        for e in ClaimEmbedding.objects.filter(claim__in=claims, model=model.model)
    }
    assert len(vectors) == len(FACTS)
    compared = 0
    for question in QUESTIONS:
        q = RecallQuery(subject=alice, query=question, limit=10)
        params = {**ranking_params(tenant=acme, q=q), "model": model.model}
        rows = fetch_bound(ranking_sql(q=q, lexical=True, vectors=True), params, binary=True)
        expected = _reference(claims, question, params["needed"])
        got = {}
        for row in rows:
            (
                claim_id,
                recency_rank,
                authority_pos,
                authority_rank,
                fulltext_rank,
                text_rank,
                ngram_rank,
                gram_hits,
                _scope_size,
                _recorded_at,
                _subject_id,
                _predicate,
                chars,
                _stale,
                identifier_hit,
                packed,
            ) = row[4:20]
            got[str(claim_id)] = {
                "recency_rank": recency_rank,
                "authority_pos": authority_pos,
                "authority_rank": authority_rank,
                "fulltext_rank": fulltext_rank,
                "text_rank": text_rank,
                "ngram_rank": ngram_rank,
                "gram_hits": gram_hits,
                "chars": chars,
                "identifier_hit": identifier_hit,
            }
            assert bytes(packed) == vectors[str(claim_id)], question
        assert got == expected, question
        # Every legal claim is counted, and the matching ones are those a signal found.
        assert rows[0][1] == [len(FACTS)]
        matching = sum(
            1 for e in expected.values() if e["fulltext_rank"] or e["gram_hits"] >= params["needed"]
        )
        assert rows[0][2] == matching, question
        compared += len(got)
    # The fixture exercises each signal: a full-text hit, an n-gram match, an identifier.
    assert compared == len(FACTS) * len(QUESTIONS)
