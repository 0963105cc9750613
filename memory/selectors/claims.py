"""Reads of claims: detail, lists, the recall legal set and its ranking, hot memory."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from accounts.models import Tenant
from common.rows import RowReader, fetch_bound
from memory.embedders import PACKED_DTYPE, embedder, pgvector_installed
from memory.models import (
    AUTHORITY_RANK,
    AUTHORITY_RANK_SQL,
    Claim,
    ClaimEmbedding,
    ClaimSource,
    ClaimStatus,
    RecallTrace,
    RecallUse,
    Subject,
    TraceKind,
)
from memory.search import MATCH_THRESHOLD, matched_terms, ngrams, searchable_text
from reviews.models import ItemStatus, Queue, ReviewItem

logger = logging.getLogger(__name__)

SEMANTIC_UNAVAILABLE = "unavailable"

EXCLUSION_REASONS = (
    "out_of_scope",
    "not_yet_valid",
    "no_longer_valid",
    "after_cutoff",
    "inactive",
    "expired",
    "stale",
)


_SUBJECT = RowReader(Subject, alias="s")
_SUBJECT_BY_KEY = f"""
    SELECT {_SUBJECT.columns} FROM {Subject._meta.db_table} s
    WHERE s.tenant_id = %s AND s.kind = %s AND s.ref = %s
"""  # noqa: S608 - the table name is a constant; every value is a parameter


def subject_get(*, tenant: Tenant, key: str) -> Subject | None:
    """The tenant's subject `kind:ref` (one by the unique constraint), read with fixed SQL:
    every agent call that names a subject asks."""
    kind, _, ref = key.partition(":")
    return _SUBJECT.one(_SUBJECT_BY_KEY, [tenant.pk, kind, ref])


def claims_visible(*, tenant: Tenant, allowed_subjects: frozenset[str] | None) -> QuerySet[Claim]:
    """Claims of the tenant that the caller may see (a token may be limited to subjects)."""
    claims = Claim.objects.filter(tenant=tenant).select_related("subject")
    if allowed_subjects is not None:
        subject_filter = Q(pk__in=[])
        for key in allowed_subjects:
            kind, _, ref = key.partition(":")
            subject_filter |= Q(subject__kind=kind, subject__ref=ref)
        claims = claims.filter(subject_filter)
    return claims


def claim_get(
    *, tenant: Tenant, claim_id: Any, allowed_subjects: frozenset[str] | None
) -> Claim | None:
    return (
        claims_visible(tenant=tenant, allowed_subjects=allowed_subjects)
        .prefetch_related("sources", "derived_from", "derivatives")
        .filter(pk=claim_id)
        .first()
    )


def claim_history(*, claim: Claim) -> QuerySet[Claim]:
    """Every revision on the claim's identity, oldest first."""
    return Claim.objects.filter(
        tenant_id=claim.tenant_id,
        subject_id=claim.subject_id,
        predicate=claim.predicate,
        scope_key=claim.scope_key,
    ).order_by("revision", "recorded_at")


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


@dataclass
class RecalledClaim:
    claim: Claim
    stale: bool
    rank: float
    matched: list[str]
    scope_match: str
    # Each ranking signal that placed the claim: {"fulltext": {"rank": 1, "score": 0.6}, ...}.
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    # `pgvector` or `sql` when meaning ranked the claim, else `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE
    # The open conflict on the claim's identity, if any: {"id", "other", "other_side_summary"}.
    conflict: dict[str, Any] | None = None
    # Where the claim came from, oldest first.
    sources: list[ClaimSource] = field(default_factory=list)

    @property
    def lexical(self) -> bool:
        """Whether the claim shares words or n-grams with the query (not only meaning)."""
        return "fulltext" in self.signals or "ngram" in self.signals


# Why a ranked candidate of the legal set was not returned.
CUT_OVER_BUDGET = "over_budget"  # its text did not fit in what was left of `budget_chars`
CUT_BELOW_LIMIT = "below_limit"  # `limit` items ranked above it were returned


@dataclass
class CutCandidate:
    """A legal claim that was ranked among the candidates but not returned, and why."""

    claim_id: Any
    subject_id: int
    chars: int
    rank: float
    reason: str
    signals: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class RecallResult:
    items: list[RecalledClaim]
    excluded: dict[str, int]
    used_chars: int
    # How this recall compared meanings: `pgvector`, `sql` or `unavailable`.
    semantic: str = SEMANTIC_UNAVAILABLE
    # How many claims of the subject were legal, and the ranked candidates not returned.
    legal: int = 0
    cut: list[CutCandidate] = field(default_factory=list)
    # Per subject id, for a cross-subject recall: its exclusion counts and legal claims.
    excluded_by_subject: dict[int, dict[str, int]] = field(default_factory=dict)
    legal_by_subject: dict[int, int] = field(default_factory=dict)


