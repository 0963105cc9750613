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
from common.hidden_chars import for_agent
from common.rows import RowReader, fetch_bound
from common.screen.injection import judge_injection, judge_injection_many
from common.screen.learned import PASS, Bands
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
from memory.selectors.screening import screen_bands
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

# The subject's active claims' packed vectors of one model: the only claims that can be
# legal, so every legal claim with a vector gets its exact similarity; the others are
# the neighbours its hubness is measured against.
_PACKED_VECTORS = f"""
    SELECT e.claim_id, e.packed FROM {_CLAIM} c
    JOIN {_EMBEDDING} e ON e.claim_id = c.id AND e.tenant_id = c.tenant_id
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


# The query is embedded on a helper thread while the request's thread runs the ranking
# statement: the model's run releases the GIL, so the statement costs a recall little
# time of its own. A few threads, so that concurrent requests of a threaded server do
# not queue for one.
_EMBEDDING_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-embed")


def query_vector_future(query: str) -> Future[tuple[str, Sequence[float] | None]]:
    """The query's vector and its model (none when semantic recall is off or the embedder
    failed), computed on a recall thread while the caller reads its rows."""
    return _EMBEDDING_THREADS.submit(_query_vector, query)


def _ranking_sql(*, q: RecallQuery, lexical: bool, vectors: bool) -> str:
    """The legal set and its lexical signals in one statement: every claim of the subject
    counted by the first rule that excludes it (or `legal`), each legal claim's full-text,
    n-gram, recency and authority signals and their ranks, and (with `vectors`) the packed
    vector of every active claim. The counts are on every row, and on the one row an
    empty subject answers. What needs the query's vector (its similarity, its rank, the
    fused score) is computed from these rows (`_fused_candidates`), so this statement runs
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
    inactive = f"CASE {hidden[0]} ELSE 'inactive' END" if hidden else "'inactive'"
    if lexical:
        # float8: the rank as the float4 it is, so the trace rounds what was ranked.
        text = (
            "ts_rank(s.search_vector, plainto_tsquery('english'::regconfig, %(query)s))::float8 "
            "AS text_rank, "
            "(s.search_vector @@ plainto_tsquery('english'::regconfig, %(query)s)) AS text_hit, "
            # The distinct n-grams the claim shares with the query.
            "(SELECT count(DISTINCT g) FROM unnest(s.ngrams) AS g "
            "WHERE g = ANY(%(grams)s::varchar[]))::int AS gram_hits"
        )
    else:
        text = "NULL::float8 AS text_rank, NULL::boolean AS text_hit, 0 AS gram_hits"
    signals = (
        "r.recency_rank, r.authority_pos, r.authority_rank, r.fulltext_rank, r.text_rank, "
        "r.ngram_rank, r.gram_hits, r.scope_size, r.recorded_at, r.subject_id, r.predicate, "
        "r.chars, r.stale"
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
        FROM {_CLAIM} c
        WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s)
          AND c.status = 'active' {kinds}
    ), history AS (
        -- A subject's superseded, rejected and pending claims only count: an index
        -- range counted, not rows read and judged, however long the history.
        SELECT c.subject_id, {inactive} AS exclusion, count(*) AS n
        FROM {_CLAIM} c
        WHERE c.tenant_id = %(tenant)s AND c.subject_id = ANY(%(subjects)s)
          AND c.status NOT IN ('active', 'erased') {kinds}
        GROUP BY 1, 2
    ), legal AS (
        SELECT s.id, s.scope_size, s.recorded_at, s.subject_id, s.predicate, s.chars, s.stale,
               CASE s.authority {_AUTHORITY_RANK} ELSE 0 END AS authority_rank, {text}
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
class _Ranked:
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
    similarity: float | None = None
    vector_rank: int | None = None
    fused: float = 0.0
    # What a correction being replayed says instead: (text, value).
    corrected: tuple[str, Any] | None = None
    signals: dict[str, dict[str, float]] = field(default_factory=dict)


def _rank_desc(values: list[float]) -> dict[float, int]:
    """SQL's rank() over `values` in descending order: one plus how many are greater."""
    ranks: dict[float, int] = {}
    for position, value in enumerate(sorted(values, reverse=True), start=1):
        ranks.setdefault(value, position)
    return ranks


def _fused_candidates(legal: list[_Ranked], *, lexical: bool, limit: int) -> list[_Ranked]:
    """The best `limit` legal claims by their fused score, each with its vector rank.

    Reciprocal rank fusion, summed in the order the signals are listed in `why.signals`
    (recency, authority, fulltext, ngram, vector); a signal that did not place the claim
    adds an exact 0. Without a query there is nothing to match: authority and scope
    specificity decide. Ties go to the more specific scope, then the newer claim, then
    the claim id, as an ORDER BY in PostgreSQL would break them (UUIDs compare alike).
    """
    vector_ranks = _rank_desc([r.similarity for r in legal if r.similarity is not None])
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
_ID_POSITION = [f.attname for f in _RECALLED.fields].index("id")


def _recalled_claim(values: Sequence[Any], subjects: dict[int, Subject]) -> Claim:
    claim = _RECALLED.build(values)
    # Only the asked-for subjects' claims reach here; without one, no row does.
    claim.subject = subjects[claim.subject_id]
    return claim


_SOURCE = RowReader(ClaimSource, alias="s")
# The returned claims' columns and their sources (a row per source, oldest first; one
# with none for a claim without), in one statement by primary key.
_RETURNED_CLAIMS = f"""
    SELECT {_RECALLED.columns}, {_SOURCE.columns}
    FROM {_CLAIM} c
    LEFT JOIN {ClaimSource._meta.db_table} s ON s.claim_id = c.id AND s.tenant_id = c.tenant_id
    WHERE c.tenant_id = %(tenant)s AND c.id = ANY(%(returned)s::uuid[])
    ORDER BY s.id
"""  # noqa: S608 - table names are constants; every value is a parameter


def _returned_claims(
    params: dict[str, Any], claim_ids: list[Any], subjects: dict[int, Subject]
) -> dict[Any, tuple[Claim, list[ClaimSource]]]:
    """The claims a recall returns, built as the ORM would, with their sources, by id."""
    found: dict[Any, tuple[Claim, list[ClaimSource]]] = {}
    if not claim_ids:
        return found
    for row in fetch_bound(_RETURNED_CLAIMS, {**params, "returned": claim_ids}):
        claim_id = row[_ID_POSITION]
        if claim_id not in found:
            found[claim_id] = (_recalled_claim(row, subjects), [])
        if row[_RECALLED.width] is not None:
            found[claim_id][1].append(_SOURCE.build(row, _RECALLED.width))
    return found


def recall_subjects(q: RecallQuery) -> list[Subject]:
    """The subjects a recall reads: every one named, or its one subject."""
    if q.subjects:
        return list(q.subjects)
    return [q.subject] if q.subject is not None else []


def claims_recall(*, tenant: Tenant, q: RecallQuery) -> RecallResult:
    """The legal set first (tenant, subject, scope, status, time), then ranking inside it.

    Two statements. While the query is embedded on a helper thread, the first counts
    every claim of the subject by the first rule that excludes it, scores and ranks the
    legal set on full text, n-grams, recency and authority, and reads the packed vectors
    of the subject's active claims. Here the query's vector gives each legal claim its
    exact cosine similarity (less its hubness) and its rank, the ranks are fused
    (reciprocal rank fusion, so a query returns the best legal claims up to `limit` even
    when they share no word with it) and the candidates ordered and cut; the second
    statement reads the returned claims and their sources. No score ever reaches a claim
    outside the legal set.
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
        "hidden": [str(claim_id) for claim_id in q.hidden],
        "made_stale": [str(claim_id) for claim_id in q.made_stale],
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
    model = embedder()
    embedding = None
    if model is not None and q.query.strip():
        params["model"] = model.model
        # Embedded while the ranking statement runs (see `_EMBEDDING_THREADS`).
        embedding = query_vector_future(q.query)
    lexical = bool(query_grams)
    rows = fetch_bound(
        _ranking_sql(q=q, lexical=lexical, vectors=embedding is not None), params, binary=True
    )
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

    legal = [_Ranked(*row[4:18]) for row in rows if row[5] is not None]
    if embedding is not None:
        model_name, query_vector = embedding.result()
        if query_vector is not None and model_name == params["model"]:
            # Where the vectors are kept; the similarity itself is computed from the packed
            # copies either way (one read, and the hubness correction needs them here).
            mode = "pgvector" if pgvector_installed() else "sql"
            packed = [row for row in rows if row[18] is not None]
            matrix = np.frombuffer(b"".join(row[18] for row in packed), dtype=PACKED_DTYPE)
            similarities = _similarities(
                matrix.reshape(len(packed), -1) if packed else matrix.reshape(0, 0),
                query_vector,
            )
            by_id = dict(zip((row[4] for row in packed), similarities, strict=False))
            corrected = {str(claim_id) for claim_id in q.corrected}
            for r in legal:
                if str(r.id) not in corrected:
                    r.similarity = by_id.get(r.id)
    if not legal_count:
        mode = SEMANTIC_UNAVAILABLE
    ranked = _fused_candidates(legal, lexical=lexical, limit=max(q.limit * 4, q.limit))
    for r in ranked:
        r.corrected = q.corrected.get(r.id) or q.corrected.get(str(r.id))
        if r.corrected is not None:
            r.chars = len(r.corrected[0])
        placed = r.signals
        placed["recency"] = {"rank": r.recency_rank}
        placed["authority"] = {"rank": r.authority_pos, "score": r.authority_rank}
        if query_grams:
            if r.fulltext_rank is not None and r.text_rank is not None:
                placed["fulltext"] = {"rank": r.fulltext_rank, "score": round(r.text_rank, 4)}
            if r.ngram_rank is not None:
                placed["ngram"] = {
                    "rank": r.ngram_rank,
                    "score": round(r.gram_hits / len(query_grams), 4),
                }
            if r.vector_rank is not None and r.similarity is not None:
                placed["vector"] = {"rank": r.vector_rank, "score": round(r.similarity, 4)}

    # Among claims on the same predicate, the more specific scope comes first.
    best_by_predicate: dict[str, float] = {}
    for r in ranked:
        best_by_predicate[r.predicate] = max(best_by_predicate.get(r.predicate, 0.0), r.fused)
    ranked.sort(
        key=lambda r: (-best_by_predicate[r.predicate], r.predicate, -r.scope_size, -r.fused)
    )

    # Only the claims returned are read and built as model instances; a cut candidate's
    # trace entry needs its id, subject and size.
    returned: list[_Ranked] = []
    cut: list[CutCandidate] = []
    used = 0
    over_budget = 0
    for r in ranked:
        reason = None
        if len(returned) >= q.limit:
            reason = CUT_BELOW_LIMIT
        elif q.budget_chars is not None and used + r.chars > q.budget_chars:
            over_budget += 1
            reason = CUT_OVER_BUDGET
        if reason is not None:
            cut.append(
                CutCandidate(
                    claim_id=r.id,
                    subject_id=r.subject_id,
                    chars=r.chars,
                    rank=round(r.fused, 4),
                    reason=reason,
                    signals=r.signals,
                )
            )
            continue
        used += r.chars
        returned.append(r)
    claims = _returned_claims(params, [r.id for r in returned], subjects_by_id)
    items: list[RecalledClaim] = []
    for r in returned:
        claim, sources = claims[r.id]
        if r.corrected is not None:
            claim.text, claim.value = r.corrected
        items.append(
            RecalledClaim(
                claim=claim,
                stale=bool(r.stale),
                rank=round(r.fused, 4),
                matched=matched_terms(q.query, f"{claim.predicate} {claim.text}")
                if q.query
                else [],
                scope_match=_scope_match(claim.scope, q.scope),
                signals=r.signals,
                semantic=mode if r.similarity is not None else SEMANTIC_UNAVAILABLE,
                sources=sources,
            )
        )
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
    # The block is handed to an agent as it is: no hidden characters (`for_agent`).
    header = for_agent(f"Memory about {subject.key}:")
    lines: list[str] = []
    ids: list[str] = []
    used = len(header)
    for claim in claims:
        statement = claim.text or f"{claim.predicate}: {claim.value}"
        label = ", ".join(f"{k}={v}" for k, v in sorted(claim.scope.items()))
        line = for_agent(f"- {statement}" + (f" [{label}]" if label else ""))
        if used + 1 + len(line) > budget_chars:
            continue
        used += 1 + len(line)
        lines.append(line)
        ids.append(str(claim.id))
    lines, ids = _without_orders(header, lines, ids, bands=screen_bands(tenant=tenant))
    text = "\n".join([header, *lines]) if lines and len(header) <= budget_chars else ""
    etag = hashlib.sha256(text.encode()).hexdigest()[:32]
    return HotMemory(text=text, etag=etag, claim_ids=tuple(ids))


def _reads_as_order(header: str, lines: list[str], bands: Bands | None) -> bool:
    return judge_injection(["\n".join([header, *lines])], bands=bands).is_injection


def _without_orders(
    header: str, lines: list[str], ids: list[str], *, bands: Bands | None
) -> tuple[list[str], list[str]]:
    """The block's lines, judged as the agent will read them: together.

    Each claim passed the screen alone; read one after another, lines can still
    complete an order none of them is. Then the lines the screen doubts on their
    own are left out, and, while the block still reads as an order, the last line.
    """
    if not lines or not _reads_as_order(header, lines, bands):
        return lines, ids
    doubted = judge_injection_many([[line] for line in lines], bands=bands)
    kept = [(line, i) for line, i, r in zip(lines, ids, doubted, strict=True) if r.band == PASS]
    while (
        kept
        and judge_injection(
            ["\n".join([header, *(ln for ln, _ in kept)])], bands=bands
        ).is_injection
    ):
        kept.pop()
    return [line for line, _ in kept], [i for _, i in kept]


def hot_memory_cache_prefix(*, tenant_id: int, subject_id: int) -> str:
    """Every cached block of a subject starts with this, so erasure can purge them all."""
    return f"hot-memory:{tenant_id}:{subject_id}:"


EVERY_SCOPE = None
# Part of each block's cache key: a block cached before hidden characters were
# removed from the text (`for_agent`) is never served again.
_BLOCK_FORMAT = "visible"


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
    key = f"{prefix}{budget_chars}:{scope_digest}:{demotion}:{_BLOCK_FORMAT}:{version}"
    cached = cache.get(key)
    if cached is not None:
        return HotMemory(**cached)
    block = _render_hot_memory(
        tenant=tenant, subject=subject, budget_chars=budget_chars, scope=scope
    )
    cache.set(key, {"text": block.text, "etag": block.etag, "claim_ids": block.claim_ids}, 3600)
    return block
