"""Celery tasks of the claims domain: embedding claims (for semantic recall) and ledger
events (for session search), and writing a recall's trace after the answer went out.

Tasks carry ids (or, for a trace, the whole trace the request named) and re-read the
rows: embedding a claim twice writes the same vector, and writing a trace twice writes
nothing the second time, so a redelivered message is harmless. The pending sweep
re-finds active claims and recent events still without a vector from PostgreSQL alone.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from memory.claims.services.embeddings import (
    claims_embed,
    claims_embed_pending,
    events_embed,
    events_embed_pending,
)
from memory.claims.services.recall import recall_trace_record
from memory.claims.services.recall_outbox import (
    SWEEP_AFTER,
    pending_trace_drain,
    pending_traces_drain,
)


@shared_task(name="memory.embed_claims", acks_late=True, reject_on_worker_lost=True)
def embed_claims(claim_ids: list[str]) -> int:
    """Embed one batch of claims."""
    return claims_embed(claim_ids=claim_ids)


@shared_task(name="memory.embed_events", acks_late=True, reject_on_worker_lost=True)
def embed_events(event_ids: list[str]) -> int:
    """Embed one batch of ledger events."""
    return events_embed(event_ids=event_ids)


@shared_task(name="memory.embed_pending", acks_late=True, reject_on_worker_lost=True)
def embed_pending() -> int:
    """Beat's safety net: embed active claims, and events of the last
    `EMBED_EVENT_SWEEP_HOURS`, whose message was lost or whose worker died.

    One bounded slice (`EMBED_SWEEP_SLICE` of each) per run: when a slice was full, more
    may be pending, and the sweep enqueues itself again at the back of the bulk queue
    instead of holding its worker until everything is embedded."""
    since = timezone.now() - timedelta(hours=settings.EMBED_EVENT_SWEEP_HOURS)
    size = max(1, settings.EMBED_SWEEP_SLICE)
    claims = claims_embed_pending(limit=size)
    events = events_embed_pending(limit=size, since=since)
    if claims >= size or events >= size:
        embed_pending.apply_async(queue=settings.EMBED_QUEUE)
    return claims + events


@shared_task(name="memory.record_recall", acks_late=True, reject_on_worker_lost=True)
def record_recall(trace: dict[str, Any]) -> bool:
    if trace.get("pending"):
        # `outbox` mode: the message names a pending row; the row holds the trace.
        return pending_trace_drain(trace_id=trace["id"])
    return recall_trace_record(trace=trace)


@shared_task(name="memory.recall_traces_sweep", acks_late=True, reject_on_worker_lost=True)
def recall_traces_sweep() -> int:
    """Beat's safety net: write the pending traces whose message was lost or is late."""
    return pending_traces_drain(older_than=SWEEP_AFTER)
