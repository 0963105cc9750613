"""Session search over the ledger: which runs mention something, a run's events in order,
and the recent runs of a subject.

A *run* is the events of the asked-for subjects that share a `run_id`; events
recorded without one form one run per subject. Searching happens inside the
same kind of legal set as recall: the tenant, the subjects the caller named
(each one the token may read), events recorded by the `cutoff`, never a
redacted event. Matching is full text (PostgreSQL's English parser) beside the
character n-grams recall uses, so Chinese text and identifiers are found
without a word parser; the text is read as it stands, so an erased or scrubbed
word is never found. Events carry no vectors: meaning is not a signal here.

Discovery answers each matching run with its *bookend window*: the run's first
three events, the window around each of its best hits, and its last three, so
a reader sees how the session began, what matched and how it ended.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from accounts.models import Tenant
from memory.models import Event, Subject
from memory.search import MATCH_THRESHOLD, matched_terms, ngrams, normalise

_EVENT = Event._meta.db_table
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


def ledger_discover(
    *, scope: LedgerScope, query: str, limit: int = 10, window: int = 2
) -> list[RunHit]:
    """The runs that mention `query`, best first, each with its bookend window. One statement.

    An event matches when the full-text query matches it or it holds enough of the
    query's n-grams; its score is its full-text rank plus the share of n-grams it holds.
    A run scores its best event plus a little for each further hit.
    """
    grams = ngrams(query)
    if not grams or not scope.subjects:
        return []
    legal, params = _legal_where(scope)
    params.update(
        {
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
        SELECT e.*, {_RUN_KEY} AS run_key,
               row_number() OVER (PARTITION BY {_RUN_KEY}
                                  ORDER BY e.observed_at, e.recorded_at, e.id) AS position,
               count(*) OVER (PARTITION BY {_RUN_KEY}) AS total
        FROM {_EVENT} e WHERE {legal}
    ), scored AS (
        SELECT n.id, n.run_key, n.position, n.observed_at,
               to_tsvector('english'::regconfig, n.text)
                   @@ plainto_tsquery('english'::regconfig, %(query)s) AS text_hit,
               ts_rank(to_tsvector('english'::regconfig, n.text),
                       plainto_tsquery('english'::regconfig, %(query)s)) AS text_rank,
               (SELECT count(*) FROM unnest(%(grams)s::text[]) AS g
                WHERE strpos(lower(normalize(n.text, NFKC)), g) > 0) AS gram_hits
        FROM numbered n WHERE n.text <> ''
    ), hits AS (
        SELECT s.*, (CASE WHEN s.text_hit THEN s.text_rank ELSE 0 END
                     + s.gram_hits::float8 / %(gram_count)s) AS score
        FROM scored s WHERE s.text_hit OR s.gram_hits >= %(needed)s
    ), runs AS (
        SELECT h.run_key, max(h.score) + 0.05 * least(count(*) - 1, 10) AS score,
               count(*) AS hits, max(h.observed_at) AS last_hit
        FROM hits h GROUP BY h.run_key
        ORDER BY score DESC, last_hit DESC, h.run_key LIMIT %(limit)s
    ), shown AS (
        SELECT h.id, h.run_key, h.position FROM (
            SELECT h.*, row_number() OVER (PARTITION BY h.run_key
                                           ORDER BY h.score DESC, h.position) AS hit_rank
            FROM hits h JOIN runs r ON r.run_key = h.run_key
        ) h WHERE h.hit_rank <= %(hits_per_run)s
    )
    SELECT n.run_key, r.score, r.hits, n.total, n.position,
           EXISTS (SELECT 1 FROM shown x WHERE x.id = n.id) AS is_hit,
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
    for run_key, score, hits, total, position, is_hit, *columns in rows:
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
        if is_hit:
            event.roles.append("hit")
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
    return runs


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
