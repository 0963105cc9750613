"""Recall benchmark: paraphrased questions against a templated memory set.

`python -m bench recall` seeds 50 users x 200 memories (10,000 claims; set
`BENCH_RECALL_USERS` for more, e.g. 5000 for 1M) in a throwaway database,
embeds them with the configured embedder, then asks questions phrased
differently from the stored text and measures:

- hit@10: the memory the question is about is among the first ten items;
- results returned per recall of limit 10 (every user has 200 legal claims);
- p50/p95 of `recall_run` (legal set, ranking, trace), the query's embedding
  time on its own, and the same recall's SQL replayed through psycopg (the floor);
- the floor of a semantic recall on this machine: its ranking statement through
  a bare psycopg connection (binary results, as the selector reads them) while a
  thread embeds its question, as the selector overlaps them, and nothing else:
  no Django, no fusion, no second statement, no trace;
- memdesk's recall over HTTP (gunicorn on loopback, as the Dockerfile runs it,
  a bearer token, the whole middleware stack) against the same recall's SQL
  through a bare psycopg connection, interleaved question by question: lexical
  (`MEMDESK_EMBEDDER=none` in the server) with the trace written by a worker
  and inline, and semantic, where the query's embedding is measured apart;
- write -> semantically recallable: an active claim committed, embedded by the
  task function in this process, until a paraphrase finds it.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
import psycopg
import redis
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Tenant
from accounts.services import agent_token_create, tenant_create
from bench.database import conninfo
from bench.recall_data import ACTOR, FAMILIES, MEMORIES_PER_USER, QUESTIONS_PER_USER, seed_users
from bench.recall_speed import speed_rows
from memory.claims.embedders import embedder, semantic_mode
from memory.claims.models import Claim, ClaimEmbedding, Subject
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery, cached_query_vector
from memory.claims.services.embeddings import claims_embed_pending
from memory.claims.services.recall import recall_run
from memory.claims.tasks import embed_claims


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def _row(label: str, ms: list[float]) -> str:
    if not ms:
        return f"| {label} p50 / p95 | - |"
    return f"| {label} p50 / p95 | {_pct(ms, 0.5):.1f} / {_pct(ms, 0.95):.1f} ms |"


def _floor(statements: list[str]) -> float:
    """The recall's own SQL, replayed through a bare psycopg connection (ms)."""
    started = time.perf_counter()
    with _raw.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql.encode())
            cursor.fetchall()
    return (time.perf_counter() - started) * 1000


_raw: psycopg.Connection
_EMBEDDING_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-embed")


def _overlapped_floor(ranking_sql: str, question: str, model: Any) -> float:
    """The ranking statement while a thread embeds the question, until both are done (ms)."""
    started = time.perf_counter()
    embedding = _EMBEDDING_THREAD.submit(model.embed, [question])
    with _raw.cursor(binary=True) as cursor:
        cursor.execute(ranking_sql.encode())
        cursor.fetchall()
    embedding.result()
    return (time.perf_counter() - started) * 1000


def _lag(tenant: Tenant, samples: int = 10) -> list[float]:
    """Commit an active claim, embed it as the task does, and recall it by a paraphrase."""
    lags = []
    for n in range(samples):
        subject = Subject.objects.create(tenant=tenant, kind="user", ref=f"lag{n}")
        started = time.perf_counter()
        with transaction.atomic():
            claim = Claim.objects.create(
                tenant=tenant,
                subject=subject,
                kind="fact",
                predicate="hobby",
                value="birdwatching",
                text=f"Lag {n} spends weekends birdwatching in the marshes",
                authority="user_explicit",
                basis="verified",
                status="active",
                gate_decision="accepted",
                agent="bench",
                available_at=timezone.now(),
            )
        embed_claims(claim_ids=[str(claim.pk)])
        found = claims_recall(
            tenant=tenant,
            q=RecallQuery(subject=subject, query="which pastime involves watching wildlife"),
        )
        if not (found.items and "vector" in found.items[0].signals):
            raise SystemExit("the written claim was not found by meaning")
        lags.append((time.perf_counter() - started) * 1000)
    return lags


