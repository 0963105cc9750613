"""How recall ranks its legal set: the query's vector (embedded once, cached), one ranking
statement over the subject's claims with their lexical and vector signals, and the fusion
of those ranks into one order. `claims_recall` in `claims.py` calls these."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
import numpy as np
from django.conf import settings

from common.rows import RowReader
from memory.claims.embedders import embedder
from memory.claims.models import (
    AUTHORITY_RANK,
    Claim,
    ClaimEmbedding,
    RecallTrace,
    RecallUse,
    Subject,
)

logger = logging.getLogger(__name__)


@dataclass
class RecallQuery:
    subject: Subject | None
    # A cross-subject recall names every subject here (`subject` is then the first).
    subjects: list[Subject] = field(default_factory=list)
    scope: dict[str, str] = field(default_factory=dict)
    query: str = ""
    as_of: datetime | None = None
    cutoff: datetime | None = None
    kinds: list[str] = field(default_factory=list)
    limit: int = 10
    budget_chars: int | None = None
    include_stale: bool = False
    # Counterfactuals, read-only: claims treated as absent, as past their refresh time,
    # or as saying something else ({id: (text, value)}); nothing is written.
    hidden: list[Any] = field(default_factory=list)
    made_stale: list[Any] = field(default_factory=list)
    corrected: dict[Any, tuple[str, Any]] = field(default_factory=dict)


# Agents repeat their questions (a loop asks the same thing each turn; retries), and the
# query's embedding is most of a semantic recall's time: recent vectors are kept per
# process (`RECALL_QUERY_CACHE_SIZE` of them), keyed by the model and the exact text.
@functools.lru_cache(maxsize=settings.RECALL_QUERY_CACHE_SIZE)
def cached_query_vector(model_name: str, embedder_id: int, query: str) -> tuple[float, ...]:
    model = embedder()
    if model is None or id(model) != embedder_id:  # pragma: no cover - settings changed
        raise LookupError("the embedder changed while its query was embedded")
    return tuple(float(x) for x in model.embed([query])[0])


def query_vector(query: str) -> tuple[str, Sequence[float] | None]:
    """The query's vector and the model that made it; no vector when semantic recall is off."""
    model = embedder()
    if model is None or not query.strip():
        return "", None
    try:
        return model.model, cached_query_vector(model.model, id(model), query)
    except (httpx.HTTPError, ValueError, KeyError, LookupError) as exc:
        # An unreachable embeddings endpoint degrades recall to lexical, never fails it.
        logger.warning("query embedding failed", extra={"error": type(exc).__name__})
        return "", None


# The claim columns a recall loads for what it returns; the search columns stay in the
# database (deferred: nothing that reads a recalled claim needs them).
RECALLED = RowReader(
    Claim,
    alias="c",
    fields=[f for f in Claim._meta.concrete_fields if f.name not in {"search_vector", "ngrams"}],
)


CLAIM_TABLE = Claim._meta.db_table


EMBEDDING_TABLE = ClaimEmbedding._meta.db_table


TRACE_TABLE = RecallTrace._meta.db_table


USE_TABLE = RecallUse._meta.db_table


AUTHORITY_RANK_SQL = " ".join(
    f"WHEN '{authority}' THEN {rank}" for authority, rank in AUTHORITY_RANK.items()
)


# The subject's active claims' packed vectors of one model: the only claims that can be
# legal, so every legal claim with a vector gets its exact similarity; the others are
# the neighbours its hubness is measured against.
_PACKED_VECTORS = f"""
    SELECT e.claim_id, e.packed FROM {CLAIM_TABLE} c
    JOIN {EMBEDDING_TABLE} e ON e.claim_id = c.id AND e.tenant_id = c.tenant_id
    WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s) AND c.status = 'active'
      AND e.model = %(model)s AND e.packed IS NOT NULL
"""  # noqa: S608 - table names are constants; every value is a parameter


# Hubness: a claim with many near-duplicates among the subject's claims (a run of
# templated notes, tickets, reminders) is close to every question in the same general
# way and crowds out the claim the question is about. As in CSLS (Conneau et al., 2018),
# the best candidates' similarity is lowered by their mean similarity to their nearest
# neighbours in the subject, weighted by `RECALL_HUB_PENALTY`; the others are lowered by
# the largest of those means, so they keep their order below.
HUB_NEIGHBOURS = 5


HUB_CANDIDATES = 50