def _scope_match(claim_scope: dict[str, str], request_scope: dict[str, str]) -> str:
    if claim_scope == request_scope:
        return "exact"
    return "global" if not claim_scope else "broader"


# Agents repeat their questions (a loop asks the same thing each turn; retries), and the
# query's embedding is most of a semantic recall's time: recent vectors are kept per
# process (`RECALL_QUERY_CACHE_SIZE` of them), keyed by the model and the exact text.
@functools.lru_cache(maxsize=settings.RECALL_QUERY_CACHE_SIZE)
def _cached_query_vector(model_name: str, embedder_id: int, query: str) -> tuple[float, ...]:
    model = embedder()
    if model is None or id(model) != embedder_id:  # pragma: no cover - settings changed
        raise LookupError("the embedder changed while its query was embedded")
    return tuple(float(x) for x in model.embed([query])[0])


def _query_vector(query: str) -> tuple[str, Sequence[float] | None]:
    """The query's vector and the model that made it; no vector when semantic recall is off."""
    model = embedder()
    if model is None or not query.strip():
        return "", None
    try:
        return model.model, _cached_query_vector(model.model, id(model), query)
    except (httpx.HTTPError, ValueError, KeyError, LookupError) as exc:
        # An unreachable embeddings endpoint degrades recall to lexical, never fails it.
        logger.warning("query embedding failed", extra={"error": type(exc).__name__})
        return "", None


# The claim columns a recall loads for what it returns; the search columns stay in the
# database (deferred: nothing that reads a recalled claim needs them).
_RECALLED = RowReader(
    Claim,
    alias="c",
    fields=[f for f in Claim._meta.concrete_fields if f.name not in {"search_vector", "ngrams"}],
)
_CLAIM = Claim._meta.db_table
_EMBEDDING = ClaimEmbedding._meta.db_table
_TRACE = RecallTrace._meta.db_table
_USE = RecallUse._meta.db_table
_AUTHORITY_RANK = " ".join(
    f"WHEN '{authority}' THEN {rank}" for authority, rank in AUTHORITY_RANK.items()
)

# Exact similarity of a legal claim's vector to the query's, computed here from the
# subject's packed vectors (`_vector_scores`) and joined in as `vector_scores`.
_SIMILARITY = "v.score"
# The subject's active claims' packed vectors of one model: the only claims that can be
# legal, so every legal claim with a vector gets its exact similarity.
_PACKED_VECTORS = f"""
    SELECT e.claim_id, e.packed FROM {_CLAIM} c
    JOIN {_EMBEDDING} e ON e.claim_id = c.id AND e.tenant_id = c.tenant_id
    WHERE c.tenant_id = %s AND c.subject_id = ANY(%s) AND c.status = 'active'
      AND e.model = %s AND e.packed IS NOT NULL
"""  # noqa: S608 - table names are constants; every value is a parameter


# Hubness: a claim with many near-duplicates among the subject's claims (a run of
# templated notes, tickets, reminders) is close to every question in the same general
# way and crowds out the claim the question is about. As in CSLS (Conneau et al., 2018),
# the best candidates' similarity is lowered by their mean similarity to their nearest
# neighbours in the subject, weighted by `RECALL_HUB_PENALTY`; the others are lowered by
# the largest of those means, so they keep their order below.
HUB_NEIGHBOURS = 5
HUB_CANDIDATES = 50


def _packed_vectors(
    *, tenant: Tenant, subject_ids: list[int], model: str
) -> tuple[list[Any], np.ndarray]:
    """The subjects' active claims with a vector of `model`: their ids and their vectors,
    one row each, in one statement with binary results (bytea as bytes, not hex: half
    the bytes, nothing to decode)."""
    rows = fetch_bound(_PACKED_VECTORS, [tenant.pk, subject_ids, model], binary=True)
    if not rows:
        return [], np.empty((0, 0), dtype=PACKED_DTYPE)
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=PACKED_DTYPE)
    return [row[0] for row in rows], matrix.reshape(len(rows), -1)


