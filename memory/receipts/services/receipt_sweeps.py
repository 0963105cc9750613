"""Periodic sweeps over receipts: lapsed submit leases, and receipts due for a read.

Beat runs them; they find the work from the rows, so a wake-up lost with the
broker costs only a delay.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memory.receipts.models.receipts import Receipt, ReceiptState
from memory.receipts.services.receipt_moves import (
    receipt_move,
    reconciliation_enqueue,
    reconciliation_enqueue_on_commit,
)
from memory.receipts.services.receipt_reads import receipts_due


def receipts_expire_submit_leases(
    *, now: datetime | None = None, limit: int = 500, enqueue: bool = True
) -> list[UUID]:
    """Mark `outcome_unknown` every submitted receipt whose agent never reported back."""
    now = now or timezone.now()
    sweeper = Actor.system("submit-lease sweep")
    with transaction.atomic():
        expired = list(
            Receipt.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant")
            .filter(state=ReceiptState.SUBMITTED, submit_lease_expires_at__lte=now)
            .order_by("submit_lease_expires_at")[:limit]
        )
        for receipt in expired:
            receipt_move(
                receipt,
                to=ReceiptState.OUTCOME_UNKNOWN,
                actor=sweeper,
                now=now,
                reason="submit_lease_expired",
            )
        ids = [receipt.pk for receipt in expired]
        if ids and enqueue:
            reconciliation_enqueue_on_commit(ids)
    return ids


def receipts_due_ids(*, now: datetime | None = None, limit: int | None = None) -> list[UUID]:
    """Receipts of every tenant whose next read is due and unclaimed, oldest first.

    The workers serve all tenants, so this is deliberately not tenant-scoped;
    it returns ids only, and each claim re-checks everything under a lock.
    """
    now = now or timezone.now()
    limit = limit or settings.RECONCILE_CHUNK_SIZE * 20
    return list(
        Receipt.objects.filter(receipts_due(now))
        .order_by("next_reconcile_at")
        .values_list("pk", flat=True)[:limit]
    )


def receipts_dispatch_due(*, now: datetime | None = None, limit: int | None = None) -> int:
    """Enqueue chunks for every due receipt. Returns how many receipts were dispatched.

    A receipt may already have a message waiting (its on-commit wake-up); the
    duplicate costs one skipped claim, which is cheaper than tracking messages.
    """
    ids = receipts_due_ids(now=now, limit=limit)
    if ids:
        reconciliation_enqueue(receipt_ids=ids)
    return len(ids)