def vector_similarities(
    matrix: np.ndarray, query_vector: Sequence[float]
) -> tuple[list[float], list[float]]:
    """Each row's similarity to the query (exact cosine: the vectors are unit length),
    and that less its hubness; none when the vectors are of another dimension."""
    query = np.asarray(query_vector, dtype=np.float32)
    if not len(matrix) or matrix.shape[1] != query.shape[0]:
        return [], []  # no vectors, or vectors of another dimension: not comparable
    cosines = matrix @ query
    scores = cosines
    penalty = settings.RECALL_HUB_PENALTY
    if penalty and len(matrix) > HUB_NEIGHBOURS + 1:
        head = np.argsort(-scores, kind="stable")[:HUB_CANDIDATES]
        # Each row's best is the claim itself; the next ones are its nearest neighbours.
        nearest = np.sort(matrix[head] @ matrix.T, axis=1)[:, -(HUB_NEIGHBOURS + 1) : -1]
        hubness = nearest.mean(axis=1)
        adjusted = scores - penalty * float(hubness.max())
        adjusted[head] = scores[head] - penalty * hubness
        scores = adjusted
    return [float(c) for c in cosines], [float(score) for score in scores]


# The query is embedded on a helper thread while the request's thread runs the ranking
# statement: the model's run releases the GIL, so the statement costs a recall little
# time of its own. A few threads, so that concurrent requests of a threaded server do
# not queue for one.
_EMBEDDING_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-embed")


def query_vector_future(query: str) -> Future[tuple[str, Sequence[float] | None]]:
    """The query's vector and its model (none when semantic recall is off or the embedder
    failed), computed on a recall thread while the caller reads its rows."""
    return _EMBEDDING_THREADS.submit(query_vector, query)