def _similarities(matrix: np.ndarray, query_vector: Sequence[float]) -> list[float]:
    """Each row's similarity to the query (exact cosine: the vectors are unit length),
    less its hubness; none when the vectors are of another dimension than the query."""
    query = np.asarray(query_vector, dtype=np.float32)
    if not len(matrix) or matrix.shape[1] != query.shape[0]:
        return []  # no vectors, or vectors of another dimension: not comparable
    scores = matrix @ query
    penalty = settings.RECALL_HUB_PENALTY
    if penalty and len(matrix) > HUB_NEIGHBOURS + 1:
        head = np.argsort(-scores, kind="stable")[:HUB_CANDIDATES]
        # Each row's best is the claim itself; the next ones are its nearest neighbours.
        nearest = np.sort(matrix[head] @ matrix.T, axis=1)[:, -(HUB_NEIGHBOURS + 1) : -1]
        hubness = nearest.mean(axis=1)
        adjusted = scores - penalty * float(hubness.max())
        adjusted[head] = scores[head] - penalty * hubness
        scores = adjusted
    return [float(score) for score in scores]


# The query is embedded here while the request's thread reads the subject's vectors:
# the model's run releases the GIL, so the read costs a recall no time of its own. A few
# threads, so that concurrent requests of a threaded server do not queue for one.
_EMBEDDING_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-embed")


def query_vector_future(query: str) -> Future[tuple[str, Sequence[float] | None]]:
    """The query's vector and its model (none when semantic recall is off or the embedder
    failed), computed on a recall thread while the caller reads its rows."""
    return _EMBEDDING_THREADS.submit(_query_vector, query)


def _vector_scores(
    *, tenant: Tenant, subject_ids: list[int], query: str
) -> tuple[list[Any], list[float]] | None:
    """Each of the subjects' active claims with a vector of the configured model, and its
    similarity to the query; None when the query has no vector (semantic recall off, a
    blank query, or an embedder that failed)."""
    model = embedder()
    if model is None or not query.strip():
        return None
    embedding = query_vector_future(query)
    ids, matrix = _packed_vectors(tenant=tenant, subject_ids=subject_ids, model=model.model)
    model_name, query_vector = embedding.result()
    if query_vector is None or model_name != model.model:
        return None
    scores = _similarities(matrix, query_vector)
    return (ids if scores else []), scores


# Reciprocal rank fusion, summed in the order the signals are listed in `why.signals`
# (recency, authority, fulltext, ngram, vector); a signal that did not place the claim
# adds an exact 0.
_FUSED_LEXICAL = (
    "0::float8 + %(w_recency)s::float8 / (%(k)s + r.recency_rank)"
    " + %(w_authority)s::float8 / (%(k)s + r.authority_pos)"
    " + COALESCE(%(w_fulltext)s::float8 / (%(k)s + r.fulltext_rank), 0)"
    " + COALESCE(%(w_ngram)s::float8 / (%(k)s + r.ngram_rank), 0)"
    " + COALESCE(%(w_vector)s::float8 / (%(k)s + r.vector_rank), 0)"
)
# Without a query there is nothing to match: authority and scope specificity decide.
_FUSED_PLAIN = "r.authority_rank * 0.05::float8 + r.scope_size * 0.05::float8"


