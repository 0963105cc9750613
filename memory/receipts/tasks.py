"""Celery tasks for receipts. They carry ids only; the rows hold the work.

Each task re-reads the database and calls services that are safe to run
twice: a chunk delivered again after a crash skips receipts already settled
or still leased, so redelivery costs a few queries and never a second verdict.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import Counter

from celery import shared_task
from django.conf import settings

from accounts.actors import Actor
from memory.receipts.services.checkpoints import checkpoints_sweep_expired
from memory.receipts.services.receipt_moves import reconciliation_enqueue
from memory.receipts.services.receipt_sweeps import (
    receipts_dispatch_due,
    receipts_expire_submit_leases,
)
from memory.receipts.services.reconciliation import receipts_reconcile_batch
from memory.receipts.services.verifier_controls import platforms_controls_check

logger = logging.getLogger(__name__)


def reconciler_actor() -> Actor:
    """Who settles receipts in this process, as the receipt timeline will show it."""
    return Actor.system(f"reconciler {socket.gethostname()}:{os.getpid()}")


def _chunk_deadline() -> float:
    # Stop claiming new receipts while a whole read still fits before the soft
    # time limit; what is left goes back on the queue as a new chunk.
    budget = settings.CELERY_TASK_SOFT_TIME_LIMIT - 2 * settings.RECONCILE_HTTP_TIMEOUT_SECONDS
    return time.monotonic() + max(budget, settings.RECONCILE_HTTP_TIMEOUT_SECONDS)


# acks_late + reject_on_worker_lost: a chunk whose worker dies is delivered
# again rather than lost (the global settings say the same; the task states it
# because its correctness depends on it).
@shared_task(name="memory.reconcile_receipts", acks_late=True, reject_on_worker_lost=True)
def reconcile_receipts(receipt_ids: list[str]) -> dict:
    """Reconcile a chunk of receipts: claimed, read and settled a batch at a time."""
    report = receipts_reconcile_batch(
        receipt_ids=receipt_ids, worker=reconciler_actor(), deadline=_chunk_deadline()
    )
    if report.unprocessed:
        reconciliation_enqueue(receipt_ids=report.unprocessed)
    logger.info("reconciled a chunk", extra=report.as_dict())
    return report.as_dict()


@shared_task(name="memory.receipts_dispatch_due", acks_late=True, reject_on_worker_lost=True)
def dispatch_due_reconciliations() -> int:
    """Beat's safety net: enqueue every receipt whose next read is due and unclaimed."""
    return receipts_dispatch_due()


@shared_task(
    name="memory.receipts_expire_submit_leases", acks_late=True, reject_on_worker_lost=True
)
def expire_submit_leases() -> int:
    """Beat: submitted receipts whose agent never reported back become outcome_unknown."""
    return len(receipts_expire_submit_leases())


@shared_task(name="memory.checkpoints_sweep_expired", acks_late=True, reject_on_worker_lost=True)
def sweep_expired_checkpoints() -> int:
    """Beat: delete checkpoints past their expiry (recovery already ignores them)."""
    return checkpoints_sweep_expired(actor=Actor.system("checkpoint sweep"))


@shared_task(name="memory.platforms_check_controls", acks_late=True, reject_on_worker_lost=True)
def check_verifier_controls() -> dict[str, int]:
    """Beat: read every platform's verifier controls and record their health."""
    return dict(Counter(run.verdict for run in platforms_controls_check()))