def _grow(tenant: Tenant, measured: list[Subject], total: int) -> float:
    """Add background subjects to `tenant` until it holds `total` claims; seconds taken.

    Each background subject is a copy of one measured subject's claims (text, n-grams,
    full-text vector and packed embedding; the float-array copy of the vector, which
    recall never reads without pgvector, is left empty to keep the copy small), made
    by SQL in the database: the questions still ask about the measured subjects, now in
    a tenant 10 or 100 times larger.
    """
    started = time.perf_counter()
    have = Claim.objects.filter(tenant=tenant).count()
    background = Subject.objects.filter(tenant=tenant, ref__startswith="bg").count()
    wanted = max(0, -(-(total - have) // MEMORIES_PER_USER))
    claim_columns = [
        f.column for f in Claim._meta.concrete_fields if f.column not in ("id", "subject_id")
    ]
    copied = ", ".join(f"c.{column}" for column in claim_columns)
    claim_table, embedding_table = Claim._meta.db_table, ClaimEmbedding._meta.db_table
    # The copy's id is derived from the original's and its subject, so the embeddings
    # below find their claims without a mapping table.
    claims_sql = (
        f"INSERT INTO {claim_table} (id, subject_id, {', '.join(claim_columns)}) "
        f"SELECT md5(c.id::text || m.dst::text)::uuid, m.dst, {copied} "
        f"FROM {claim_table} c JOIN unnest(%s::bigint[], %s::bigint[]) AS m(src, dst) "
        "ON c.subject_id = m.src"
    )
    embeddings_sql = (
        f"INSERT INTO {embedding_table} (tenant_id, claim_id, model, dim, vector, packed, "
        "digest, embedded_at, lag_seconds) "
        "SELECT e.tenant_id, md5(e.claim_id::text || m.dst::text)::uuid, e.model, e.dim, "
        "'{}', e.packed, e.digest, e.embedded_at, 0 "
        f"FROM {embedding_table} e JOIN {claim_table} c ON c.id = e.claim_id "
        "JOIN unnest(%s::bigint[], %s::bigint[]) AS m(src, dst) ON c.subject_id = m.src"
    )
    chunk = 250  # subjects per statement: 50,000 claims
    for first in range(0, wanted, chunk):
        made = Subject.objects.bulk_create(
            [
                Subject(tenant=tenant, kind="user", ref=f"bg{background + first + n}")
                for n in range(min(chunk, wanted - first))
            ]
        )
        sources = [measured[(first + n) % len(measured)].pk for n in range(len(made))]
        targets = [subject.pk for subject in made]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(claims_sql, [sources, targets])
            cursor.execute(embeddings_sql, [sources, targets])
    with connection.cursor() as cursor:
        # As autovacuum would on a live database: fresh statistics and visibility maps.
        cursor.execute(f"VACUUM ANALYZE {claim_table}, {embedding_table}")
    return time.perf_counter() - started


def _at_scale(
    tenant: Tenant,
    measured: list[Subject],
    questions: list[tuple[Subject, str, str]],
    secret: str,
    totals: list[int],
    semantic: bool,
) -> list[str]:
    """The HTTP-vs-SQL recall pairs again after growing the tenant to each of `totals`."""
    lines = [
        "",
        "| tenant's claims | grown in | lexical HTTP p50 / p95 | lexical SQL p50 / p95 | "
        "HTTP / SQL p95 | semantic HTTP p50 / p95 | semantic SQL p50 / p95 | HTTP / SQL p95 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    p95s: dict[int, tuple[float, float]] = {}
    for total in totals:
        seconds = _grow(tenant, measured, total)
        kind = settings.MEMDESK_EMBEDDER
        settings.MEMDESK_EMBEDDER = "none"
        try:
            lexical = _http_vs_sql(tenant, questions, secret, semantic=False)
        finally:
            settings.MEMDESK_EMBEDDER = kind
        meaning = (
            _http_vs_sql(tenant, questions, secret, semantic=True, RECALL_QUERY_CACHE_SIZE="0")
            if semantic
            else None
        )
        claims = Claim.objects.filter(tenant=tenant).count()

        def pair(ms: list[float]) -> str:
            return f"{_pct(ms, 0.5):.1f} / {_pct(ms, 0.95):.1f} ms"

        def ratio(http_ms: list[float], sql_ms: list[float]) -> str:
            return f"{_pct(http_ms, 0.95) / _pct(sql_ms, 0.95):.1f}x"

        lines.append(
            f"| {claims:,} | {seconds:.0f} s | {pair(lexical[0])} | {pair(lexical[1])} | "
            f"{ratio(lexical[0], lexical[1])} | "
            + (
                f"{pair(meaning[0])} | {pair(meaning[1])} | {ratio(meaning[0], meaning[1])} |"
                if meaning
                else "- | - | - |"
            )
        )
        p95s[total] = (_pct(lexical[0], 0.95), _pct(meaning[0], 0.95) if meaning else 0.0)
    if len(totals) >= 2:
        small, large = totals[-2], totals[-1]
        lexical_growth = p95s[large][0] / p95s[small][0]
        lines += [
            "",
            f"Recall p95 at {large:,} ÷ p95 at {small:,} claims over HTTP: lexical "
            f"{lexical_growth:.2f}x"
            + (f", semantic {p95s[large][1] / p95s[small][1]:.2f}x" if semantic else "")
            + " (goal ≤ 1.5x).",
        ]
    return lines


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host = db["HOST"] or ""
    if host.startswith("/"):
        return f"postgres://{db['USER']}{password}@{quote(host, safe='')}/{db['NAME']}"
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _server(**env: str) -> Iterator[str]:
    """memdesk under gunicorn on loopback (one sync worker, as the Dockerfile runs it),
    against the benchmark's database; yields its base URL."""
    port = _free_port()
    queue = f"memdesk-bench-recall-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            cwd=settings.BASE_DIR,
            env={
                **os.environ,
                "DEBUG": "0",
                "SECRET_KEY": uuid.uuid4().hex * 2,
                "SECURE_SSL_REDIRECT": "0",
                "DATABASE_URL": _database_url(),
                "REDIS_URL": settings.REDIS_URL,
                "CACHE_KEY_PREFIX": "memdesk-bench",
                "API_THROTTLE_AGENT": "1000000/minute",
                # No worker listens: the messages are dropped with the queue below.
                "RECALL_TRACE_QUEUE": queue,
                "LOG_LEVEL": "WARNING",
                **env,
            },
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"gunicorn did not start:\n{log.read().decode()[-4000:]}")
                time.sleep(0.2)
            yield url
        finally:
            os.killpg(process.pid, 15)
            process.wait(timeout=30)
            broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
            for key in broker.scan_iter(match=f"{queue}*"):
                broker.delete(key)
            broker.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


def _selector_sql(tenant: Tenant, q: RecallQuery) -> list[str]:
    """The statements the selector runs for `q`, as sent to PostgreSQL."""
    with CaptureQueriesContext(connection) as captured:
        claims_recall(tenant=tenant, q=q)
    return [c["sql"] for c in captured.captured_queries]


def _http_vs_sql(
    tenant: Tenant,
    questions: list[tuple[Subject, str, str]],
    secret: str,
    *,
    semantic: bool,
    **env: str,
) -> tuple[list[float], list[float], list[float]]:
    """For each question, memdesk's recall over HTTP and its SQL through psycopg, taken
    in turn (which goes first alternates): (http ms, sql ms, query embedding ms)."""
    http_ms: list[float] = []
    sql_ms: list[float] = []
    embed_ms: list[float] = []
    model = embedder() if semantic else None
    headers = {"Authorization": f"Bearer {secret}"}
    kind = settings.MEMDESK_EMBEDDER if semantic else "none"
    with (
        _server(MEMDESK_EMBEDDER=kind, **env) as url,
        httpx.Client(base_url=url, headers=headers, timeout=30) as client,
    ):

        def over_http(subject: Subject, question: str) -> float:
            started = time.perf_counter()
            response = client.post(
                "/api/v1/recall", json={"subject": subject.key, "query": question}
            )
            elapsed = (time.perf_counter() - started) * 1000
            answer = response.json() if response.status_code == 200 else {}
            # A full answer, or an abstention (docs/recall.md): nothing else is a recall.
            if not answer or (len(answer["items"]) != 10 and not answer["abstained"]):
                raise SystemExit(f"recall over HTTP answered {response.status_code}")
            return elapsed

        # The first semantic recall loads the model in the server: no time limit to speak of.
        client.post(
            "/api/v1/recall",
            json={"subject": questions[0][0].key, "query": "warm up"},
            timeout=600,
        ).raise_for_status()
        for n, (subject, _, question) in enumerate(questions):
            statements = _selector_sql(tenant, RecallQuery(subject=subject, query=question))
            if n % 2:
                sql_ms.append(_floor(statements))
                http_ms.append(over_http(subject, question))
            else:
                http_ms.append(over_http(subject, question))
                sql_ms.append(_floor(statements))
            if model is not None:
                started = time.perf_counter()
                model.embed([question])
                embed_ms.append((time.perf_counter() - started) * 1000)
    return http_ms, sql_ms, embed_ms


def _ratio_row(label: str, http_ms: list[float], sql_ms: list[float]) -> str:
    p50, p95 = _pct(http_ms, 0.5) / _pct(sql_ms, 0.5), _pct(http_ms, 0.95) / _pct(sql_ms, 0.95)
    return f"| {label} | {p50:.1f}x / {p95:.1f}x |"


def _connect_raw() -> psycopg.Connection:
    return psycopg.connect(conninfo(), autocommit=True)


def _questions(subjects: list[Subject]) -> list[tuple[Subject, str, str]]:
    """(subject, the predicate asked about, the paraphrased question), six per user."""
    rng = random.Random(7)
    questions = []
    for subject in subjects[:50]:
        for family in rng.sample(range(len(FAMILIES)), QUESTIONS_PER_USER):
            questions.append((subject, FAMILIES[family][0], FAMILIES[family][2]))
    return questions


def _run(users: int) -> list[str]:
    global _raw
    tenant, _ = tenant_create(slug="bench-recall", name="Recall benchmark")
    started = time.perf_counter()
    subjects = seed_users(tenant, users)
    seeded = time.perf_counter() - started
    started = time.perf_counter()
    embedded = claims_embed_pending(limit=users * MEMORIES_PER_USER)
    embedding_seconds = time.perf_counter() - started
    # As autovacuum would after a load this size: without statistics the planner reads a
    # subject's vectors through the tenant's whole active-claims index (measured: the
    # vector read 9.7 ms instead of 0.9 ms).
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Claim._meta.db_table}, {ClaimEmbedding._meta.db_table}")
    _raw = _connect_raw()
    questions = _questions(subjects)
    model = embedder()
    hits = returned = abstained = 0
    recall_ms: list[float] = []
    floor_ms: list[float] = []
    embed_ms: list[float] = []
    overlapped_ms: list[float] = []
    rankings: list[tuple[Subject, str]] = []
    # The trace inline, as the answer waited for it before it moved to a worker: this row
    # stays comparable with earlier runs (and no message leaves this process).
    recall_run(
        tenant=tenant,
        actor=ACTOR,
        subject_key="user:bench0",
        q=RecallQuery(subject=subjects[0], query="warm up"),
        trace_write="inline",
    )
    for subject, predicate, question in questions:
        q = RecallQuery(subject=subject, query=question, limit=10)
        # The questions repeat across users: timed cold, each embeds its query.
        cached_query_vector.cache_clear()
        started = time.perf_counter()
        result, _ = recall_run(
            tenant=tenant, actor=ACTOR, subject_key=subject.key, q=q, trace_write="inline"
        )
        recall_ms.append((time.perf_counter() - started) * 1000)
        selects = _selector_sql(tenant, q)
        floor_ms.append(_floor(selects))
        if model is not None:
            started = time.perf_counter()
            model.embed([question])
            embed_ms.append((time.perf_counter() - started) * 1000)
            ranking = next(sql for sql in selects if ClaimEmbedding._meta.db_table in sql)
            overlapped_ms.append(_overlapped_floor(ranking, question, model))
            rankings.append((subject, ranking))
        returned += len(result.items)
        abstained += result.abstained
        hits += any(item.claim.predicate == predicate for item in result.items)
    lags = _lag(tenant)
    speed = speed_rows(
        _raw, questions, rankings, hits / len(questions), embedded, embedding_seconds
    )
    secret = agent_token_create(tenant=tenant, name="bench-recall", capabilities=["recall"]).secret
    # The server is lexical: the selector's SQL it is compared with must be too.
    kind = settings.MEMDESK_EMBEDDER
    settings.MEMDESK_EMBEDDER = "none"
    try:
        lexical = _http_vs_sql(tenant, questions, secret, semantic=False)
        inline = _http_vs_sql(
            tenant, questions, secret, semantic=False, RECALL_TRACE_WRITE="inline"
        )
    finally:
        settings.MEMDESK_EMBEDDER = kind
    # The server keeps no query vectors: every semantic recall embeds its question.
    semantic = (
        _http_vs_sql(tenant, questions, secret, semantic=True, RECALL_QUERY_CACHE_SIZE="0")
        if model is not None
        else None
    )
    _raw.close()
    total = users * MEMORIES_PER_USER
    lines = [
        f"| claims | {total:,} ({users} users x {MEMORIES_PER_USER}) |",
        f"| semantic mode | {semantic_mode()} ({model.model if model else 'no embedder'}) |",
        f"| seeding / embedding | {seeded:.1f} s / {embedding_seconds:.1f} s "
        f"({embedded:,} claims) |",
        f"| paraphrased questions | {len(questions)} |",
        f"| hit@10 | {hits / len(questions):.3f} |",
        f"| abstained (`RECALL_ABSTAIN_FLOOR` {settings.RECALL_ABSTAIN_FLOOR}) | "
        f"{abstained / len(questions):.3f} |",
        f"| results returned (limit 10) | {returned / len(questions):.2f} |",
        _row("recall_run", recall_ms),
        _row("of which the query embedding", embed_ms),
        _row("recall SQL via psycopg (floor)", floor_ms),
        _row(
            "floor of a semantic recall: its ranking statement via psycopg while a thread "
            "embeds the query",
            overlapped_ms,
        ),
        _row("write -> semantically recallable", lags),
        f"| **HTTP vs SQL** ({len(questions)} recalls each, interleaved) | |",
        _row("lexical: recall over HTTP, trace by a worker", lexical[0]),
        _row("lexical: the same recall's SQL via psycopg", lexical[1]),
        _ratio_row("lexical: HTTP / SQL at p50 / p95", lexical[0], lexical[1]),
        _row("lexical: recall over HTTP, trace inline", inline[0]),
        _row("lexical: the same recall's SQL via psycopg (inline run)", inline[1]),
        _ratio_row("lexical, trace inline: HTTP / SQL at p50 / p95", inline[0], inline[1]),
    ]
    lines += speed
    if semantic is not None:
        lines += [
            _row("semantic: recall over HTTP, trace by a worker", semantic[0]),
            _row("semantic: of which the query embedding (measured apart)", semantic[2]),
            _row("semantic: the same recall's SQL via psycopg", semantic[1]),
            _ratio_row("semantic: HTTP / SQL at p50 / p95", semantic[0], semantic[1]),
        ]
    return lines


def report() -> str:
    users = int(os.environ.get("BENCH_RECALL_USERS", "50"))
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        rows = _run(users)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return "\n".join(
        [
            "## Recall: paraphrased questions inside the legal set",
            "",
            f"Run `python -m bench recall` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}. "
            "Written by bench/recall.py; see bench/README.md.",
            "",
            "| measure | value |",
            "|---|---|",
            *rows,
            "",
            "The write -> recallable lag runs the embedding task's function in this process "
            "(no broker hop); with a worker, add the broker's delivery time.",
            "",
            "HTTP vs SQL: each recall (limit 10) goes to memdesk under gunicorn on loopback "
            "(one sync worker, DEBUG off, a bearer token) and, in turn, the statements the "
            "recall selector runs for it go through a bare psycopg connection (the SQL is "
            "captured from the selector in this process before the pair is timed). The "
            "SQL side leaves out what only a service does: the token and subject lookups, "
            "the JSON, the trace. A worker-written trace is enqueued after the answer (no "
            "worker runs here; the messages are dropped); inline, the answer waits for it. "
            "Semantic recalls embed the query in the request (the server keeps no query "
            "vectors, `RECALL_QUERY_CACHE_SIZE=0`, and recall_run above is timed with the "
            "cache cleared), which the SQL side is given already made; the SQL side's "
            "ranking statement reads the subject's packed vectors too.",
            "",
        ]
    )


SCALE_HEADING = "## Recall as the tenant grows: 10,000, 100,000 and 1,000,000 claims"


def scale_report() -> str:
    """The same 300 questions over HTTP and as SQL, in one tenant grown to each size."""
    global _raw
    totals = [
        int(n)
        for n in os.environ.get("BENCH_RECALL_SCALES", "100000,1000000").split(",")
        if n.strip()
    ]
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        tenant, _ = tenant_create(slug="bench-recall-scale", name="Recall at scale")
        subjects = seed_users(tenant, 50)
        claims_embed_pending(limit=50 * MEMORIES_PER_USER)
        _raw = _connect_raw()
        secret = agent_token_create(
            tenant=tenant, name="bench-recall-scale", capabilities=["recall"]
        ).secret
        rows = _at_scale(
            tenant,
            subjects,
            _questions(subjects),
            secret,
            [50 * MEMORIES_PER_USER, *totals],
            semantic=embedder() is not None,
        )
        _raw.close()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return "\n".join(
        [
            SCALE_HEADING,
            "",
            f"Run `python -m bench recall-scale` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load "
            f"{os.getloadavg()[0]:.1f} at the end. Written by bench/recall.py.",
            "",
            "One tenant: the 50 measured users' 10,000 claims, then background users (copies "
            "of the measured users' claims, with their vectors, in other subjects of the same "
            "tenant) until it holds each size. The 300 paraphrased questions of the recall "
            "section go over HTTP and as SQL, interleaved, at each size, as there.",
            *rows,
            "",
        ]
    )