def _recall_sql(*, q: RecallQuery, lexical: bool, mode: str) -> str:
    """The whole recall in one statement: every claim of the subject by the first rule that
    excludes it (or `legal`), each legal claim's signals and their ranks, the fused score,
    the best candidates with their columns, and the counts (on every row, and on the one
    row an empty legal set answers)."""
    rules = [
        *(["WHEN c.id = ANY(%(hidden)s::uuid[]) THEN 'hidden'"] if q.hidden else []),
        "WHEN c.status <> 'active' THEN 'inactive'",
        "WHEN NOT (c.scope <@ %(scope)s::jsonb) THEN 'out_of_scope'",
        "WHEN c.valid_from > %(as_of)s THEN 'not_yet_valid'",
        "WHEN c.valid_to <= %(as_of)s THEN 'no_longer_valid'",
    ]
    if q.cutoff is not None:
        rules.append("WHEN c.available_at > %(cutoff)s THEN 'after_cutoff'")
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
    if lexical:
        text = (
            "ts_rank(s.search_vector, plainto_tsquery('english'::regconfig, %(query)s)) "
            "AS text_rank, "
            "(s.search_vector @@ plainto_tsquery('english'::regconfig, %(query)s)) AS text_hit, "
            # The distinct n-grams the claim shares with the query.
            "(SELECT count(DISTINCT g) FROM unnest(s.ngrams) AS g "
            "WHERE g = ANY(%(grams)s::varchar[]))::int AS gram_hits"
        )
    else:
        text = "NULL::real AS text_rank, NULL::boolean AS text_hit, 0 AS gram_hits"
    ranks_by_meaning = mode != SEMANTIC_UNAVAILABLE
    similarity = _SIMILARITY if ranks_by_meaning else "NULL::float8"
    if q.corrected and ranks_by_meaning:
        similarity = f"CASE WHEN s.id = %(corrected)s::uuid THEN NULL ELSE {similarity} END"
    vector_scores = (
        "vector_scores AS (SELECT * FROM unnest(%(vector_ids)s::uuid[], "
        "%(vector_scores)s::float8[]) AS v(id, score)), "
        if ranks_by_meaning
        else ""
    )
    vector_join = "LEFT JOIN vector_scores v ON v.id = s.id" if ranks_by_meaning else ""
    return f"""
    WITH {vector_scores}subject_claims AS (
        SELECT c.id, c.subject_id, c.authority, c.scope_size, c.recorded_at,
               {search_vector} AS search_vector, {claim_ngrams} AS ngrams,
               CASE {" ".join(rules)} ELSE 'legal' END AS exclusion
        FROM {_CLAIM} c
        WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s)
          AND c.status <> 'erased' {kinds}
    ), legal AS (
        SELECT s.id, s.scope_size, s.recorded_at,
               CASE s.authority {_AUTHORITY_RANK} ELSE 0 END AS authority_rank,
               {text}, {similarity} AS similarity
        FROM subject_claims s {vector_join} WHERE s.exclusion = 'legal'
    ), ranked AS (
        SELECT l.*,
               rank() OVER (ORDER BY l.recorded_at DESC) AS recency_rank,
               rank() OVER (ORDER BY l.authority_rank DESC) AS authority_pos,
               CASE WHEN l.text_hit THEN
                   rank() OVER (PARTITION BY l.text_hit ORDER BY l.text_rank DESC) END
                   AS fulltext_rank,
               CASE WHEN l.gram_hits >= %(needed)s THEN
                   rank() OVER (PARTITION BY l.gram_hits >= %(needed)s ORDER BY l.gram_hits DESC)
                   END AS ngram_rank,
               CASE WHEN l.similarity IS NOT NULL THEN
                   rank() OVER (PARTITION BY l.similarity IS NULL ORDER BY l.similarity DESC)
                   END AS vector_rank
        FROM legal l
    ), top AS (
        SELECT r.*, {_FUSED_LEXICAL if lexical else _FUSED_PLAIN} AS fused
        FROM ranked r
        ORDER BY fused DESC, r.scope_size DESC, r.recorded_at DESC, r.id
        LIMIT %(candidates)s
    ), counts AS (
        SELECT array_agg(exclusion) AS reasons, array_agg(n) AS claims,
               array_agg(subject_id) AS subject_ids
        FROM (SELECT subject_id, exclusion, count(*) AS n FROM subject_claims
              GROUP BY subject_id, exclusion) g
    ), matching AS (
        SELECT count(*) FILTER (WHERE text_hit OR gram_hits >= %(needed)s) AS n FROM legal
    )
    SELECT counts.reasons, counts.claims, matching.n, counts.subject_ids,
           top.fused, top.recency_rank, top.authority_pos, top.authority_rank,
           top.fulltext_rank, top.text_rank, top.ngram_rank, top.gram_hits,
           top.vector_rank, top.similarity,
           COALESCE(c.refresh_after <= %(as_of)s, false)
               OR c.id = ANY(%(made_stale)s::uuid[]) AS stale,
           {_RECALLED.columns}
    FROM counts CROSS JOIN matching
    LEFT JOIN top ON true
    LEFT JOIN {_CLAIM} c ON c.id = top.id
    ORDER BY top.fused DESC, top.scope_size DESC, top.recorded_at DESC, top.id
    """  # noqa: S608 - table names and rules are constants; every value is a parameter


# Where a recalled row holds the columns the ordering and the cut read.
_POSITION = {
    name: [f.attname for f in _RECALLED.fields].index(name)
    for name in ("id", "subject_id", "predicate", "scope_size", "text")
}


