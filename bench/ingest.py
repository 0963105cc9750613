"""Ingest: `claims:batch` through the API view against raw inserts of the same claim rows.

`python -m bench ingest [--smoke]` runs this section alone (in the throwaway
database `python -m bench` makes) and writes it into bench/RESULTS.md, keeping
the other sections; `python -m bench` runs it with the rest. The smoke size is
what tests/bench/test_ingest.py runs.

Each sample stores one batch of 100 new claims (benign notes from the
labelled corpus, spread over ten subjects, each with a uri source) three ways,
interleaved in a shuffled order each round after a warm-up, with DEBUG off:

- memdesk: `POST /api/v1/claims:batch` through the full middleware stack and
  the DRF view as an agent token (authentication, throttle, JSON parsing,
  validation, the screen, the write gate, claims, sources, review items and
  audit rows, all in one transaction);
- bulk_create: `Claim.objects.bulk_create` of the same 100 claim rows as
  memdesk stores them (status, reasons, digest, n-grams, full-text vector),
  judged beforehand: no HTTP, no screen, no gate, no sources, reviews or audit;
- save loop: the same rows, one `.save()` each, in one transaction;
- LangGraph `put`: the same 100 memories (text, value, source) written to
  LangGraph's PostgresStore in the same database, one `store.put` each, as its
  memory tools write them (each put its own transaction), ungated;
- LangGraph `batch`: the same memories in one `store.batch` of 100 `PutOp`s.

Two floors show what no gated path can go below on this machine:

- memdesk's SQL: the statements one `claims:batch` sends (captured once, before
  the rounds), replayed straight through psycopg with fresh claim ids
  and predicates: the same round trips, rows, indexes, triggers and commit,
  with no Python around them;
- the screen and the gate: `screen_candidate` and `judge` for the batch's 100
  candidates (secrets, sensitivity, ephemeral values, injections), CPU only,
  no database.

Claims per second are 100 over each path's median batch time. The goals: the
batch path at least half as fast as bulk_create, and at least as fast as
LangGraph's PostgresStore puts (2,329 claims/s where the goal was set, on
another machine; here measured in the same run).
"""

from __future__ import annotations

import os
import platform
import random
import re
import statistics
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.db.models import Value
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from langgraph.store.base import PutOp
from langgraph.store.postgres import PostgresStore
from rest_framework.test import APIClient

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import agent_token_create, tenant_create
from bench.database import conninfo
from common.fingerprints import fingerprint
from memory.claims.api.claims.serializers import CandidateIn
from memory.claims.models import Claim, ClaimSource, Subject
from memory.claims.search import ngrams, searchable_text
from memory.claims.sensitivity import classify, find_ephemeral
from memory.claims.services.claim_screening import SecretScan, screen_candidate, screen_injections
from memory.claims.services.claim_sources import resolve_sources
from memory.claims.services.claims import judge
from memory.claims.services.subjects import subjects_resolve
from testing.corpus import plain

HEADING = "## Ingest: claims:batch vs bulk_create and LangGraph's PostgresStore"
BATCH = 100
SUBJECTS = 10
GOAL_RATIO = 0.5  # memdesk claims/s ÷ bulk_create claims/s, at least
# LangGraph PostgresStore's puts where the goal was set (another machine): shown beside
# the same store measured here, which is the goal.
LANGGRAPH_WHERE_SET = 2_329
CLAIM_PATHS = ("memdesk", "bulk_create", "save_loop", "floor_sql")  # rows in memory_claim
LANGGRAPH_PATHS = ("langgraph_put", "langgraph_batch")  # rows in LangGraph's store table
PATHS = (*CLAIM_PATHS, "floor_screen", *LANGGRAPH_PATHS)
LABELS = {
    "memdesk": "memdesk `POST /claims:batch` (API view, screen, gate, sources, reviews, audit)",
    "bulk_create": "`Claim.objects.bulk_create` of the same rows",
    "save_loop": "`.save()` per row, one transaction",
    "langgraph_put": "LangGraph PostgresStore, `store.put` per memory (ungated)",
    "langgraph_batch": "LangGraph PostgresStore, one `store.batch` of 100 puts (ungated)",
    "floor_sql": "floor: memdesk's own statements of one batch, straight through psycopg",
    "floor_screen": "floor: the screen and the gate's verdicts alone (CPU, no database)",
}
FLOORS = ("floor_sql", "floor_screen")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Size:
    name: str
    samples: int
    warmup: int


