"""The recall section's speed rows beside their floors (`python -m bench recall`):

- the ranking statement against the least a semantic ranking must read, the subject's
  active claims' packed vectors, both through a bare psycopg connection, interleaved;
- query encoders side by side on the same 300 questions, interleaved: the float32
  MiniLM on one thread (what recall runs), on two threads, and its int8 graph; with each
  one's hit@10 (the int8 one embeds the claims again under its own model name);
- claims made recallable by meaning per second against the model alone on the same
  documents (one thread and two), the rate no worker can beat on this machine.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings

from bench.recall_data import MEMORIES_PER_USER
from memory.claims.embedders import LocalEmbedder, embedder, embedding_document
from memory.claims.models import Claim, ClaimEmbedding, Subject
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.services.embeddings import claims_embed_pending


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def _ms(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def _pair(label: str, ms: list[float], floor: list[float]) -> list[str]:
    return [
        f"| {label} p50 / p95 | {pct(ms, 0.5):.2f} / {pct(ms, 0.95):.2f} ms ({len(ms)} samples) |",
        f"| {label}: ratio to its floor at p50 / p95 | "
        f"{pct(ms, 0.5) / pct(floor, 0.5):.1f}x / {pct(ms, 0.95) / pct(floor, 0.95):.1f}x |",
    ]


_VECTORS = f"""
    SELECT e.claim_id, e.packed FROM {Claim._meta.db_table} c
    JOIN {ClaimEmbedding._meta.db_table} e ON e.claim_id = c.id AND e.tenant_id = c.tenant_id
    WHERE c.tenant_id = %s AND c.subject_id = %s AND c.status = 'active' AND e.model = %s
"""


def ranking_vs_floor(
    raw: psycopg.Connection, statements: list[tuple[Subject, str]], model: str
) -> list[str]:
    """The ranking statement (as the selector sent it) and the read of the same subject's
    packed vectors alone, in turn (which goes first alternates), binary results."""
    ranking: list[float] = []
    floor: list[float] = []

    def run(sql: str | bytes, params: Any = None) -> None:
        with raw.cursor(binary=True) as cursor:
            cursor.execute(sql, params, binary=True)
            cursor.fetchall()

    for n, (subject, sql) in enumerate(statements):
        steps = [
            (ranking, lambda sql=sql: run(sql.encode())),
            (floor, lambda s=subject: run(_VECTORS, [s.tenant_id, s.pk, model])),
        ]
        for times, step in steps if n % 2 else reversed(steps):
            times.append(_ms(step))
    return [
        *_pair("ranking statement alone via psycopg (binary)", ranking, floor),
        f"| its floor: the subject's packed vectors read alone p50 / p95 | "
        f"{pct(floor, 0.5):.2f} / {pct(floor, 0.95):.2f} ms ({len(floor)} samples) |",
    ]


def _encoders() -> dict[str, LocalEmbedder]:
    threads = settings.EMBED_THREADS
    encoders = {}
    for label, precision, count in (
        (f"float32, {threads} thread(s) (recall's)", "fp32", threads),
        ("float32, 2 threads", "fp32", 2),
        ("int8, 1 thread", "int8", 1),
    ):
        settings.EMBED_THREADS = count
        try:
            encoder = LocalEmbedder(precision=precision)
            encoder.embed(["warm up"])  # loads the session with these threads
        finally:
            settings.EMBED_THREADS = threads
        encoders[label] = encoder
    return encoders


def encoders_side_by_side(
    questions: list[str], hit_at_10: Callable[[str], float], fp32_hits: float
) -> list[str]:
    """Each encoder's query embedding, interleaved question by question (order shuffled
    per question), and each precision's hit@10 (`hit_at_10(precision)`)."""
    encoders = _encoders()
    times: dict[str, list[float]] = {label: [] for label in encoders}
    rng = random.Random(11)
    for question in questions:
        order = list(encoders.items())
        rng.shuffle(order)
        for label, encoder in order:
            times[label].append(_ms(functools.partial(encoder.embed, [question])))
    floor = times[next(iter(times))]
    lines = []
    for label, ms in times.items():
        hits = fp32_hits if label.startswith("float32") else hit_at_10("int8")
        lines.append(
            f"| query encoder {label}: p50 / p95, vs recall's at p50, hit@10 | "
            f"{pct(ms, 0.5):.2f} / {pct(ms, 0.95):.2f} ms ({len(ms)} samples), "
            f"{pct(ms, 0.5) / pct(floor, 0.5):.2f}x, {hits:.3f} |"
        )
    return lines


def embedding_rates(embedded: int, seconds: float, sample: int = 1000) -> list[str]:
    """The pipeline's claims per second against the model alone on a sample of the same
    documents, with one thread and with two."""
    claims = list(
        Claim.objects.filter(status="active")
        .order_by("id")
        .values("predicate", "text", "value")[:sample]
    )
    documents = [embedding_document(**c) for c in claims]
    lines = [
        f"| claims made recallable by meaning per second (`claims_embed_pending`, batches of "
        f"{settings.EMBED_BATCH_SIZE}, {settings.EMBED_THREADS} thread(s)) | "
        f"{embedded / seconds:,.0f} ({embedded:,} claims in {seconds:.1f} s) |"
    ]
    threads = settings.EMBED_THREADS
    for count in (1, 2):
        settings.EMBED_THREADS = count
        try:
            encoder = LocalEmbedder()
            encoder.embed(["warm up"])
            started = time.perf_counter()
            encoder.embed(documents)
            rate = len(documents) / (time.perf_counter() - started)
        finally:
            settings.EMBED_THREADS = threads
        lines.append(
            f"| its floor: the model alone on {len(documents):,} of the same documents, "
            f"{count} thread(s) | {rate:,.0f} claims/s (pipeline at "
            f"{embedded / seconds / rate:.2f}x of it) |"
        )
    return lines


def speed_rows(
    raw: psycopg.Connection,
    questions: list[tuple[Subject, str, str]],
    rankings: list[tuple[Subject, str]],
    fp32_hits: float,
    embedded: int,
    embedding_seconds: float,
) -> list[str]:
    """The ranking statement, the query encoders and the embedding rate beside their
    floors; `questions` are (subject, the predicate asked about, the question)."""
    model = embedder()
    if model is None:
        return []

    def hit_at_10(precision: str) -> float:
        kept = settings.EMBED_PRECISION
        settings.EMBED_PRECISION = precision  # its vectors go under their own model name
        try:
            claims_embed_pending(limit=len(questions) * MEMORIES_PER_USER)
            hits = 0
            for subject, predicate, question in questions:
                found = claims_recall(tenant=subject.tenant, q=RecallQuery(subject, query=question))
                hits += any(item.claim.predicate == predicate for item in found.items)
        finally:
            settings.EMBED_PRECISION = kept
        return hits / len(questions)

    return [
        *ranking_vs_floor(raw, rankings, model.model),
        *encoders_side_by_side([q for _, _, q in questions], hit_at_10, fp32_hits),
        *embedding_rates(embedded, embedding_seconds),
    ]
