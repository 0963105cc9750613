"""Writes of claim and event embeddings: embed after commit, in batches; find what was
missed; erase.

State lives in PostgreSQL: a claim or a recent event without an embedding of the
current model (or with one of older text) is work, whoever enqueued it and whenever, so a
lost message or a killed worker only delays semantic recall. Until then
recall and ledger search still find it lexically.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

import numpy as np
from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from common.rows import fetch_bound
from memory.claims.embedders import embedder, embedding_digest, embedding_document, pack_vector
from memory.claims.models import Claim, ClaimEmbedding, ClaimStatus, Event, EventEmbedding

# Claims that can never be recalled are not worth a model call.
UNEMBEDDED_STATUSES = (ClaimStatus.ERASED, ClaimStatus.REJECTED)


def _enqueue(task: str, ids: Iterable[UUID | str]) -> int:
    """Wake an embedding worker for these rows, one task per batch. Returns the tasks sent."""
    if embedder() is None:
        return 0
    names = [str(row_id) for row_id in ids]
    size = max(1, settings.EMBED_BATCH_SIZE)
    batches = [names[start : start + size] for start in range(0, len(names), size)]
    for batch in batches:
        # By name: the tasks module imports this one, never the other way round.
        current_app.signature(task, args=[batch], queue=settings.EMBED_QUEUE).apply_async()
    return len(batches)


def embeddings_enqueue(*, claim_ids: Iterable[UUID | str]) -> int:
    """Wake an embedding worker for these claims. Returns the tasks sent."""
    return _enqueue("memory.embed_claims", claim_ids)


def embeddings_enqueue_on_commit(*, claim_ids: list[Any]) -> None:
    # robust: the claim is committed whatever happens to the broker; the
    # pending sweep finds it from the rows if this message is lost.
    transaction.on_commit(lambda: embeddings_enqueue(claim_ids=claim_ids), robust=True)


def event_embeddings_enqueue_on_commit(*, event_ids: list[Any]) -> None:
    # As for claims: the sweep re-finds a recent event whose message was lost.
    transaction.on_commit(lambda: _enqueue("memory.embed_events", event_ids), robust=True)


def claims_embed(*, claim_ids: Iterable[UUID | str]) -> int:
    """Embed these claims with the configured model unless already current. Returns how many."""
    model = embedder()
    if model is None:
        return 0
    claims = list(
        Claim.objects.filter(pk__in=list(claim_ids))
        .exclude(status__in=UNEMBEDDED_STATUSES)
        .values("id", "tenant_id", "predicate", "text", "value", "recorded_at")
    )
    documents = {
        c["id"]: embedding_document(predicate=c["predicate"], text=c["text"], value=c["value"])
        for c in claims
    }
    current = set(
        ClaimEmbedding.objects.filter(claim_id__in=documents, model=model.model).values_list(
            "claim_id", "digest"
        )
    )
    todo = [
        c
        for c in claims
        if documents[c["id"]] and (c["id"], embedding_digest(documents[c["id"]])) not in current
    ]
    if not todo:
        return 0
    vectors = model.embed([documents[c["id"]] for c in todo])
    now = timezone.now()
    with transaction.atomic():
        # A claim erased while the model ran keeps no vector of its old text.
        still_there = set(
            Claim.objects.filter(pk__in=[c["id"] for c in todo])
            .exclude(status__in=UNEMBEDDED_STATUSES)
            .select_for_update()
            .values_list("id", flat=True)
        )
        kept = [n for n, c in enumerate(todo) if c["id"] in still_there]
        if kept:
            _claim_embeddings_upsert(
                claims=[todo[n] for n in kept],
                vectors=vectors[kept],
                digests=[embedding_digest(documents[todo[n]["id"]]) for n in kept],
                model_name=model.model,
                now=now,
            )
    return len(kept)


# One statement for a whole batch: the rows travel as arrays (the float copies as one
# flat array, each row's slice taken in the database) instead of one VALUES row each.
_UPSERT_EMBEDDINGS = f"""
    INSERT INTO {ClaimEmbedding._meta.db_table}
        (tenant_id, claim_id, model, dim, vector, packed, digest, embedded_at, lag_seconds)
    SELECT row.tenant_id, row.claim_id, %(model)s, %(dim)s,
           (%(flat)s::float8[])[(row.n - 1) * %(dim)s + 1 : row.n * %(dim)s],
           row.packed, row.digest, %(now)s, row.lag_seconds
    FROM unnest(%(tenants)s::bigint[], %(claims)s::uuid[], %(packed)s::bytea[],
                %(digests)s::varchar[], %(lags)s::float8[])
         WITH ORDINALITY AS row(tenant_id, claim_id, packed, digest, lag_seconds, n)
    ON CONFLICT (claim_id, model) DO UPDATE SET
        dim = EXCLUDED.dim, vector = EXCLUDED.vector, packed = EXCLUDED.packed,
        digest = EXCLUDED.digest, embedded_at = EXCLUDED.embedded_at,
        lag_seconds = EXCLUDED.lag_seconds
