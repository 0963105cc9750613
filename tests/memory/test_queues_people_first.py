"""Queues that keep people first: bulk embedding has a queue and a worker of its own, so
a deletion a person asked for never waits behind a backlog of embeddings, and the
pending sweep embeds a bounded slice and enqueues itself again rather than holding its
worker (docs/operations.md, "Queues and workers"). Real Celery workers and Redis."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis
from celery import current_app
from django.conf import settings as django_settings

from memory.claims.models import ClaimEmbedding
from memory.claims.tasks import embed_pending
from memory.privacy.models import DeletionRequest, DeletionStatus
from tests.memory.helpers import candidate, submit

pytestmark = [pytest.mark.django_db(transaction=True)]

FLOOD = 400


def queued(queue: str) -> int:
    """Messages waiting on a queue in the broker (kombu keeps one Redis list per queue)."""
    return redis.Redis.from_url(django_settings.CELERY_BROKER_URL).llen(queue)


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(0.05)


@pytest.mark.worker
def test_a_deletion_completes_while_a_backlog_of_embedding_is_still_queued(
    celery_workers, settings, agent, alice, session_api
):
    people = celery_workers.queue
    bulk = celery_workers.new_queue()
    settings.LIFECYCLE_QUEUE = people
    settings.EMBED_QUEUE = bulk
    celery_workers.env.update(LIFECYCLE_QUEUE=people, EMBED_QUEUE=bulk)
    claim = submit(agent, predicate="locker", value="blue", text="Alice's locker is blue")
    notes = [
        submit(agent, predicate=f"note_{n}", value=str(n), text=f"Alice wrote note {n}")["id"]
        for n in range(8)
    ]
    # A backlog of bulk work: each message embeds the notes again.
    for _ in range(FLOOD):
        current_app.signature("memory.embed_claims", args=[notes], queue=bulk).apply_async()
    bulk_worker = celery_workers.start(queue=bulk)
    people_worker = celery_workers.start(queue=people)
    bulk_worker.wait_ready()
    people_worker.wait_ready()

    accepted = session_api(alice).delete(f"/api/v1/me/memories/{claim['id']}")
    assert accepted.status_code == 202, accepted.json()
    deletion_id = accepted.json()["deletion"]
    wait_for(
        lambda: DeletionRequest.objects.get(pk=deletion_id).status == DeletionStatus.COMPLETED,
        timeout=60,
    )

    # Done while most of the bulk backlog still waits: nothing of it stood in front.
    assert queued(bulk) > FLOOD // 2, bulk_worker.log()
    done = DeletionRequest.objects.get(pk=deletion_id)
    assert done.started_at is not None and done.finished_at is not None
    assert ClaimEmbedding.objects.filter(claim_id__in=notes).exists(), bulk_worker.log()


def test_the_pending_sweep_embeds_a_slice_and_enqueues_itself_for_the_rest(
    celery_workers, settings, agent
):
    bulk = celery_workers.new_queue()
    settings.EMBED_QUEUE = bulk
    settings.EMBED_SWEEP_SLICE = 5
    settings.EMBED_BATCH_SIZE = 5
    ids = [
        submit(agent, predicate=f"note_{n}", value=str(n), text=f"Alice wrote note {n}")["id"]
        for n in range(12)
    ]
    drained = queued(bulk)  # the on-commit embedding messages of the writes above
    redis.Redis.from_url(django_settings.CELERY_BROKER_URL).delete(bulk)
    assert drained >= 1

    assert embed_pending() >= 5  # five claims, and as many of their source events
    assert ClaimEmbedding.objects.filter(claim_id__in=ids).count() == 5
    assert queued(bulk) == 1  # the sweep again, for the 7 still pending

    worker = celery_workers.start(queue=bulk)
    wait_for(lambda: ClaimEmbedding.objects.filter(claim_id__in=ids).count() == 12, timeout=60)
    wait_for(lambda: queued(bulk) == 0, timeout=30)
    assert "memory.embed_pending" in worker.log()


# The most a deletion may wait for a worker to start it (enqueued -> started).
DELETION_QUEUE_WAIT_SECONDS = 2.0


@pytest.mark.worker
def test_a_deletion_starts_within_two_seconds_behind_a_flood_of_embedding_work(
    celery_workers, settings, agent, alice, session_api, record_property
):
    people = celery_workers.queue
    bulk = celery_workers.new_queue()
    settings.LIFECYCLE_QUEUE = people
    settings.EMBED_QUEUE = bulk
    celery_workers.env.update(LIFECYCLE_QUEUE=people, EMBED_QUEUE=bulk)
    claim = submit(agent, predicate="locker", value="blue", text="Alice's locker is blue")
    items = [
        candidate(predicate=f"note_{n}", value=str(n), text=f"Alice wrote note {n} on the report")
        for n in range(48)
    ]
    stored = agent.post("/api/v1/claims:batch", {"items": items}, format="json")
    assert stored.status_code == 200, stored.json()
    notes = [result["id"] for result in stored.json()["results"]]
    # Real embedding work first (the notes have no vectors yet), then a long tail of it.
    chunks = [notes[start : start + 8] for start in range(0, len(notes), 8)]
    for n in range(FLOOD):
        current_app.signature(
            "memory.embed_claims", args=[chunks[n % len(chunks)]], queue=bulk
        ).apply_async()
    # The workers as `make run` starts them: two for people's work, one for bulk work.
    bulk_worker = celery_workers.start(queue=bulk, concurrency=1)
    people_worker = celery_workers.start(queue=people, concurrency=2)
    bulk_worker.wait_ready()
    people_worker.wait_ready()
    wait_for(lambda: ClaimEmbedding.objects.filter(claim_id__in=notes).exists(), timeout=120)

    accepted = session_api(alice).delete(f"/api/v1/me/memories/{claim['id']}")
    assert accepted.status_code == 202, accepted.json()
    deletion_id = accepted.json()["deletion"]
    wait_for(
        lambda: DeletionRequest.objects.get(pk=deletion_id).status == DeletionStatus.COMPLETED,
        timeout=60,
    )

    done = DeletionRequest.objects.get(pk=deletion_id)
    assert done.started_at is not None
    waited = (done.started_at - done.created_at).total_seconds()
    record_property("deletion_queue_wait_seconds", round(waited, 3))
    assert 0 <= waited <= DELETION_QUEUE_WAIT_SECONDS, (waited, people_worker.log())
    # The bulk worker was busy the whole time: its backlog still waits.
    assert queued(bulk) > 0, bulk_worker.log()
