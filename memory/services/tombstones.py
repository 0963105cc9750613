"""Tombstone enforcement: bring every tombstoned row back to what its deletion left.

Used after restoring a backup (`tombstones_reapply`, `manage.py
reapply_tombstones`) and by consolidation on each pass to repair drift.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from memory.hot_memory import hot_memory_purge
from memory.models import TombstoneAction, TombstoneTarget
from memory.services.erasure import (
    CLAIM_TABLE,
    Rows,
    drop_conflict_links,
    erase_claims,
    erase_review_topics,
    invalidate_claims,
    lifecycle_lock,
    redact_events,
    redact_idempotency_replies,
    redact_traces,
    redact_traces_choosing,
    remove_uri_sources,
    sql_rows,
)
from memory.services.lineage import claim_reviews_cancel


@dataclass
class Enforcement:
    counts: Counter[str] = field(default_factory=Counter)
    subjects: set[int] = field(default_factory=set)
    # Cached blocks dropped as a precaution; not a change to any row.
    hot_memory_keys_purged: int = 0

    @property
    def changed(self) -> int:
        return sum(self.counts.values())


def tombstones_enforce(*, tenant: Tenant, now: datetime | None = None) -> Enforcement:
    """Bring every tombstoned row back to what its deletion left. Touches only rows that
    differ: restored from a backup, or overwritten by a write that raced the erasure."""
    now = now or timezone.now()
    result = Enforcement()
    erased_claims = Rows.of_tombstones(tenant.pk, [TombstoneTarget.CLAIM], [TombstoneAction.ERASED])
    erased = erase_claims(tenant_id=tenant.pk, rows=erased_claims, now=now)
    if erased.ids:
        result.counts["claims_erased"] = len(erased.ids)
        result.counts["review_items_cancelled"] += claim_reviews_cancel(
            tenant=tenant, claim_ids=erased.ids
        )
        result.subjects |= erased.subject_ids
        result.counts["conflict_links_removed"] = drop_conflict_links(
            tenant_id=tenant.pk, subject_ids=sorted(erased.subject_ids), erased=erased.ids, now=now
        )
        result.counts["recall_traces_redacted"] += redact_traces_choosing(
            tenant_id=tenant.pk,
            subject_ids=sorted(erased.subject_ids),
            claim_ids=erased.ids,
            now=now,
        )
    result.counts["claim_sources_removed"] = remove_uri_sources(
        tenant_id=tenant.pk, claims=erased_claims
    )
    result.counts["review_topics_erased"] = erase_review_topics(
        tenant_id=tenant.pk, claims=erased_claims
    )
    revived = invalidate_claims(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(tenant.pk, [TombstoneTarget.CLAIM], [TombstoneAction.INVALIDATED]),
        now=now,
    )
    if revived:
        result.counts["claims_invalidated"] = len(revived)
        result.counts["review_items_cancelled"] += claim_reviews_cancel(
            tenant=tenant, claim_ids=[row[0] for row in revived]
        )
        result.subjects.update(row[1] for row in revived)
    result.counts["events_redacted"] = redact_events(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(tenant.pk, [TombstoneTarget.EVENT], [TombstoneAction.REDACTED]),
        now=now,
    )
    result.counts["recall_traces_redacted"] += redact_traces(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(
            tenant.pk, [TombstoneTarget.RECALL_TRACE], [TombstoneAction.REDACTED]
        ),
        now=now,
    )
    result.counts["idempotency_replies_redacted"] = redact_idempotency_replies(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(
            tenant.pk,
            [TombstoneTarget.CLAIM, TombstoneTarget.EVENT],
            [TombstoneAction.ERASED, TombstoneAction.REDACTED],
        ),
    )
    result.counts = Counter({k: v for k, v in result.counts.items() if v})
    return result


def tombstoned_subject_ids(*, tenant: Tenant) -> list[int]:
    where, params = Rows.of_tombstones(
        tenant.pk, [TombstoneTarget.CLAIM], [TombstoneAction.ERASED, TombstoneAction.INVALIDATED]
    ).match("id")
    return [
        row[0]
        for row in sql_rows(
            f"SELECT DISTINCT subject_id FROM {CLAIM_TABLE} WHERE tenant_id = %s AND {where}",  # noqa: S608
            [tenant.pk, *params],
        )
    ]


def tombstones_reapply(*, tenant: Tenant, actor: Actor) -> Enforcement:
    """Re-erase everything tombstoned in a tenant, e.g. after restoring a backup.

    Restore the data tables, keep `memory_tombstone` and `memory_deletionrequest`
    as they were (they hold no content), then run this. Idempotent.
    """
    with transaction.atomic():
        lifecycle_lock(tenant_id=tenant.pk)
        result = tombstones_enforce(tenant=tenant)
        if result.changed:
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="tombstones.reapplied",
                target_type="tenant",
                target_id=tenant.pk,
                data=dict(result.counts),
            )
    # A restored Redis may hold blocks rendered from the restored rows as well.
    result.hot_memory_keys_purged = hot_memory_purge(
        tenant_id=tenant.pk, subject_ids=tombstoned_subject_ids(tenant=tenant)
    )
    return result