def ranking_sql(*, q: RecallQuery, lexical: bool, vectors: bool) -> str:
    """The legal set and its lexical signals in one statement: every claim of the subject
    counted by the first rule that excludes it (or `legal`), each legal claim's full-text,
    n-gram, recency and authority signals and their ranks, and (with `vectors`) the packed
    vector of every active claim. The counts are on every row, and on the one row an
    empty subject answers. What needs the query's vector (its similarity, its rank, the
    fused score) is computed from these rows (`fused_candidates`), so this statement runs
    while the query is embedded."""
    hidden = ["WHEN c.id = ANY(%(hidden)s::uuid[]) THEN 'hidden'"] if q.hidden else []
    # The active claims are judged by every rule; the others are `inactive` (or `hidden`).
    rules = [
        *hidden,
        "WHEN NOT (c.scope <@ %(scope)s::jsonb) THEN 'out_of_scope'",
        "WHEN c.valid_from > %(as_of)s THEN 'not_yet_valid'",
        "WHEN c.valid_to <= %(as_of)s THEN 'no_longer_valid'",
    ]
    if q.cutoff is not None:
        # A point in time bounds both clocks: what was knowable by then, and what had
        # happened by then (the claim's event time, `valid_from`; docs/recall.md).
        rules.append("WHEN c.available_at > %(cutoff)s THEN 'after_cutoff'")
        rules.append("WHEN c.valid_from > %(cutoff)s THEN 'event_after_cutoff'")
    rules.append("WHEN c.expires_at <= %(as_of)s THEN 'expired'")
    if not q.include_stale:
        rules.append("WHEN c.refresh_after <= %(as_of)s THEN 'stale'")
        if q.made_stale:
            rules.append("WHEN c.id = ANY(%(made_stale)s::uuid[]) THEN 'stale'")
    # A corrected claim is searched by what the correction says (its stored vector
    # still holds the old meaning, so meaning does not rank it).
    search_vector, claim_ngrams = "c.search_vector", "c.ngrams"
    if q.corrected:
        search_vector = (
            "CASE WHEN c.id = %(corrected)s::uuid THEN "
            "to_tsvector('english'::regconfig, %(corrected_document)s) ELSE c.search_vector END"
        )
        claim_ngrams = (
            "CASE WHEN c.id = %(corrected)s::uuid THEN %(corrected_grams)s::varchar[] "
            "ELSE c.ngrams END"
        )
    kinds = "AND c.kind = ANY(%(kinds)s)" if q.kinds else ""
    inactive = f"CASE {hidden[0]} ELSE 'inactive' END" if hidden else "'inactive'"
    if lexical:
        # float8: the rank as the float4 it is, so the trace rounds what was ranked.
        text = (
            "ts_rank(s.search_vector, plainto_tsquery('english'::regconfig, %(query)s))::float8 "
            "AS text_rank, "
            "(s.search_vector @@ plainto_tsquery('english'::regconfig, %(query)s)) AS text_hit, "
            # The distinct n-grams the claim shares with the query.
            "(SELECT count(DISTINCT g) FROM unnest(s.ngrams) AS g "
            "WHERE g = ANY(%(grams)s::varchar[]))::int AS gram_hits, "
            # Every identifier of the query (`ERR_4711`) in the claim: exact evidence.
            "(cardinality(%(identifier_grams)s::varchar[]) > 0 "
            "AND s.ngrams @> %(identifier_grams)s::varchar[]) AS identifier_hit"
        )
    else:
        text = (
            "NULL::float8 AS text_rank, NULL::boolean AS text_hit, 0 AS gram_hits, "
            "false AS identifier_hit"
        )
    signals = (
        "r.recency_rank, r.authority_pos, r.authority_rank, r.fulltext_rank, r.text_rank, "
        "r.ngram_rank, r.gram_hits, r.scope_size, r.recorded_at, r.subject_id, r.predicate, "
        "r.chars, r.stale, r.identifier_hit"
    )
    if vectors:
        # Every active claim's vector: a legal claim's similarity, the others' for hubness.
        claim_rows = (
            f"vectors AS ({_PACKED_VECTORS}), claim_rows AS ("  # noqa: S608 - constants
            f"SELECT COALESCE(r.id, v.claim_id) AS id, {signals}, v.packed "
            "FROM ranked r FULL JOIN vectors v ON v.claim_id = r.id)"
        )
    else:
        claim_rows = (
            f"claim_rows AS (SELECT r.id, {signals}, "  # noqa: S608 - constants
            "NULL::bytea AS packed FROM ranked r)"
        )
    return f"""
    WITH subject_claims AS (
        SELECT c.id, c.subject_id, c.authority, c.scope_size, c.recorded_at, c.predicate,
               char_length(c.text) AS chars,
               COALESCE(c.refresh_after <= %(as_of)s, false)
                   OR c.id = ANY(%(made_stale)s::uuid[]) AS stale,
               {search_vector} AS search_vector, {claim_ngrams} AS ngrams,
               CASE {" ".join(rules)} ELSE 'legal' END AS exclusion
        FROM {CLAIM_TABLE} c
        WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s)
          AND c.status = 'active' {kinds}
    ), history AS (
        -- A subject's superseded, rejected and pending claims only count: an index
        -- range counted, not rows read and judged, however long the history.
        SELECT c.subject_id, {inactive} AS exclusion, count(*) AS n
        FROM {CLAIM_TABLE} c
        WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s)
          AND c.status NOT IN ('active', 'erased') {kinds}
        GROUP BY 1, 2
    ), legal AS (
        SELECT s.id, s.scope_size, s.recorded_at, s.subject_id, s.predicate, s.chars, s.stale,
               CASE s.authority {AUTHORITY_RANK_SQL} ELSE 0 END AS authority_rank, {text}
        FROM subject_claims s WHERE s.exclusion = 'legal'
    ), ranked AS (
        SELECT l.*,
               rank() OVER (ORDER BY l.recorded_at DESC) AS recency_rank,
               rank() OVER (ORDER BY l.authority_rank DESC) AS authority_pos,
               CASE WHEN l.text_hit THEN
                   rank() OVER (PARTITION BY l.text_hit ORDER BY l.text_rank DESC) END
                   AS fulltext_rank,
               CASE WHEN l.gram_hits >= %(needed)s THEN
                   rank() OVER (PARTITION BY l.gram_hits >= %(needed)s ORDER BY l.gram_hits DESC)
                   END AS ngram_rank
        FROM legal l
    ), {claim_rows}, counts AS (
        SELECT array_agg(exclusion) AS reasons, array_agg(n) AS claims,
               array_agg(subject_id) AS subject_ids
        FROM (SELECT subject_id, exclusion, sum(n)::bigint AS n
              FROM (SELECT subject_id, exclusion, count(*) AS n FROM subject_claims
                    GROUP BY subject_id, exclusion
                    UNION ALL SELECT subject_id, exclusion, n FROM history) per_rule
              GROUP BY subject_id, exclusion) g
    ), matching AS (
        SELECT count(*) FILTER (WHERE text_hit OR gram_hits >= %(needed)s) AS n FROM legal
    )
    SELECT CASE WHEN row_number() OVER () = 1 THEN counts.reasons END,
           CASE WHEN row_number() OVER () = 1 THEN counts.claims END,
           matching.n,
           CASE WHEN row_number() OVER () = 1 THEN counts.subject_ids END,
           claim_rows.*
    FROM counts CROSS JOIN matching LEFT JOIN claim_rows ON true
    """  # noqa: S608 - table names and rules are constants; every value is a parameter