class _Candidate:
    """A ranked row of the recall statement: what ordering and cutting read, and the
    claim's columns, turned into a `Claim` only if it is returned."""

    __slots__ = (
        "corrected",
        "fused",
        "id",
        "predicate",
        "scope_size",
        "signals",
        "similar",
        "stale",
        "subject_id",
        "text",
        "values",
    )

    def __init__(self, values: Sequence[Any], *, fused: float, stale: bool, similar: bool) -> None:
        self.values = values
        self.fused, self.stale, self.similar = fused, stale, similar
        self.id = values[_POSITION["id"]]
        self.subject_id = values[_POSITION["subject_id"]]
        self.predicate = values[_POSITION["predicate"]]
        self.scope_size = values[_POSITION["scope_size"]]
        self.text: str = values[_POSITION["text"]]
        # What a correction being replayed says instead: (text, value).
        self.corrected: tuple[str, Any] | None = None
        self.signals: dict[str, dict[str, float]] = {}


def _recalled_claim(values: Sequence[Any], subjects: dict[int, Subject]) -> Claim:
    claim = _RECALLED.build(values)
    # Only the asked-for subjects' claims reach here; without one, no row does.
    claim.subject = subjects[claim.subject_id]
    return claim


_SOURCE = RowReader(ClaimSource, alias="s")
_SOURCES_OF_CLAIMS = f"""
    SELECT {_SOURCE.columns} FROM {ClaimSource._meta.db_table} s
    WHERE s.tenant_id = %s AND s.claim_id = ANY(%s::uuid[]) ORDER BY s.id
"""  # noqa: S608 - the table name is a constant; every value is a parameter


def recalled_sources(*, tenant: Tenant, claim_ids: Sequence[Any]) -> dict[Any, list[ClaimSource]]:
    """The sources of the tenant's claims `claim_ids` (those a recall returns), oldest
    first, in one fixed statement."""
    found: dict[Any, list[ClaimSource]] = {claim_id: [] for claim_id in claim_ids}
    if not claim_ids:
        return found
    with connection.cursor() as cursor:
        cursor.execute(_SOURCES_OF_CLAIMS, [tenant.pk, list(claim_ids)])
        for row in cursor.fetchall():
            source = _SOURCE.build(row)
            found[source.claim_id].append(source)
    return found


def recall_subjects(q: RecallQuery) -> list[Subject]:
    """The subjects a recall reads: every one named, or its one subject."""
    if q.subjects:
        return list(q.subjects)
    return [q.subject] if q.subject is not None else []


