"""Celery tasks of the privacy domain: deletion propagation, consolidation, retention,
and "download my data" (one export, and beat's sweep).

Tasks carry ids only; the rows hold the work. A deletion or export message delivered
twice finds its request leased or finished; a lost one is found again by its sweep.
Consolidation is idempotent, so a repeated pass is free.
"""

from __future__ import annotations

import logging
import os
import socket

from celery import shared_task

from accounts.actors import Actor
from accounts.models import Tenant
from memory.privacy.models import ConsolidationTrigger
from memory.privacy.services.consolidation import consolidation_run, consolidation_run_all
from memory.privacy.services.deletion import deletion_run, deletions_dispatch_due
from memory.privacy.services.exports import export_run, exports_dispatch_due, exports_expire
from memory.privacy.services.retention import retention_sweep_all

logger = logging.getLogger(__name__)


def lifecycle_actor() -> Actor:
    """Who propagates deletions in this process, as audit rows will show it."""
    return Actor.system(f"lifecycle {socket.gethostname()}:{os.getpid()}")


# acks_late + reject_on_worker_lost: a request whose worker dies is delivered
# again; the attempt counter fences the dead worker and caps a poison request.
@shared_task(name="memory.deletion_run", acks_late=True, reject_on_worker_lost=True)
def deletion_run_task(deletion_id: str) -> str | None:
    """Propagate and verify one deletion request."""
    deletion = deletion_run(deletion_id=deletion_id, worker=lifecycle_actor())
    if deletion is None:
        return None
    logger.info(
        "deletion finished",
        extra={
            "deletion": str(deletion.pk),
            "status": deletion.status,
            "clean": deletion.report.get("clean"),
        },
    )
    return deletion.status


@shared_task(name="memory.deletions_dispatch_due", acks_late=True, reject_on_worker_lost=True)
def dispatch_due_deletions() -> int:
    """Beat's safety net: wake a worker for every unfinished request without a live lease."""
    return deletions_dispatch_due()


@shared_task(name="memory.consolidate", acks_late=True, reject_on_worker_lost=True)
def consolidate(tenant_id: int | None = None, trigger: str = ConsolidationTrigger.BEAT) -> dict:
    """One consolidation pass over one tenant, or over every tenant."""
    if tenant_id is None:
        runs = consolidation_run_all(trigger=trigger)
    else:
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        runs = [] if tenant is None else [consolidation_run(tenant=tenant, trigger=trigger)]
    return {str(run.tenant_id): run.changes.get("counts", {}) for run in runs}


@shared_task(name="memory.retention_sweep", acks_late=True, reject_on_worker_lost=True)
def retention_sweep_task() -> int:
    """Ask for the deletion of every claim, event and recall trace past its tenant's
    retention period; the deletions run on the lifecycle workers as any other.
    Returns how many were asked."""
    sweeps = retention_sweep_all(actor=Actor.system("retention"))
    return sum(len(sweep.deletions) for sweep in sweeps)


@shared_task(name="memory.export_run", acks_late=True, reject_on_worker_lost=True)
def export_run_task(export_id: str) -> str | None:
    """Produce one export."""
    export = export_run(export_id=export_id)
    return None if export is None else export.status


@shared_task(name="memory.exports_sweep", acks_late=True, reject_on_worker_lost=True)
def exports_sweep() -> dict[str, int]:
    """Empty exports past their retention; wake a worker for exports whose message was lost."""
    return {"expired": exports_expire(), "dispatched": exports_dispatch_due()}
