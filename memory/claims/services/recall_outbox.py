"""Draining pending recall traces (`RECALL_TRACE_WRITE=outbox`, the default).

The recall inserted its trace into `PendingTrace` in its own transaction and, after
commit, sent a message naming it. Writing it here is the same statement the
`worker` and `inline` modes use (`recall_trace_record`: the trace row and the
chosen claims' use counts), then the pending row goes, in one transaction. Draining
twice writes nothing twice: the row is locked (others skip it) and gone once written.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.claims.models import PendingTrace
from memory.claims.services.recall import recall_trace_record

# How old a pending trace must be before beat's sweep writes it: younger, its message
# may still be on its way.
SWEEP_AFTER = timedelta(seconds=10)


def pending_trace_drain(*, trace_id: Any) -> bool:
    """Write one pending trace. False if it is gone (written) or another worker holds it."""
    with transaction.atomic():
        row = PendingTrace.objects.select_for_update(skip_locked=True).filter(pk=trace_id).first()
        if row is None:
            return False
        recall_trace_record(trace=row.trace)
        row.delete()
    return True


def pending_traces_drain(
    *, older_than: timedelta | None = None, tenant_id: int | None = None, limit: int = 1000
) -> int:
    """Write pending traces, oldest first: beat's sweep (those older than `older_than`,
    whose message was lost or is slow) or a deletion (all of its tenant's, before it
    plans, so it finds and redacts them like any written trace). Returns how many."""
    rows = PendingTrace.objects.order_by("created_at")
    if older_than is not None:
        rows = rows.filter(created_at__lt=timezone.now() - older_than)
    if tenant_id is not None:
        rows = rows.filter(tenant_id=tenant_id)
    return sum(
        pending_trace_drain(trace_id=trace_id)
        for trace_id in rows.values_list("pk", flat=True)[:limit]
    )
