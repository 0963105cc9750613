"""Reads of receipts and checkpoints. Every one takes the tenant: forgetting it is a TypeError."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from django.db.models import Prefetch, QuerySet

from accounts.models import Tenant
from common.fingerprints import identifier_forms
from memory.models.receipts import Checkpoint, Receipt, ReceiptTransition, ReconciliationRead


def receipt_get(*, tenant: Tenant, receipt_id: UUID | str) -> Receipt | None:
    return Receipt.objects.filter(tenant=tenant, pk=receipt_id).first()


def receipt_detail(*, tenant: Tenant, receipt_id: UUID | str) -> Receipt | None:
    """A receipt with its timeline: every transition and every reconciliation read."""
    return (
        Receipt.objects.filter(tenant=tenant, pk=receipt_id)
        .prefetch_related(
            Prefetch("transitions", queryset=ReceiptTransition.objects.order_by("at", "id")),
            Prefetch("reads", queryset=ReconciliationRead.objects.order_by("at", "id")),
        )
        .first()
    )


def receipts_list(
    *, tenant: Tenant, state: str | None = None, operation: str | None = None
) -> QuerySet[Receipt]:
    receipts = Receipt.objects.filter(tenant=tenant)
    if state:
        receipts = receipts.filter(state=state)
    if operation:
        receipts = receipts.filter(operation=operation)
    return receipts


def receipts_by_ids(*, tenant: Tenant, receipt_ids: Iterable[UUID | str]) -> list[Receipt]:
    """The tenant's receipts among `receipt_ids`, in the order given; unknown ids are left out."""
    ids = [str(receipt_id) for receipt_id in receipt_ids]
    found = {str(r.pk): r for r in Receipt.objects.filter(tenant=tenant, pk__in=ids)}
    return [found[receipt_id] for receipt_id in ids if receipt_id in found]


def checkpoint_get(*, tenant: Tenant, task_key: str) -> Checkpoint | None:
    """The checkpoint of `task_key`, also once a deletion replaced the key by its digest."""
    return Checkpoint.objects.filter(tenant=tenant, task_key__in=identifier_forms(task_key)).first()


def receipt_by_key(*, tenant: Tenant, idempotency_key: str) -> Receipt | None:
    """The receipt named by `idempotency_key`, also once a deletion replaced the key by
    its digest: a retry after the deletion must find it, not make a second effect."""
    return Receipt.objects.filter(
        tenant=tenant, idempotency_key__in=identifier_forms(idempotency_key)
    ).first()
