"""Session search over the ledger: which runs mention something, a run's events in order,
and the recent runs of a subject.

A *run* is the events of the asked-for subjects that share a `run_id`; events
recorded without one form one run per subject. Searching happens inside the
same kind of legal set as recall: the tenant, the subjects the caller named
(each one the token may read), events recorded by the `cutoff`, never a
redacted event. Matching is full text (PostgreSQL's English parser) beside the
character n-grams recall uses, so Chinese text and identifiers are found
without a word parser; the text is read as it stands, so an erased or scrubbed
word is never found. Meaning is the third signal: an embedding worker gives each
event with text a vector a moment after it is written, and discovery compares
the query's vector with those of the legal set's most recent events (exact
similarity, computed here from the packed vectors), so a paraphrase finds the
session that said it in other words. A redacted or scrubbed event's vector is
deleted with its words (a trigger on the ledger), never compared.

Discovery answers each matching run with its *bookend window*: the run's first
three events, the window around each of its best hits, and its last three, so
a reader sees how the session began, what matched and how it ended.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection

from accounts.models import Tenant
from common.rows import fetch_bound
from memory.claims.embedders import PACKED_DTYPE, embedder
from memory.claims.models import Event, EventEmbedding, Subject
from memory.claims.search import MATCH_THRESHOLD, matched_terms, ngrams, normalise
from memory.claims.selectors.claims import SEMANTIC_UNAVAILABLE
from memory.claims.selectors.recall_ranking import query_vector_future

_EVENT = Event._meta.db_table
_EMBEDDING = EventEmbedding._meta.db_table
_SUBJECT = Subject._meta.db_table

BOOKEND = 3  # events shown at each end of a run
HITS_PER_RUN = 3  # the best hits of a run shown with their windows
SNIPPET_CHARS = 160
EVENT_TEXT_CHARS = 2000  # an event's text in a window or a page, at most

# Events grouped into runs: a run id, or (without one) the subject alone.
_RUN_KEY = "(CASE WHEN e.run_id = '' THEN 's' || e.subject_id::text ELSE 'r' || e.run_id END)"


@dataclass(frozen=True)
class LedgerScope:
    """The legal set of a ledger search."""

    tenant: Tenant
    subjects: list[Subject]
    cutoff: datetime | None = None
    agent: str = ""


@dataclass
class LedgerEvent:
    id: str
    subject: str
    run_id: str | None
    position: int  # 1-based place in its run
    kind: str
    agent: str
    text: str
    observed_at: datetime
    recorded_at: datetime
    roles: list[str] = field(default_factory=list)  # first, hit, around, last
    # Events of the run skipped between the previous event shown and this one.
    skipped_before: int = 0
    # A hit's signals: which of fulltext, ngram, vector matched it.
    signals: list[str] = field(default_factory=list)


@dataclass
class RunHit:
    run_id: str | None
    subjects: list[str]
    agents: list[str]
    events: int
    hits: int
    score: float
    first_at: datetime
    last_at: datetime
    snippet: str
    matched: list[str]
    window: list[LedgerEvent]
    # The signals that matched its hits shown (fulltext, ngram, vector), in that order.
    signals: list[str] = field(default_factory=list)


@dataclass
class LedgerDiscovery:
    runs: list[RunHit]
    # `exact` when the query's meaning was compared with the events' vectors, else
    # `unavailable` (semantic search off, or the embedder failed): lexical only.
    semantic: str


def _legal_where(scope: LedgerScope) -> tuple[str, dict[str, Any]]:
    where = [
        "e.tenant_id = %(tenant)s",
        "e.subject_id = ANY(%(subjects)s)",
        "e.redacted_at IS NULL",
    ]
    params: dict[str, Any] = {
        "tenant": scope.tenant.pk,
        "subjects": [subject.pk for subject in scope.subjects],
    }
    if scope.cutoff is not None:
        where.append("e.recorded_at <= %(cutoff)s")
        params["cutoff"] = scope.cutoff
    if scope.agent:
        where.append("e.agent = %(agent)s")
        params["agent"] = scope.agent
    return " AND ".join(where), params


def _event_columns(alias: str) -> str:
    return (
        f"{alias}.id, s.kind || ':' || s.ref, NULLIF({alias}.run_id, ''), {alias}.kind, "
        f"{alias}.agent, left({alias}.text, {EVENT_TEXT_CHARS}), {alias}.observed_at, "
        f"{alias}.recorded_at"
    )


def _ledger_event(row: tuple[Any, ...], position: int) -> LedgerEvent:
    return LedgerEvent(
        id=str(row[0]),
        subject=row[1],
        run_id=row[2],
        kind=row[3],
        agent=row[4],
        text=row[5],
        observed_at=row[6],
        recorded_at=row[7],
        position=position,
    )


def _snippet(text: str, query: str) -> str:
    """The part of `text` around the first query word or n-gram it holds."""
    lowered = normalise(text)
    starts = [lowered.find(word) for word in matched_terms(query, text)]
    starts += [lowered.find(gram) for gram in ngrams(query)]
    found = [start for start in starts if start >= 0]
    start = max(0, min(found) - SNIPPET_CHARS // 3) if found else 0
    piece = text[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(text) else "")


SIGNALS = ("fulltext", "ngram", "vector")


def _similar_events(
    *, legal: str, params: dict[str, Any], query: str
) -> tuple[list[Any], list[float]] | None:
    """The legal set's events whose meaning is close to the query's: at most
    `LEDGER_SEMANTIC_HITS` of the `LEDGER_SEMANTIC_EVENTS` most recent events with a
    vector, each at least `LEDGER_SEMANTIC_MIN_SIMILARITY` alike, and their similarity;
    None when the query has no vector. The query is embedded while the vectors are read."""
    model = embedder()
    if model is None:
        return None
    embedding = query_vector_future(query)
    rows = fetch_bound(
        f"""SELECT e.id, v.packed FROM {_EVENT} e
        JOIN {_EMBEDDING} v ON v.event_id = e.id AND v.tenant_id = e.tenant_id
        WHERE {legal} AND v.model = %(model)s
        ORDER BY e.recorded_at DESC LIMIT %(recent)s""",  # noqa: S608 - constant table names
        {**params, "model": model.model, "recent": settings.LEDGER_SEMANTIC_EVENTS},
        binary=True,
    )
    model_name, query_vector = embedding.result()
    if query_vector is None or model_name != model.model:
        return None
    vector = np.asarray(query_vector, dtype=np.float32)
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=PACKED_DTYPE)
    if not rows or matrix.size != len(rows) * vector.shape[0]:
        return [], []  # nothing embedded yet, or vectors of another dimension
    similarities = matrix.reshape(len(rows), -1) @ vector
    best = np.argsort(-similarities, kind="stable")[: settings.LEDGER_SEMANTIC_HITS]
    best = best[similarities[best] >= settings.LEDGER_SEMANTIC_MIN_SIMILARITY]
    return [rows[i][0] for i in best], [float(similarities[i]) for i in best]


def ledger_discover(
    *, scope: LedgerScope, query: str, limit: int = 10, window: int = 2
) -> LedgerDiscovery:
    """The runs that mention `query` or mean it, best first, each with its bookend window.

    An event matches when the full-text query matches it, it holds enough of the query's
    n-grams, or its meaning is close to the query's (`_similar_events`); its score is its
    full-text rank plus the share of n-grams it holds plus its similarity. A run scores
    its best event plus a little for each further hit. One statement after the vectors'.
    """
    grams = ngrams(query)
    if not grams or not scope.subjects:
        return LedgerDiscovery(runs=[], semantic=SEMANTIC_UNAVAILABLE)
    legal, params = _legal_where(scope)
    similar = _similar_events(legal=legal, params=params, query=query)
    semantic = SEMANTIC_UNAVAILABLE if similar is None else "exact"
    similar_ids, similarities = similar or ([], [])
    params.update(
        {
            "similar_ids": similar_ids,
            "similarities": similarities,
            "query": query,
            "grams": grams,
            "gram_count": len(grams),
            "needed": max(1, math.ceil(len(grams) * MATCH_THRESHOLD)),
            "limit": limit,
            "window": window,
            "hits_per_run": HITS_PER_RUN,
            "bookend": BOOKEND,
        }
    )
    sql = f"""
    WITH numbered AS (
        SELECT e.id, e.subject_id, e.run_id, e.kind, e.agent, e.text, e.observed_at,
               e.recorded_at, {_RUN_KEY} AS run_key,
               row_number() OVER (PARTITION BY {_RUN_KEY}
                                  ORDER BY e.observed_at, e.recorded_at, e.id) AS position,
               count(*) OVER (PARTITION BY {_RUN_KEY}) AS total
        FROM {_EVENT} e WHERE {legal}
    ), meaning AS (
        SELECT * FROM unnest(%(similar_ids)s::uuid[], %(similarities)s::float8[])
            AS m(id, similarity)
    ), asked AS (
        SELECT plainto_tsquery('english'::regconfig, %(query)s) AS tsquery
    ), scored AS MATERIALIZED (
        -- Each event's text is turned into a vector and folded once, and each signal
        -- computed once: `hits` reads them three times (its filter, score and signals).
        SELECT n.id, n.run_key, n.position, n.observed_at, m.similarity,
               t.document @@ a.tsquery AS text_hit,
               ts_rank(t.document, a.tsquery) AS text_rank,
               (SELECT count(*) FROM unnest(%(grams)s::text[]) AS g
                WHERE strpos(t.folded, g) > 0) AS gram_hits
        FROM numbered n
        CROSS JOIN asked a
        CROSS JOIN LATERAL (
            SELECT to_tsvector('english'::regconfig, n.text) AS document,
                   lower(normalize(n.text, NFKC)) AS folded
            OFFSET 0  -- kept a subquery: folded into the query, each use recomputes it
        ) t
        LEFT JOIN meaning m ON m.id = n.id
        WHERE n.text <> ''
    ), hits AS (
        SELECT s.*, (CASE WHEN s.text_hit THEN s.text_rank ELSE 0 END
                     + s.gram_hits::float8 / %(gram_count)s
                     + COALESCE(s.similarity, 0)) AS score,
               array_remove(ARRAY[CASE WHEN s.text_hit THEN 'fulltext' END,
                                  CASE WHEN s.gram_hits >= %(needed)s THEN 'ngram' END,
                                  CASE WHEN s.similarity IS NOT NULL THEN 'vector' END],
                            NULL) AS signals
        FROM scored s
        WHERE s.text_hit OR s.gram_hits >= %(needed)s OR s.similarity IS NOT NULL
    ), runs AS (
        SELECT h.run_key, max(h.score) + 0.05 * least(count(*) - 1, 10) AS score,
               count(*) AS hits, max(h.observed_at) AS last_hit
        FROM hits h GROUP BY h.run_key
        ORDER BY score DESC, last_hit DESC, h.run_key LIMIT %(limit)s
    ), shown AS (
        SELECT h.id, h.run_key, h.position, h.signals FROM (
            SELECT h.*, row_number() OVER (PARTITION BY h.run_key
                                           ORDER BY h.score DESC, h.position) AS hit_rank
            FROM hits h JOIN runs r ON r.run_key = h.run_key
        ) h WHERE h.hit_rank <= %(hits_per_run)s
    )
    SELECT n.run_key, r.score, r.hits, n.total, n.position,
           (SELECT x.signals FROM shown x WHERE x.id = n.id) AS hit_signals,
           {_event_columns("n")}
    FROM numbered n
    JOIN runs r ON r.run_key = n.run_key
    JOIN {_SUBJECT} s ON s.id = n.subject_id
    WHERE n.position <= %(bookend)s OR n.position > n.total - %(bookend)s
       OR EXISTS (SELECT 1 FROM shown x WHERE x.run_key = n.run_key
                  AND abs(x.position - n.position) <= %(window)s)
    ORDER BY r.score DESC, r.last_hit DESC, r.run_key, n.position
    """  # noqa: S608 - table names are constants; every value is a parameter
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    runs: list[RunHit] = []
    current_key = None
    for run_key, score, hits, total, position, hit_signals, *columns in rows:
        event = _ledger_event(tuple(columns), position)
        if run_key != current_key:
            current_key = run_key
            runs.append(
                RunHit(
                    run_id=event.run_id,
                    subjects=[],
                    agents=[],
                    events=total,
                    hits=hits,
                    score=round(float(score), 4),
                    first_at=event.observed_at,
                    last_at=event.observed_at,
                    snippet="",
                    matched=[],
                    window=[],
                )
            )
        run = runs[-1]
        previous = run.window[-1].position if run.window else 0
        event.skipped_before = position - previous - 1
        if position <= BOOKEND:
            event.roles.append("first")
        if hit_signals is not None:
            event.roles.append("hit")
            event.signals = list(hit_signals)
            run.signals = [name for name in SIGNALS if name in run.signals or name in hit_signals]
            if not run.snippet:
                run.snippet = _snippet(event.text, query)
                run.matched = matched_terms(query, event.text)
        elif position > BOOKEND and position <= total - BOOKEND:
            event.roles.append("around")
        if position > total - BOOKEND:
            event.roles.append("last")
        run.window.append(event)
        run.last_at = event.observed_at if position == total else run.last_at
        if event.subject not in run.subjects:
            run.subjects.append(event.subject)
        if event.agent and event.agent not in run.agents:
            run.agents.append(event.agent)
    return LedgerDiscovery(runs=runs, semantic=semantic)


def ledger_scroll(
    *, scope: LedgerScope, run_id: str, after: int = 0, limit: int = 50
) -> tuple[list[LedgerEvent], bool]:
    """A run's events in order from position `after` (exclusive); and whether more follow."""
    legal, params = _legal_where(scope)
    params.update({"run_id": run_id, "after": after, "limit": limit + 1})
    sql = f"""
    WITH numbered AS (
        SELECT e.*, row_number() OVER (ORDER BY e.observed_at, e.recorded_at, e.id) AS position
        FROM {_EVENT} e WHERE {legal} AND e.run_id = %(run_id)s
    )
    SELECT n.position, {_event_columns("n")}
    FROM numbered n JOIN {_SUBJECT} s ON s.id = n.subject_id
    WHERE n.position > %(after)s ORDER BY n.position LIMIT %(limit)s
    """  # noqa: S608 - table names are constants; every value is a parameter
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    events = [_ledger_event(tuple(row[1:]), row[0]) for row in rows[:limit]]
    return events, len(rows) > limit


