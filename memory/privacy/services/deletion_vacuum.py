"""VACUUM of the tables a deletion touched, on a database connection of its own.

Until VACUUM runs, the old row versions the erasure left behind still hold the
content in the table files. VACUUM cannot run inside a transaction and takes
about as long as the probes, which only read: so it starts as soon as the
erasure is committed, on a second connection, while the probes run on the
first, and the report says when it finished.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from memory.privacy.models import DeletionRequest

logger = logging.getLogger(__name__)

SKIPPED_IN_TRANSACTION = "inside a transaction; autovacuum removes them"


def tables_to_vacuum(report: dict[str, Any]) -> list[str] | None:
    """The tables a deletion's report still asks to vacuum; None once done (or never asked)."""
    dead = (report.get("horizon") or {}).get("dead_row_versions") or {}
    if not dead or dead.get("vacuumed_at"):
        return None
    return list(dead.get("tables", []))


@dataclass
class DeletionVacuum:
    """One VACUUM of `tables`, under way on its own connection unless `skipped` says why not."""

    deletion_id: Any
    tables: list[str]
    skipped: str = ""
    finished_at: datetime | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        try:
            if self.tables:
                own = connections.create_connection(DEFAULT_DB_ALIAS)
                try:
                    with own.cursor() as cursor:
                        # One statement: PostgreSQL still vacuums each table in its own
                        # transaction, but the worker waits once.
                        cursor.execute(
                            "VACUUM " + ", ".join(own.ops.quote_name(t) for t in self.tables)
                        )
                finally:
                    own.close()
            self.finished_at = timezone.now()
        except Exception:
            # The erasure is done and verified; autovacuum still removes the old versions.
            logger.exception("deletion vacuum failed", extra={"deletion": str(self.deletion_id)})


def deletion_vacuum_start(*, deletion_id: Any, tables: list[str]) -> DeletionVacuum:
    """Start vacuuming `tables` beside whatever this connection does next."""
    if connection.in_atomic_block:
        # The erasure commits with the caller's transaction: another connection would
        # find nothing to remove yet, and this one cannot run VACUUM.
        return DeletionVacuum(deletion_id, tables, skipped=SKIPPED_IN_TRANSACTION)
    vacuum = DeletionVacuum(deletion_id, tables)
    vacuum._thread = threading.Thread(target=vacuum._run, name="deletion-vacuum", daemon=True)
    vacuum._thread.start()
    return vacuum


def deletion_vacuum_record(*, deletion: DeletionRequest, vacuum: DeletionVacuum) -> DeletionRequest:
    """Wait for the VACUUM and write in the report when it finished, or why it did not run.
    A VACUUM that failed leaves the report as it was (autovacuum still comes)."""
    vacuum.wait()
    horizon = dict(deletion.report.get("horizon") or {})
    dead = dict(horizon.get("dead_row_versions") or {})
    if not dead or dead.get("vacuumed_at"):
        return deletion
    if vacuum.skipped:
        dead["skipped"] = vacuum.skipped
    elif vacuum.finished_at is not None:
        dead["vacuumed_at"] = vacuum.finished_at.isoformat()
    else:
        return deletion
    horizon["dead_row_versions"] = dead
    deletion.report = {**deletion.report, "horizon": horizon}
    DeletionRequest.objects.filter(pk=deletion.pk).update(report=deletion.report)
    return deletion