SMOKE = Size("smoke", samples=3, warmup=1)
FULL = Size("full", samples=30, warmup=3)


def size_from(argv: list[str]) -> Size:
    return SMOKE if "--smoke" in argv else FULL


@dataclass
class Ingest:
    size: Size
    seconds: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PATHS})
    # CPU seconds this process spent per sample (PostgreSQL's work is not in it).
    cpu: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PATHS})
    rows: dict[str, int] = field(default_factory=dict)
    # SQL statements (each one round trip) of one memdesk batch, BEGIN and COMMIT included.
    statements: int = 0
    environment: str = ""

    def p(self, path: str, percentile: int) -> float:
        """Nearest-rank percentile of one batch, in milliseconds."""
        ordered = sorted(self.seconds[path])
        rank = max(1, -(-percentile * len(ordered) // 100))
        return ordered[rank - 1] * 1000

    def per_second(self, path: str) -> float:
        return BATCH / statistics.median(self.seconds[path])

    @property
    def ratio(self) -> float:
        return self.per_second("memdesk") / self.per_second("bulk_create")

    @property
    def vs_langgraph(self) -> float:
        return self.per_second("memdesk") / self.per_second("langgraph_put")


def _items(notes: list[str], tag: str) -> list[dict[str, Any]]:
    return [
        {
            "subject": f"user:ingest-{i % SUBJECTS}",
            "kind": "fact",
            "predicate": f"note_{tag}_{i}",
            "value": {"summary": notes[i % len(notes)][:60], "tags": ["crm", "q4"]},
            "text": notes[i % len(notes)],
            "authority": "agent_inferred",
            "basis": "inference",
            "sources": [{"uri": f"https://tickets.example.com/{tag}/{i}"}],
        }
        for i in range(BATCH)
    ]


def _rows(tenant: Tenant, subjects: dict[str, Subject], items: list[dict], agent: str) -> list:
    """The claim rows memdesk stores for `items` (all `needs_review`), judged beforehand."""
    now = timezone.now()
    rows = []
    for item in items:
        document = searchable_text(
            predicate=item["predicate"], text=item["text"], value=item["value"]
        )
        rows.append(
            Claim(
                tenant=tenant,
                subject=subjects[item["subject"]],
                kind=item["kind"],
                predicate=item["predicate"],
                value=item["value"],
                text=item["text"],
                authority=item["authority"],
                basis=item["basis"],
                available_at=now,
                status="candidate",
                revision=1,
                gate_decision="needs_review",
                gate_reasons=["unverified_authority"],
                agent=agent,
                value_digest=fingerprint({"value": item["value"], "text": item["text"]}),
                search_vector=SearchVector(Value(document), config="english"),
                ngrams=ngrams(document),
                updated_at=now,
            )
        )
    return rows


@contextmanager
def _langgraph_store() -> Iterator[PostgresStore]:
    """LangGraph's PostgresStore in this database, on its own connection, as it runs."""
    with PostgresStore.from_conn_string(conninfo()) as store:
        store.setup()
        yield store


Memory = tuple[tuple[str, ...], str, dict[str, Any]]  # (namespace, key, value)


def _memories(items: list[dict[str, Any]]) -> list[Memory]:
    """The batch's items as LangGraph memories: one namespace per subject, the predicate
    as key, the text, value and source as the stored document."""
    return [
        (
            ("memories", item["subject"]),
            item["predicate"],
            {"text": item["text"], "value": item["value"], "source": item["sources"][0]},
        )
        for item in items
    ]


def run(size: Size = SMOKE) -> Ingest:
    with _langgraph_store() as store:
        return _run(size, store)


def _run(size: Size, store: PostgresStore) -> Ingest:
    result = Ingest(size=size, environment=_environment())
    tenant, _ = tenant_create(slug=f"bench-ingest-{size.name}", name="Ingest benchmark")
    issued = agent_token_create(tenant=tenant, name=f"ingest-{size.name}")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    rates = {"claims_batch": "1000000/minute", "agent": "1000000/minute"}
    # Notes the gate would hold back for consent (health, finance, minors, …) or refuse as
    # ephemeral take another path; the bench times the common one, judged for review.
    notes = [
        note
        for note in plain("benign_notes.txt")
        if not classify([note]).consent_classes and not find_ephemeral([note])
    ]
    subjects = subjects_resolve(tenant=tenant, keys=[f"user:ingest-{n}" for n in range(SUBJECTS)])

    def memdesk(tag: str) -> None:
        response = client.post(
            "/api/v1/claims:batch", {"items": _items(notes, tag)}, format="json", secure=True
        )
        results = response.json().get("results", []) if response.status_code == 200 else []
        if [r.get("decision") for r in results] != ["needs_review"] * BATCH:
            raise SystemExit(f"claims:batch answered {response.status_code}: {results[:1]}")

    def bulk_create(tag: str) -> None:
        rows = _rows(tenant, subjects, _items(notes, tag), issued.token.name)
        Claim.objects.bulk_create(rows)

    def save_loop(tag: str) -> None:
        rows = _rows(tenant, subjects, _items(notes, tag), issued.token.name)
        with transaction.atomic():
            for row in rows:
                row.save(force_insert=True)

    # memdesk's statements for one batch, captured once; each replay gives the claims new
    # ids (and the rows that name them the same new ids) and predicates of its own.
    with override_settings(DEBUG=False, API_THROTTLE_RATES=rates):
        memdesk("first")  # a token's first request also records its use (once a minute)
        with CaptureQueriesContext(connection) as queries:
            memdesk("statements")
    captured = [query["sql"] for query in queries.captured_queries]
    result.statements = len(captured)
    # Replayed on Django's own psycopg connection, bypassing Django: the transaction
    # statements are captured too (BEGIN and COMMIT, or savepoints inside a test's
    # transaction, whose rows a second connection could not see).
    connection.ensure_connection()
    raw: psycopg.Connection = connection.connection

    # The floors time their own core: the statements' replay without rewriting them, the
    # screen's CPU without reading the candidates. (wall seconds, CPU seconds) per call.
    cores: dict[str, list[tuple[float, float]]] = {path: [] for path in FLOORS}

    def floor_sql(tag: str) -> None:
        fresh: dict[str, str] = {}
        statements = [
            _UUID.sub(lambda found: fresh.setdefault(found[0], str(uuid.uuid4())), sql)
            .replace("note_statements_", f"note_{tag}_")
            .encode()
            for sql in captured
        ]
        started, started_cpu = time.perf_counter(), time.process_time()
        with raw.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
        cores["floor_sql"].append(
            (time.perf_counter() - started, time.process_time() - started_cpu)
        )

    actor = Actor.for_token(issued.token)
    serializer = CandidateIn()

    def floor_screen(tag: str) -> None:
        candidates = [
            CandidateIn.candidate_from(serializer.run_validation(item))
            for item in _items(notes, tag)
        ]
        now = timezone.now()
        started_cpu = time.process_time()
        scan = SecretScan()  # one per batch, as claims_submit_batch has
        # The learned head reads the whole batch at once, as claims_submit_batch has it.
        screened = screen_injections([screen_candidate(c, scan=scan) for c in candidates])
        verdicts = [
            judge(
                screened=item,
                actor=actor,
                sources=resolve_sources(sources=item.candidate.sources, events={}),
                active=None,
                available_at=now,
                outcome_receipt=None,
            )
            for item in screened
        ]
        # CPU time: the screen waits for nothing, so its wall time is preemption.
        cpu = time.process_time() - started_cpu
        cores["floor_screen"].append((cpu, cpu))
        if {verdict.decision for verdict in verdicts} != {"needs_review"}:
            raise SystemExit(f"the screen floor judged otherwise than memdesk: {verdicts[:1]}")

    def langgraph_put(tag: str) -> None:
        for namespace, key, value in _memories(_items(notes, tag)):
            store.put(namespace, key, value)

    def langgraph_batch(tag: str) -> None:
        store.batch([PutOp(*memory) for memory in _memories(_items(notes, tag))])

    run_path = {
        "memdesk": memdesk,
        "bulk_create": bulk_create,
        "save_loop": save_loop,
        "langgraph_put": langgraph_put,
        "langgraph_batch": langgraph_batch,
        "floor_sql": floor_sql,
        "floor_screen": floor_screen,
    }
    with override_settings(DEBUG=False, API_THROTTLE_RATES=rates):
        order = list(PATHS)
        for round_ in range(size.warmup + size.samples):
            random.shuffle(order)
            for path in order:
                started, started_cpu = time.perf_counter(), time.process_time()
                run_path[path](f"{path}-{round_}")
                elapsed = time.perf_counter() - started
                if round_ >= size.warmup:
                    result.seconds[path].append(elapsed)
                    result.cpu[path].append(time.process_time() - started_cpu)
                    if path in cores:
                        result.seconds[path][-1], result.cpu[path][-1] = cores[path][-1]
    for path in CLAIM_PATHS:
        result.rows[path] = Claim.objects.filter(
            tenant=tenant, predicate__startswith=f"note_{path}-"
        ).count()
    with connection.cursor() as cursor:
        for path in LANGGRAPH_PATHS:
            cursor.execute("SELECT count(*) FROM store WHERE key LIKE %s", [f"note_{path}-%"])
            result.rows[path] = cursor.fetchone()[0]
    result.rows["sources"] = ClaimSource.objects.filter(
        tenant=tenant, claim__predicate__startswith="note_memdesk-"
    ).count()
    return result


def _environment() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0].split()[0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"PostgreSQL {server}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} when it started"
    )


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _floor(result: Ingest) -> str:
    """Where the goals stand against what no gated path can go below on this machine."""
    budget = BATCH / LANGGRAPH_WHERE_SET * 1000
    statements, screen = result.p("floor_sql", 50), result.p("floor_screen", 50)
    floor = statements + screen
    put = result.p("langgraph_put", 50)
    verdict = (
        f"which is already {floor / put:.2f}x LangGraph's {put:.1f} ms for the same 100 "
        "memories: on this machine a gated batch that sends these statements and screens "
        "its content cannot reach that goal, even with nothing else (HTTP, JSON, validation, "
        "building rows) costing anything"
        if floor >= put
        else f"against LangGraph's {put:.1f} ms: {put - floor:.1f} ms are left for HTTP, "
        "JSON, validation and building the rows"
    )
    return (
        f"Floors (p50 per batch): memdesk's own {result.statements} statements straight through "
        f"psycopg take {statements:.1f} ms (the token lookup, BEGIN, subjects, "
        "identity locks, identity states, one INSERT each for claims, sources, review items "
        "and audit rows, COMMIT; whatever the batch's size) and the screen and the gate's "
        f"verdicts for its 100 candidates {screen:.1f} ms of CPU; together {floor:.1f} ms, "
        f"{verdict}. {LANGGRAPH_WHERE_SET:,} claims/s is LangGraph PostgresStore's put rate "
        f"on the machine the goal was set on, a batch of {BATCH} in {budget:.1f} ms; the same "
        f"store does {result.per_second('langgraph_put'):,.0f} puts/s here, in this run, which "
        "is the goal above. LangGraph's one `store.batch` is a single INSERT into a table with "
        "one key index and no gate, full-text vector, n-grams, sources, reviews or audit: "
        "shown for scale, not a goal."
    )


def section(result: Ingest) -> str:
    memdesk = result.per_second("memdesk")
    lines = [
        HEADING,
        "",
        f"Run `python -m bench ingest` on {timezone.now():%Y-%m-%d %H:%M} UTC, "
        f"{result.environment}; {result.size.name} size: batches of {BATCH} new claims, "
        f"{result.size.samples} interleaved samples per path after {result.size.warmup} "
        "warm-up rounds, DEBUG off (bench/ingest.py).",
        "",
        "| path | p50 ms per batch | p95 ms per batch | samples | claims/s (p50) | "
        "vs bulk_create | CPU ms per batch in this process (p50) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {LABELS[path]} | {result.p(path, 50):.1f} | {result.p(path, 95):.1f} | "
            f"{len(result.seconds[path])} | {result.per_second(path):,.0f} | "
            f"{result.per_second(path) / result.per_second('bulk_create'):.2f}x | "
            f"{statistics.median(result.cpu[path]) * 1000:.1f} |"
            for path in PATHS
        ),
        "",
        "CPU time is this process's alone (Python: the view, the screen, the gate, building "
        "the statements); PostgreSQL's work runs in its own process. On a machine whose load "
        "average exceeds its CPUs, wall times grow with the wait for a CPU.",
        "",
        "| goal | measured | met |",
        "|---|---:|---|",
        f"| claims:batch ≥ {GOAL_RATIO}x bulk_create | {result.ratio:.2f}x | "
        f"{_met(result.ratio >= GOAL_RATIO)} |",
        f"| claims:batch ≥ LangGraph PostgresStore `put` (same run) | {result.vs_langgraph:.2f}x "
        f"({memdesk:,.0f} vs {result.per_second('langgraph_put'):,.0f} claims/s) | "
        f"{_met(result.vs_langgraph >= 1)} |",
        "",
        _floor(result),
        "",
    ]
    return "\n".join(lines)