def claims_recall(*, tenant: Tenant, q: RecallQuery) -> RecallResult:
    """The legal set first (tenant, subject, scope, status, time), then ranking inside it.

    One statement counts every claim of the subject by the first rule that
    excludes it, scores the legal set on each signal — full text, n-grams,
    vector similarity (exact cosine over the subject's packed vectors, read by one
    statement before it, less each claim's hubness), recency and authority — ranks each
    signal, fuses the ranks (reciprocal rank fusion, so a query returns the
    best legal claims up to `limit` even when they share no word with it) and
    returns the best candidates with their columns; a second loads the sources
    of the claims returned. No score ever reaches a claim outside the legal set.
    """
    as_of = q.as_of or timezone.now()
    query_grams = ngrams(q.query) if q.query.strip() else []
    mode = SEMANTIC_UNAVAILABLE
    params: dict[str, Any] = {
        "tenant": tenant.pk,
        "subjects": [subject.pk for subject in recall_subjects(q)],
        "scope": json.dumps(q.scope),
        "as_of": as_of,
        "cutoff": q.cutoff,
        "kinds": list(q.kinds),
        "query": q.query,
        "grams": query_grams,
        # Below the match threshold, shared n-grams are noise ("the", "her").
        "needed": max(1, math.ceil(len(query_grams) * MATCH_THRESHOLD)),
        "candidates": max(q.limit * 4, q.limit),
        "hidden": [str(claim_id) for claim_id in q.hidden],
        "made_stale": [str(claim_id) for claim_id in q.made_stale],
        "k": settings.RECALL_RRF_K,
        **{f"w_{name}": weight for name, weight in settings.RECALL_WEIGHTS.items()},
    }
    for claim_id, (text, value) in q.corrected.items():
        predicate = (
            Claim.objects.filter(tenant=tenant, pk=claim_id)
            .values_list("predicate", flat=True)
            .first()
            or ""
        )
        document = searchable_text(predicate=predicate, text=text, value=value)
        params.update(
            corrected=str(claim_id), corrected_document=document, corrected_grams=ngrams(document)
        )
    scored = _vector_scores(tenant=tenant, subject_ids=params["subjects"], query=q.query)
    if scored is not None:
        # Where the vectors are kept; the similarity itself is computed from the packed
        # copies either way (one read, and the hubness correction needs them here).
        mode = "pgvector" if pgvector_installed() else "sql"
        params["vector_ids"], params["vector_scores"] = scored
    rows = fetch_bound(_recall_sql(q=q, lexical=bool(query_grams), mode=mode), params)
    subjects_by_id = {subject.pk: subject for subject in recall_subjects(q)}

    reasons, claim_counts, matching = rows[0][0] or [], rows[0][1] or [], rows[0][2]
    counted_subjects = rows[0][3] or []
    counts: dict[str, int] = {}
    by_subject: dict[int, dict[str, int]] = {}
    for reason, n, subject_id in zip(reasons, claim_counts, counted_subjects, strict=True):
        counts[reason] = counts.get(reason, 0) + n
        by_subject.setdefault(subject_id, {})[reason] = n
    excluded = {reason: counts.get(reason, 0) for reason in EXCLUSION_REASONS}
    if q.hidden:
        excluded["hidden"] = counts.get("hidden", 0)
    legal_count = counts.get("legal", 0)
    if query_grams:
        excluded["no_match"] = legal_count - matching
    if not legal_count:
        mode = SEMANTIC_UNAVAILABLE

    candidates: list[_Candidate] = []
    for row in rows:
        score, recency, authority, authority_rank = row[4:8]
        fulltext, text_rank, ngram, gram_hits, vector, similarity, stale = row[8:15]
        if score is None:
            continue  # the counts' row of an empty legal set
        candidate = _Candidate(row[15:], fused=score, stale=stale, similar=similarity is not None)
        candidate.corrected = q.corrected.get(candidate.id) or q.corrected.get(str(candidate.id))
        if candidate.corrected is not None:
            candidate.text = candidate.corrected[0]
        placed = candidate.signals
        placed["recency"] = {"rank": recency}
        placed["authority"] = {"rank": authority, "score": authority_rank}
        if query_grams:
            if fulltext is not None:
                placed["fulltext"] = {"rank": fulltext, "score": round(float(text_rank), 4)}
            if ngram is not None:
                placed["ngram"] = {"rank": ngram, "score": round(gram_hits / len(query_grams), 4)}
            if vector is not None:
                placed["vector"] = {"rank": vector, "score": round(similarity, 4)}
        candidates.append(candidate)

    # Among claims on the same predicate, the more specific scope comes first.
    best_by_predicate: dict[str, float] = {}
    for candidate in candidates:
        best_by_predicate[candidate.predicate] = max(
            best_by_predicate.get(candidate.predicate, 0.0), candidate.fused
        )
    candidates.sort(
        key=lambda c: (-best_by_predicate[c.predicate], c.predicate, -c.scope_size, -c.fused)
    )

    # Only the claims returned are built as model instances; a cut candidate's trace entry
    # needs its id, subject and size.
    items: list[RecalledClaim] = []
    cut: list[CutCandidate] = []
    used = 0
    over_budget = 0
    for candidate in candidates:
        reason = None
        size = len(candidate.text)
        if len(items) >= q.limit:
            reason = CUT_BELOW_LIMIT
        elif q.budget_chars is not None and used + size > q.budget_chars:
            over_budget += 1
            reason = CUT_OVER_BUDGET
        if reason is not None:
            cut.append(
                CutCandidate(
                    claim_id=candidate.id,
                    subject_id=candidate.subject_id,
                    chars=size,
                    rank=round(candidate.fused, 4),
                    reason=reason,
                    signals=candidate.signals,
                )
            )
            continue
        used += size
        claim = _recalled_claim(candidate.values, subjects_by_id)
        if candidate.corrected is not None:
            claim.text, claim.value = candidate.corrected
        items.append(
            RecalledClaim(
                claim=claim,
                stale=bool(candidate.stale),
                rank=round(candidate.fused, 4),
                matched=matched_terms(q.query, f"{claim.predicate} {claim.text}")
                if q.query
                else [],
                scope_match=_scope_match(claim.scope, q.scope),
                signals=candidate.signals,
                semantic=mode if candidate.similar else SEMANTIC_UNAVAILABLE,
            )
        )
    sources = recalled_sources(tenant=tenant, claim_ids=[item.claim.id for item in items])
    for item in items:
        item.sources = sources.get(item.claim.id, [])
    conflicts = open_conflicts(tenant=tenant, claims=[item.claim for item in items])
    for item in items:
        item.conflict = conflicts.get(item.claim.id)
    if q.budget_chars is not None:
        excluded["over_budget"] = over_budget
    return RecallResult(
        items=items,
        excluded=excluded,
        used_chars=used,
        semantic=mode,
        legal=legal_count,
        cut=cut,
        excluded_by_subject={
            subject_id: {reason: per_reason.get(reason, 0) for reason in EXCLUSION_REASONS}
            for subject_id, per_reason in by_subject.items()
        },
        legal_by_subject={
            subject_id: per_reason.get("legal", 0) for subject_id, per_reason in by_subject.items()
        },
    )


