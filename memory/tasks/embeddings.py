"""Celery tasks that embed claims for semantic recall.

Tasks carry claim ids only and re-read the rows; embedding a claim twice
writes the same vector, so a redelivered message is harmless. The pending
sweep re-finds active claims still without a vector from PostgreSQL alone.
"""

from __future__ import annotations

from celery import shared_task

from memory.services.embeddings import claims_embed, claims_embed_pending


@shared_task(name="memory.embed_claims", acks_late=True, reject_on_worker_lost=True)
def embed_claims(claim_ids: list[str]) -> int:
    """Embed one batch of claims."""
    return claims_embed(claim_ids=claim_ids)


@shared_task(name="memory.embed_pending", acks_late=True, reject_on_worker_lost=True)
def embed_pending() -> int:
    """Beat's safety net: embed active claims whose message was lost or whose worker died."""
    return claims_embed_pending()