"""  # noqa: S608 - the table name is a constant; every value is a parameter


def _claim_embeddings_upsert(
    *,
    claims: Sequence[Mapping[str, Any]],
    vectors: np.ndarray,
    digests: list[str],
    model_name: str,
    now: datetime,
) -> None:
    """Write (or replace) these claims' vectors of `model_name` in one statement."""
    fetch_bound(
        _UPSERT_EMBEDDINGS + " RETURNING 1",
        {
            "model": model_name,
            "dim": int(vectors.shape[1]),
            "flat": vectors.astype(np.float64).ravel().tolist(),
            "now": now,
            "tenants": [c["tenant_id"] for c in claims],
            "claims": [c["id"] for c in claims],
            "packed": [pack_vector(vector) for vector in vectors],
            "digests": digests,
            "lags": [max(0.0, (now - c["recorded_at"]).total_seconds()) for c in claims],
        },
    )


def claims_pending_embedding(*, limit: int) -> list[UUID]:
    """Active claims with no embedding of the current model, oldest first."""
    model = embedder()
    if model is None:
        return []
    has_embedding = ClaimEmbedding.objects.filter(claim=OuterRef("pk"), model=model.model)
    return list(
        Claim.objects.filter(status=ClaimStatus.ACTIVE)
        .filter(~Exists(has_embedding))
        .order_by("recorded_at")
        .values_list("id", flat=True)[:limit]
    )


def claims_embed_pending(*, limit: int = 10_000) -> int:
    """Embed every active claim still missing a vector (the sweep and the backfill)."""
    done = 0
    while True:
        pending = claims_pending_embedding(limit=min(limit - done, settings.EMBED_BATCH_SIZE))
        if not pending:
            return done
        embedded = claims_embed(claim_ids=pending)
        done += len(pending)
        if embedded == 0 or done >= limit:
            return done


def claims_embed_refresh() -> int:
    """Embed again every active claim whose vector was made from other text (its digest
    differs), in batches by id. Returns how many were embedded."""
    if embedder() is None:
        return 0
    done = 0
    after = None
    size = max(1, settings.EMBED_BATCH_SIZE)
    while True:
        batch = Claim.objects.filter(status=ClaimStatus.ACTIVE).order_by("id")
        if after is not None:
            batch = batch.filter(id__gt=after)
        ids = list(batch.values_list("id", flat=True)[:size])
        if not ids:
            return done
        done += claims_embed(claim_ids=ids)
        after = ids[-1]


