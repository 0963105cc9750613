"""Verification: run a deletion's probes and complete the request with its report."""

from __future__ import annotations

import time
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.hot_memory import hot_memory_purge
from memory.privacy.models import DeletionRequest, DeletionScope, DeletionStatus
from memory.privacy.selectors.probes import deletion_probes
from memory.privacy.services.deletion_leases import (
    DeletionLease,
    deletion_locked_for,
    deletion_move,
    deletion_review_open,
)
from memory.privacy.services.deletion_propagate import Propagation


def deletion_verify(
    *,
    lease: DeletionLease,
    worker: Actor,
    propagation: Propagation | None,
    now: datetime | None = None,
) -> DeletionRequest | None:
    """Purge hot memory once more, run the probes and complete the request with its report.

    A report with a dirty probe keeps the request out of `completed`: it waits
    in `needs_review` with a `deletions` review item until an editor resolves it.
    """
    started = time.perf_counter()
    deletion = (
        DeletionRequest.objects.select_related("tenant", "subject").filter(pk=lease.deletion_id)
    ).first()
    if deletion is None or deletion.status != DeletionStatus.VERIFYING:
        return None
    subjects = {deletion.subject_id, *deletion.report.get("subjects", [])}
    # A block rendered by a reader that started before the wipe committed may
    # have been written after the first purge.
    purged_late = hot_memory_purge(tenant_id=deletion.tenant_id, subject_ids=subjects)
    probes = deletion_probes(
        tenant=deletion.tenant,
        deletion=deletion,
        terms=propagation.terms
        if propagation is not None
        # A records deletion has no words to lose: it redacts its rows whole.
        else ([] if deletion.scope == DeletionScope.RECORDS else None),
    )
    now = now or timezone.now()
    with transaction.atomic():
        deletion = deletion_locked_for(lease, DeletionStatus.VERIFYING)
        if deletion is None:
            return None
        clean = all(probe["clean"] for probe in probes)
        report = dict(deletion.report)
        artifacts = dict(report.get("artifacts", {}))
        artifacts["hot_memory"] = {
            "cache_keys_purged": purged_late
            + (propagation.hot_memory_keys_purged if propagation else 0)
        }
        report.update(
            artifacts=artifacts,
            probes=probes,
            clean=clean,
            timings_ms={
                "propagate": propagation.elapsed_ms if propagation else None,
                "verify": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        deletion.report = report
        deletion.lease_expires_at = None
        deletion.finished_at = now if clean else None
        dirty = [probe["name"] for probe in probes if not probe["clean"]]
        deletion_move(
            deletion,
            to=DeletionStatus.COMPLETED if clean else DeletionStatus.NEEDS_REVIEW,
            actor=worker,
            now=now,
            reason="clean" if clean else "dirty_probes",
            data={"clean": clean, "dirty": dirty},
        )
        deletion.save(
            update_fields=["status", "report", "lease_expires_at", "finished_at", "updated_at"]
        )
        if not clean:
            # Where the copies are (table and column, never the content): the item says.
            found = [
                f"found:{finding['table']}.{finding['column']}"
                for probe in probes
                for finding in probe["result"].get("findings", [])
            ]
            deletion_review_open(
                deletion, [f"dirty:{name}" for name in dirty] + list(dict.fromkeys(found))[:10]
            )
    return deletion
