"""Reconciliation with real Celery workers, the test database and the fake platform.

Workers are separate processes started with short leases from the environment.
The test process plays the agent and Celery beat: beat's only job is to send
the sweep task on a schedule, so the test sends it the same way, just sooner.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from datetime import timedelta

import httpx
import pytest
from django.db.models import Count, Q
from django.utils import timezone

from memory.receipts.models.receipts import (
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
)
from memory.receipts.services.receipt_sweeps import receipts_expire_submit_leases
from memory.receipts.tasks import dispatch_due_reconciliations
from testing.fake_platform import WRITE_COMMIT_THEN_DROP
from tests.memory.conftest import WorkerProcess, http_reconciler

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

S = ReceiptState
UNSETTLED = (S.OUTCOME_UNKNOWN, S.RECONCILING)
LEASE_SECONDS = 2  # what `celery_workers` gives the worker processes


def wait_for(condition: Callable[[], bool], timeout: float, every: float = 0.05) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(every)
    return time.monotonic() - started


def test_an_unknown_outcome_is_reconciled_within_seconds(celery_workers, platform, agent):
    worker = celery_workers.start()
    key = "pub-worker-1"
    receipt = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": f"{platform.url}/articles",
            "intent": {"title": "Receipts before calls"},
            "idempotency_key": key,
            "reconciler": http_reconciler(platform, proven_by="status_lookup"),
        },
        format="json",
    ).json()
    agent.post(f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json")
    platform.write_mode = WRITE_COMMIT_THEN_DROP
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{platform.url}/articles", json={}, headers={"Idempotency-Key": key})
    worker.wait_ready()
    reported = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "outcome_unknown", "error_code": "connection_dropped"},
        format="json",
    )
    assert reported.status_code == 200
    # Nothing but the commit of that report told the worker: no sweep runs here.
    elapsed = wait_for(
        lambda: Receipt.objects.get(pk=receipt["id"]).state == S.SUCCEEDED, timeout=10
    )
    assert elapsed < 5, worker.log()
    settled = Receipt.objects.get(pk=receipt["id"])
    assert settled.external_id == platform.articles[key]["id"]
    assert platform.writes_committed == 1
    assert platform.requests["POST"] == 1  # the agent's write; the worker only read


ROUNDS = 8
CHUNK = 6
# Victims alternate, two rounds each, between reading one receipt at a time and claiming a
# batch and reading it at once, while the kind of kill alternates every round: each pairing
# of read mode and kill comes up twice in one test.
READS_IN_FLIGHT = ("1", "4")


@pytest.mark.slow
# A kill lands before, between or in the middle of a batch's reads.
def test_a_worker_killed_mid_chunk_loses_nothing_and_settles_nothing_twice(
    celery_workers, platform, make_receipt, settings
):
    seed = int(os.environ.get("RECONCILE_KILL_SEED") or random.randrange(2**32))
    rng = random.Random(seed)
    context = f"seed={seed} (rerun with RECONCILE_KILL_SEED={seed})"
    platform.read_delay = 0.15  # each read is slow enough to be killed in the middle of
    survivor = celery_workers.start()
    main_queue = celery_workers.queue
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    settled_by_victims = 0
    taken_over = 0  # receipts whose claim died with a worker and was claimed again

    def start_victim(round_: int) -> tuple[str, WorkerProcess]:
        queue = celery_workers.new_queue()
        reads_in_flight = READS_IN_FLIGHT[round_ // 2 % 2]
        return queue, celery_workers.start(queue=queue, RECONCILE_READS_IN_FLIGHT=reads_in_flight)

    # Each round's victim boots while the round before waits out its lease: a worker
    # takes seconds to start, and an idle one on a queue of its own changes nothing.
    next_victim = start_victim(0)
    for round_ in range(ROUNDS):
        victim_queue, victim = next_victim
        receipts = [make_receipt(S.SUBMITTED, reconciler=reconciler) for _ in range(CHUNK)]
        expected = {}
        for n, receipt in enumerate(receipts):
            if n % 2 == 0:
                platform.seed(receipt.idempotency_key)
                expected[receipt.pk] = S.SUCCEEDED
            else:
                expected[receipt.pk] = S.SAFE_TO_RETRY
        victim.wait_ready()

        # The agent never reported back: the lease sweep finds the receipts and
        # wakes one worker with the whole chunk.
        reads_before = platform.reads
        settings.RECONCILE_QUEUE = victim_queue
        Receipt.objects.filter(pk__in=expected).update(
            submit_lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        lapsed = receipts_expire_submit_leases()
        assert sorted(lapsed) == sorted(expected), context

        # The read after the `kill_after`-th is held unanswered, so the kill lands with it
        # in flight and the reads before it answered, in flight or not yet sent.
        kill_after = rng.randint(1, CHUNK - 1)
        platform.hold_reads_after(reads_before + kill_after)
        wait_for(lambda k=kill_after, start=reads_before: platform.reads - start > k, timeout=15)
        time.sleep(rng.uniform(0, 0.12))
        if round_ % 2 == 0:
            victim.kill()  # the whole worker dies; its chunk stays unacknowledged
        else:
            victim.kill_pool_child()  # the task's process dies; the chunk is redelivered
        settled_now = Receipt.objects.filter(pk__in=expected).exclude(state__in=UNSETTLED)
        assert settled_now.count() < CHUNK, f"a held read was answered; {context}"
        platform.release_reads()
        settled_by_victims += settled_now.count()
        if round_ + 1 < ROUNDS:
            next_victim = start_victim(round_ + 1)

        # Beat's sweep, sent until the chunk is done. A claim the dead worker
        # held is only taken over once its lease has run out.
        def all_settled(ids: tuple = tuple(expected)) -> bool:
            dispatch_due_reconciliations.apply_async(queue=main_queue)
            return not Receipt.objects.filter(pk__in=ids, state__in=UNSETTLED).exists()

        try:
            wait_for(all_settled, timeout=LEASE_SECONDS + 20, every=0.5)
        except TimeoutError:
            pytest.fail(f"round {round_}: receipts left unsettled; {context}\n{survivor.log()}")
        victim.kill()

        receipts_now = {r.pk: r for r in Receipt.objects.filter(pk__in=expected)}
        assert {pk: r.state for pk, r in receipts_now.items()} == expected, context
        for receipt in receipts_now.values():
            if receipt.state == S.SUCCEEDED:
                assert receipt.external_id == platform.articles[receipt.idempotency_key]["id"]
            assert 1 <= receipt.reconcile_attempts <= 2, context
            taken_over += receipt.reconcile_attempts == 2
        moves = (
            ReceiptTransition.objects.filter(receipt_id__in=expected)
            .values("receipt_id")
            .annotate(
                started=Count("id", filter=Q(to_state=S.RECONCILING)),
                settled=Count("id", filter=Q(from_state=S.RECONCILING)),
            )
        )
        assert {(m["started"], m["settled"]) for m in moves} == {(1, 1)}, context
        reads = (
            ReconciliationRead.objects.filter(receipt_id__in=expected)
            .values("receipt_id")
            .annotate(n=Count("id"))
        )
        assert {r["n"] for r in reads} == {1}, context  # no second verdict was recorded

    assert settled_by_victims < ROUNDS * CHUNK  # the survivor had work every round
    assert taken_over >= 1, context  # some kill landed mid-read and its lease was taken over
    assert platform.writes_attempted == 0  # reconciliation sent reads and nothing else
    assert platform.writes_committed == 0
    assert platform.reads >= ROUNDS * CHUNK