@dataclass(slots=True)
class Ranked:
    """A legal claim as the ranking statement gives it (its signals and their ranks, and
    what ordering and cutting read), what the query's vector adds (its similarity, its
    rank, the fused score), and the signals that placed it. Only a returned claim's
    columns are read and built into a `Claim`."""

    id: Any
    recency_rank: int
    authority_pos: int
    authority_rank: int
    fulltext_rank: int | None
    text_rank: float | None
    ngram_rank: int | None
    gram_hits: int
    scope_size: int
    recorded_at: datetime
    subject_id: int
    predicate: str
    chars: int
    stale: bool
    identifier_hit: bool
    # The query's cosine similarity to the claim, and that less the claim's hubness
    # (what ranks it).
    cosine: float | None = None
    # The query's similarity to the words of the claim's predicate (`predicate_topics`).
    topic: float | None = None
    similarity: float | None = None
    vector_rank: int | None = None
    fused: float = 0.0
    # What a correction being replayed says instead: (text, value).
    corrected: tuple[str, Any] | None = None
    # The fused evidence that the claim is about the question (`recall_abstention`).
    relevance: float | None = None
    signals: dict[str, dict[str, float]] = field(default_factory=dict)


def rank_desc(values: list[float]) -> dict[float, int]:
    """SQL's rank() over `values` in descending order: one plus how many are greater."""
    ranks: dict[float, int] = {}
    for position, value in enumerate(sorted(values, reverse=True), start=1):
        ranks.setdefault(value, position)
    return ranks


def fused_candidates(legal: list[Ranked], *, lexical: bool, limit: int) -> list[Ranked]:
    """The best `limit` legal claims by their fused score, each with its vector rank.

    Reciprocal rank fusion, summed in the order the signals are listed in `why.signals`
    (recency, authority, fulltext, ngram, vector); a signal that did not place the claim
    adds an exact 0. Without a query there is nothing to match: authority and scope
    specificity decide. Ties go to the more specific scope, then the newer claim, then
    the claim id, as an ORDER BY in PostgreSQL would break them (UUIDs compare alike).
    """
    vector_ranks = rank_desc([r.similarity for r in legal if r.similarity is not None])
    k, weights = settings.RECALL_RRF_K, settings.RECALL_WEIGHTS
    for r in legal:
        if r.similarity is not None:
            r.vector_rank = vector_ranks[r.similarity]
        if not lexical:
            r.fused = r.authority_rank * 0.05 + r.scope_size * 0.05
            continue
        fused = 0.0 + weights["recency"] / (k + r.recency_rank)
        fused += weights["authority"] / (k + r.authority_pos)
        fused += 0.0 if r.fulltext_rank is None else weights["fulltext"] / (k + r.fulltext_rank)
        fused += 0.0 if r.ngram_rank is None else weights["ngram"] / (k + r.ngram_rank)
        fused += 0.0 if r.vector_rank is None else weights["vector"] / (k + r.vector_rank)
        r.fused = fused
    # As PostgreSQL orders UUIDs (their 16 bytes, as the integer they spell), in C.
    ordered = sorted(legal, key=lambda r: r.id.int)
    ordered.sort(key=lambda r: r.recorded_at, reverse=True)  # stable: ids stay in order
    ordered.sort(key=lambda r: (r.fused, r.scope_size), reverse=True)
    return ordered[:limit]


# Where a recalled row holds the claim's id.
ID_POSITION = [f.attname for f in RECALLED.fields].index("id")


def recalled_claim(values: Sequence[Any], subjects: dict[int, Subject]) -> Claim:
    claim = RECALLED.build(values)
    # Only the asked-for subjects' claims reach here; without one, no row does.
    claim.subject = subjects[claim.subject_id]
    return claim