CONFLICT_SUMMARY_CHARS = 200


def open_conflicts(*, tenant: Tenant, claims: Sequence[Claim]) -> dict[Any, dict[str, Any]]:
    """For each claim with an unresolved contradiction on its identity: the open review
    item that holds it (`id`, null when no person has been asked yet), the other side's
    claim id (`other`) and what the other side says (`other_side_summary`).

    No query unless a claim has a conflict; then two, whatever the number of claims.
    """
    contested = [claim for claim in claims if claim.conflicts_with]
    if not contested:
        return {}
    other_ids = {other for claim in contested for other in claim.conflicts_with}
    others = {
        other.id: other
        for other in Claim.objects.filter(tenant=tenant, pk__in=other_ids)
        .exclude(status=ClaimStatus.ERASED)
        .only("id", "predicate", "value", "text")
    }
    targets = {str(claim.id) for claim in contested} | {str(other) for other in other_ids}
    items = dict(
        ReviewItem.objects.filter(
            tenant=tenant,
            queue=Queue.CONFLICTS,
            target_type="claim",
            target_id__in=targets,
            status__in=[ItemStatus.OPEN, ItemStatus.CLAIMED],
        ).values_list("target_id", "id")
    )
    found: dict[Any, dict[str, Any]] = {}
    for claim in contested:
        other_id = next((o for o in claim.conflicts_with if o in others), None)
        if other_id is None:
            continue  # the other side was erased: nothing left to contradict it
        other = others[other_id]
        summary = other.text or f"{other.predicate}: {other.value}"
        item_id = items.get(str(other_id)) or items.get(str(claim.id))
        found[claim.id] = {
            "id": str(item_id) if item_id is not None else None,
            "other": str(other_id),
            "other_side_summary": summary[:CONFLICT_SUMMARY_CHARS],
        }
    return found


@dataclass(frozen=True)
class HotMemory:
    text: str
    etag: str
    claim_ids: tuple[str, ...]


def _hot_memory_version(*, tenant: Tenant, subject: Subject) -> str:
    # Derived from the claims themselves, so no missed invalidation can serve
    # an old block: any write to a claim of the subject moves updated_at. The
    # newest use report of the subject's blocks is part of it, since reports
    # decide demotion.
    row = Claim.objects.filter(tenant=tenant, subject=subject).aggregate(
        latest=Max("updated_at"), n=Count("id")
    )
    reported = RecallUse.objects.filter(
        tenant=tenant, trace__subject=subject, trace__kind=TraceKind.HOT_MEMORY
    ).aggregate(newest=Max("id"))["newest"]
    latest = row["latest"].isoformat() if row["latest"] else "-"
    return f"{latest}:{row['n']}:{reported or 0}"