def claim_embeddings_delete_where(*, tenant_id: int, match: tuple[str, list[Any]]) -> int:
    """Erasure's statement: drop the vectors of the claims a SQL condition on `claim_id` names.

    Erased claims are wiped, not deleted, so the foreign key's cascade never
    fires; their vectors encode the erased text and must go with it.
    """
    condition, params = match
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {ClaimEmbedding._meta.db_table} WHERE tenant_id = %s AND {condition}",  # noqa: S608
            [tenant_id, *params],
        )
        deleted: int = cursor.rowcount
        return deleted


def events_embed(*, event_ids: Iterable[UUID | str]) -> int:
    """Embed these events' text with the configured model unless already current. Returns
    how many were embedded. A redacted or textless event is never embedded."""
    model = embedder()
    if model is None:
        return 0
    events = list(
        Event.objects.filter(pk__in=list(event_ids), redacted_at__isnull=True)
        .exclude(text="")
        .values("id", "tenant_id", "text", "recorded_at")
    )
    current = set(
        EventEmbedding.objects.filter(
            event_id__in=[e["id"] for e in events], model=model.model
        ).values_list("event_id", "digest")
    )
    todo = [e for e in events if (e["id"], embedding_digest(e["text"])) not in current]
    if not todo:
        return 0
    vectors = model.embed([e["text"] for e in todo])
    now = timezone.now()
    with transaction.atomic():
        # Redaction or a scrub while the model ran changed the words: no vector of the
        # old ones is written (the lock waits for such a change to commit).
        text_now = dict(
            Event.objects.filter(pk__in=[e["id"] for e in todo], redacted_at__isnull=True)
            .select_for_update()
            .values_list("id", "text")
        )
        rows = [
            EventEmbedding(
                tenant_id=e["tenant_id"],
                event_id=e["id"],
                model=model.model,
                dim=len(vector),
                packed=pack_vector(vector),
                digest=embedding_digest(e["text"]),
                embedded_at=now,
                lag_seconds=max(0.0, (now - e["recorded_at"]).total_seconds()),
            )
            for e, vector in zip(todo, vectors, strict=True)
            if text_now.get(e["id"]) == e["text"]
        ]
        EventEmbedding.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["event", "model"],
            update_fields=["dim", "packed", "digest", "embedded_at", "lag_seconds"],
        )
    return len(rows)


def events_pending_embedding(
    *, limit: int, since: datetime | None = None, after: tuple[datetime, UUID] | None = None
) -> list[tuple[datetime, UUID]]:
    """Events with text and no vector of the current model, in the order they were
    recorded: those recorded since `since` (the sweep's window) or after the `after`
    position (the backfill's cursor). Returns (recorded_at, id) pairs."""
    model = embedder()
    if model is None:
        return []
    has_embedding = EventEmbedding.objects.filter(event=OuterRef("pk"), model=model.model)
    events = Event.objects.filter(redacted_at__isnull=True).exclude(text="")
    if since is not None:
        events = events.filter(recorded_at__gte=since)
    if after is not None:
        # The first condition alone lets the block-range index skip what came before.
        events = events.filter(recorded_at__gte=after[0]).filter(
            Q(recorded_at__gt=after[0]) | Q(id__gt=after[1])
        )
    return list(
        events.filter(~Exists(has_embedding))
        .order_by("recorded_at", "id")
        .values_list("recorded_at", "id")[:limit]
    )


def events_embed_pending(*, limit: int = 10_000, since: datetime | None = None) -> int:
    """Embed events still missing a vector, oldest first: those recorded since `since`
    (the sweep), or all of them (the backfill); at most `limit` looked at. Returns how
    many were embedded."""
    done = embedded = 0
    after = None
    while done < limit:
        pending = events_pending_embedding(
            limit=min(limit - done, settings.EMBED_BATCH_SIZE), since=since, after=after
        )
        if not pending:
            break
        embedded += events_embed(event_ids=[event_id for _, event_id in pending])
        done += len(pending)
        # Past this batch whatever happened to it: an event whose text changed while the
        # model ran is the next sweep's, so the loop always ends.
        after = pending[-1]
    return embedded
