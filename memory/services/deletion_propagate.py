"""Propagation: erase what a deletion's plan reaches, in one transaction, with its tombstones.

After commit it purges the touched subjects' hot-memory blocks from Redis.
The request moves from `propagating` to `verifying` with the report of what
was erased; the distinctive words stay in the worker's memory for the probes,
and the report keeps only their digests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memory.hot_memory import hot_memory_purge
from memory.models import DeletionStatus, TombstoneAction, TombstoneTarget
from memory.services.deletion_leases import DeletionLease, _locked_for, _move
from memory.services.deletion_plan import _plan
from memory.services.erasure import (
    ERASE,
    Rows,
    _drop_conflict_links,
    _erase_claims,
    _invalidate_claims,
    _redact_events,
    _redact_idempotency_replies,
    _redact_traces,
    _remove_uri_sources,
    _write_staged_tombstones,
    _write_tombstones,
    lifecycle_lock,
)
from memory.services.lineage import claim_reviews_cancel
from memory.terms import term_digest


@dataclass
class Propagation:
    """What the worker carries from the wipe to the probes. `terms` never leave memory."""

    terms: list[str]
    hot_memory_keys_purged: int
    elapsed_ms: float


def _residual_copies(now: datetime) -> list[dict[str, str]]:
    retention = now + timedelta(days=settings.DELETION_BACKUP_RETENTION_DAYS)
    return [
        {
            "copy": "database backups taken before this deletion",
            "until": retention.date().isoformat(),
            "remedy": "after any restore, `manage.py reapply_tombstones` erases every "
            "tombstoned row again (consolidation also repairs drift on each pass)",
        },
        {
            "copy": "old row versions inside PostgreSQL's storage",
            "until": "the next VACUUM of the memory tables",
            "remedy": "autovacuum removes them; they are not readable through SQL",
        },
        {
            "copy": "content agents already copied outside memdesk",
            "until": "not reachable by memdesk",
            "remedy": "memdesk trains no model; agents hold only what recall returned",
        },
    ]


def deletion_propagate(
    *, lease: DeletionLease, worker: Actor, now: datetime | None = None
) -> Propagation | None:
    """Erase along lineage in one transaction, then purge hot memory. None if fenced off."""
    started = time.perf_counter()
    now = now or timezone.now()
    with transaction.atomic():
        deletion = _locked_for(lease, DeletionStatus.PROPAGATING)
        if deletion is None:
            return None
        tenant = deletion.tenant
        lifecycle_lock(tenant_id=tenant.pk)
        plan = _plan(deletion)
        erase_ids = [*plan.roots, *plan.derived_erase]
        erased = _erase_claims(tenant_id=tenant.pk, rows=ERASE, now=now)
        # Derived claims already out of use (superseded, rejected…) keep their status.
        invalidated_ids = [
            row[0]
            for row in _invalidate_claims(
                tenant_id=tenant.pk, rows=Rows(ids=plan.derived_invalidate), now=now
            )
        ]
        invalidated = len(invalidated_ids)
        artifacts = {
            "claims": {"erased": len(plan.roots)},
            "derived_claims": {"erased": len(plan.derived_erase), "invalidated": invalidated},
            "claim_sources": {"removed": _remove_uri_sources(tenant_id=tenant.pk, claims=ERASE)},
            "conflict_links": {
                "removed": _drop_conflict_links(
                    tenant_id=tenant.pk,
                    subject_ids=sorted(plan.subjects),
                    erased=ERASE,
                    now=now,
                )
            },
            "events": {
                "redacted": _redact_events(
                    tenant_id=tenant.pk, rows=Rows(staged=("event",)), now=now
                )
            },
            "full_text_index": {"entries_cleared": erased.full_text_cleared},
            "trigram_index": {"entries_cleared": erased.ngrams_cleared},
            "recall_traces": {
                "redacted": _redact_traces(
                    tenant_id=tenant.pk, rows=Rows(staged=("trace",)), now=now
                )
            },
            "idempotency_replies": {
                "redacted": _redact_idempotency_replies(
                    tenant_id=tenant.pk, rows=Rows(staged=("erase", "event"))
                )
            },
            "review_items": {
                "cancelled": claim_reviews_cancel(
                    tenant=tenant, claim_ids=[*erase_ids, *invalidated_ids]
                )
            },
        }
        staged_tombstones = (
            ("erase", TombstoneTarget.CLAIM, TombstoneAction.ERASED),
            ("event", TombstoneTarget.EVENT, TombstoneAction.REDACTED),
            ("trace", TombstoneTarget.RECALL_TRACE, TombstoneAction.REDACTED),
        )
        tombstones = sum(
            _write_staged_tombstones(
                tenant_id=tenant.pk,
                deletion_id=deletion.pk,
                kind=kind,
                target_type=target_type,
                action=action,
                now=now,
            )
            for kind, target_type, action in staged_tombstones
        )
        tombstones += _write_tombstones(
            tenant_id=tenant.pk,
            deletion_id=deletion.pk,
            target_type=TombstoneTarget.CLAIM,
            action=TombstoneAction.INVALIDATED,
            rows=[(i, plan.digests.get(i, "")) for i in invalidated_ids],
            now=now,
        )
        artifacts["tombstones"] = {"written": tombstones}
        digests = [term_digest(term) for term in plan.terms]
        deletion.report = {
            "scope": deletion.scope,
            "target": {
                "subject": deletion.subject.key,
                "claim": str(deletion.claim_id) if deletion.claim_id else None,
            },
            "artifacts": artifacts,
            "terms": {"count": len(digests), "digests": digests},
            "subjects": sorted(plan.subjects),
            "residual_copies": _residual_copies(now),
        }
        deletion.error_code = ""
        _move(
            deletion,
            to=DeletionStatus.VERIFYING,
            actor=worker,
            now=now,
            data={
                "claims_erased": len(erased.ids),
                "derived_invalidated": invalidated,
                "events_redacted": artifacts["events"]["redacted"],
                "recall_traces_redacted": artifacts["recall_traces"]["redacted"],
                "tombstones": tombstones,
                "terms": digests,
            },
        )
        deletion.save(update_fields=["status", "report", "error_code", "updated_at"])
    purged = hot_memory_purge(tenant_id=deletion.tenant_id, subject_ids=plan.subjects)
    return Propagation(
        terms=plan.terms,
        hot_memory_keys_purged=purged,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
    )