def hot_memory_demoted(*, tenant: Tenant, subject: Subject) -> set[Any]:
    """Claims demoted out of the subject's hot memory: in the last `HOT_MEMORY_DEMOTE_DAYS`,
    handed to agents in at least `HOT_MEMORY_DEMOTE_AFTER_UNUSED` hot-memory blocks that
    they reported on, and never reported used there. Recall still finds them; a report
    of use (or fewer unused blocks in the window) brings them back. One statement."""
    needed = settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED
    if needed <= 0:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH reported AS (
                SELECT t.id, t.chosen FROM {_TRACE} t
                WHERE t.tenant_id = %(tenant)s AND t.subject_id = %(subject)s
                  AND t.kind = %(kind)s AND t.created_at >= %(since)s
                  AND EXISTS (SELECT 1 FROM {_USE} u WHERE u.tenant_id = t.tenant_id
                                                        AND u.trace_id = t.id)
            ), handed AS (
                SELECT r.id AS trace_id, c AS claim_id FROM reported r, unnest(r.chosen) AS c
            )
            SELECT h.claim_id FROM handed h
            GROUP BY h.claim_id
            HAVING count(*) >= %(needed)s AND NOT EXISTS (
                SELECT 1 FROM {_USE} u JOIN reported r ON r.id = u.trace_id
                WHERE u.tenant_id = %(tenant)s AND u.claim_id = h.claim_id)
            """,  # noqa: S608 - table names are constants; every value is a parameter
            {
                "tenant": tenant.pk,
                "subject": subject.pk,
                "kind": TraceKind.HOT_MEMORY,
                "since": timezone.now() - timedelta(days=settings.HOT_MEMORY_DEMOTE_DAYS),
                "needed": needed,
            },
        )
        return {row[0] for row in cursor.fetchall()}


def _render_hot_memory(
    *, tenant: Tenant, subject: Subject, budget_chars: int, scope: dict[str, str] | None
) -> HotMemory:
    now = timezone.now()
    current = Claim.objects.filter(
        Q(valid_from__isnull=True) | Q(valid_from__lte=now),
        Q(valid_to__isnull=True) | Q(valid_to__gt=now),
        Q(expires_at__isnull=True) | Q(expires_at__gt=now),
        Q(refresh_after__isnull=True) | Q(refresh_after__gt=now),
        tenant=tenant,
        subject=subject,
        status=ClaimStatus.ACTIVE,
    )
    if scope is not None:
        # Fail closed: only claims whose scope the asked-for scope contains (global
        # claims always); of those on one predicate, only the most specific — a
        # project's own setting replaces the global one instead of standing beside it.
        current = Claim.objects.filter(
            pk__in=current.filter(scope__contained_by=scope)
            .order_by("predicate", "-scope_size", "-recorded_at")
            .distinct("predicate")
            .values("id")
        )
    demoted = hot_memory_demoted(tenant=tenant, subject=subject) if scope is not None else set()
    claims = (
        current.exclude(pk__in=demoted)
        .annotate(authority_rank=AUTHORITY_RANK_SQL)
        .order_by("-authority_rank", "-use_count", "-recorded_at")
        .only("id", "predicate", "text", "value", "scope")[:200]
    )
    header = f"Memory about {subject.key}:"
    lines: list[str] = []
    ids: list[str] = []
    used = len(header)
    for claim in claims:
        statement = claim.text or f"{claim.predicate}: {claim.value}"
        label = ", ".join(f"{k}={v}" for k, v in sorted(claim.scope.items()))
        line = f"- {statement}" + (f" [{label}]" if label else "")
        if used + 1 + len(line) > budget_chars:
            continue
        used += 1 + len(line)
        lines.append(line)
        ids.append(str(claim.id))
    text = "\n".join([header, *lines]) if lines and len(header) <= budget_chars else ""
    etag = hashlib.sha256(text.encode()).hexdigest()[:32]
    return HotMemory(text=text, etag=etag, claim_ids=tuple(ids))


def hot_memory_cache_prefix(*, tenant_id: int, subject_id: int) -> str:
    """Every cached block of a subject starts with this, so erasure can purge them all."""
    return f"hot-memory:{tenant_id}:{subject_id}:"


EVERY_SCOPE = None


def hot_memory(
    *,
    tenant: Tenant,
    subject: Subject,
    budget_chars: int,
    scope: dict[str, str] | None = EVERY_SCOPE,
) -> HotMemory:
    """The subject's block for `scope` (`{}`: global claims only). `EVERY_SCOPE` mixes
    every scope's claims: what the deletion probes and consolidation's rebuild read,
    never what an agent is handed."""
    version = _hot_memory_version(tenant=tenant, subject=subject)
    prefix = hot_memory_cache_prefix(tenant_id=tenant.pk, subject_id=subject.pk)
    scope_digest = hashlib.sha256(json.dumps(scope, sort_keys=True).encode()).hexdigest()[:16]
    # json.dumps(None) is "null": the every-scope block never shares a key with a scope's.
    demotion = f"{settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED}-{settings.HOT_MEMORY_DEMOTE_DAYS}"
    key = f"{prefix}{budget_chars}:{scope_digest}:{demotion}:{version}"
    cached = cache.get(key)
    if cached is not None:
        return HotMemory(**cached)
    block = _render_hot_memory(
        tenant=tenant, subject=subject, budget_chars=budget_chars, scope=scope
    )
    cache.set(key, {"text": block.text, "etag": block.etag, "claim_ids": block.claim_ids}, 3600)
    return block