@dataclass
class RunSummary:
    run_id: str | None
    subjects: list[str]
    agents: list[str]
    events: int
    first_at: datetime
    last_at: datetime
    first_text: str


def ledger_browse(*, scope: LedgerScope, limit: int = 20) -> list[RunSummary]:
    """The most recently active runs of the subjects (of one agent, if asked). One statement."""
    legal, params = _legal_where(scope)
    params["limit"] = limit
    sql = f"""
    SELECT NULLIF(min(e.run_id), ''), array_agg(DISTINCT s.kind || ':' || s.ref),
           array_remove(array_agg(DISTINCT e.agent), ''), count(*),
           min(e.observed_at), max(e.observed_at),
           left((array_agg(e.text ORDER BY e.observed_at, e.recorded_at, e.id))[1],
                {SNIPPET_CHARS})
    FROM {_EVENT} e JOIN {_SUBJECT} s ON s.id = e.subject_id
    WHERE {legal}
    GROUP BY {_RUN_KEY}
    ORDER BY max(e.observed_at) DESC, {_RUN_KEY} LIMIT %(limit)s
    """  # noqa: S608 - table names are constants; every value is a parameter
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        RunSummary(
            run_id=row[0],
            subjects=sorted(row[1]),
            agents=sorted(row[2]),
            events=row[3],
            first_at=row[4],
            last_at=row[5],
            first_text=row[6] or "",
        )
        for row in rows
    ]
