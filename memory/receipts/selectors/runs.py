"""Reads of run snapshots. A run belongs to the token that registered it, like a receipt."""

from __future__ import annotations

from uuid import UUID

from django.db.models import Q, QuerySet

from accounts.actors import Actor
from accounts.models import Tenant
from memory.receipts.models.receipts import Checkpoint, Receipt
from memory.receipts.models.runs import Run
from memory.receipts.selectors.receipts import reach


def run_get(*, tenant: Tenant, actor: Actor, run_pk: UUID | str) -> Run | None:
    return Run.objects.filter(reach(actor), tenant=tenant, pk=run_pk).first()


def run_by_name(*, tenant: Tenant, run_id: str) -> Run | None:
    """Whoever registered it; only for deciding whether a registration is a repeat."""
    return Run.objects.filter(tenant=tenant, run_id=run_id).first()


def run_receipts(*, run: Run, actor: Actor) -> QuerySet[Receipt]:
    """The receipts that name the run, or carry its `run_id`, that `actor` reaches."""
    return Receipt.objects.filter(
        Q(registered_run=run) | Q(run_id=run.run_id), reach(actor), tenant_id=run.tenant_id
    ).order_by("created_at", "id")


def run_checkpoints(*, run: Run, actor: Actor) -> QuerySet[Checkpoint]:
    return Checkpoint.objects.filter(
        Q(registered_run=run) | Q(run_id=run.run_id), reach(actor), tenant_id=run.tenant_id
    ).order_by("created_at", "id")
