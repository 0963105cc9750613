"""Celery tasks for "download my data": produce one export, and beat's sweep.

Tasks carry ids only; the export row holds the work and its lease, so a
message delivered twice finds the export taken or finished, and a lost one
is found again by the sweep.
"""

from __future__ import annotations

from celery import shared_task

from memory.services.exports import export_run, exports_dispatch_due, exports_expire


@shared_task(name="memory.export_run", acks_late=True, reject_on_worker_lost=True)
def export_run_task(export_id: str) -> str | None:
    """Produce one export."""
    export = export_run(export_id=export_id)
    return None if export is None else export.status


@shared_task(name="memory.exports_sweep", acks_late=True, reject_on_worker_lost=True)
def exports_sweep() -> dict[str, int]:
    """Empty exports past their retention; wake a worker for exports whose message was lost."""
    return {"expired": exports_expire(), "dispatched": exports_dispatch_due()}
