"""Tombstone enforcement: bring every tombstoned row back to what its deletion left.

Used after restoring a backup (`tombstones_reapply`, `manage.py
reapply_tombstones`) and by consolidation on each pass to repair drift.

A deletion also replaced its distinctive words where no id leads (an editor's
note, an audit reason, a receipt's intent, a project's minutes: scrub.py). A
restore brings those copies back along with the rows the tombstones name, and
the words live nowhere but in those rows: before erasing them again, the
words whose keyed digests the deletions' reports keep are picked out of the
restored content (`recover_terms`), and the same scrub runs with them; and a
restored "download my data" file that a deletion had erased is erased again.
The database ends as the deletions left it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from memory.claims.hot_memory import hot_memory_purge
from memory.claims.services.lineage import claim_reviews_cancel
from memory.privacy.models import DeletionRequest, Tombstone, TombstoneAction, TombstoneTarget
from memory.privacy.services.erasure import (
    CLAIM_TABLE,
    EVENT_TABLE,
    Rows,
    drop_conflict_links,
    erase_claims,
    erase_exports_outlived_by_deletions,
    erase_review_topics,
    invalidate_claims,
    lifecycle_lock,
    redact_events,
    redact_idempotency_replies,
    redact_replies_quoting,
    redact_traces,
    redact_traces_choosing,
    remove_uri_sources,
    sql_rows,
)
from memory.privacy.services.scrub import scrub_quoted_content
from memory.privacy.terms import claim_content, like_patterns, recover_terms

_TOMBSTONE = Tombstone._meta.db_table


@dataclass
class Enforcement:
    counts: Counter[str] = field(default_factory=Counter)
    subjects: set[int] = field(default_factory=set)
    # Cached blocks dropped as a precaution; not a change to any row.
    hot_memory_keys_purged: int = 0

    @property
    def changed(self) -> int:
        return sum(self.counts.values())


def restored_terms(*, tenant: Tenant) -> list[str]:
    """The distinctive words of every deletion whose erased claims or redacted events hold
    content again (a restore brought them back), read from that content and kept only
    where the deletion's report has the word's digest. Empty when nothing was restored:
    one query over the tenant's tombstones."""
    rows = sql_rows(
        f"""
        SELECT t.deletion_id, c.text, c.value::text FROM {_TOMBSTONE} t
        JOIN {CLAIM_TABLE} c ON c.id = t.target_id AND c.tenant_id = t.tenant_id
        WHERE t.tenant_id = %s AND t.target_type = %s AND t.action = %s
          AND (c.value IS NOT NULL OR c.text <> '')
        UNION ALL
        SELECT t.deletion_id, concat_ws(' ', e.kind, e.text, e.source_uri, e.run_id, e.agent),
               e.body::text
        FROM {_TOMBSTONE} t
        JOIN {EVENT_TABLE} e ON e.id = t.target_id AND e.tenant_id = t.tenant_id
        WHERE t.tenant_id = %s AND t.target_type = %s AND t.action = %s
          AND e.redacted_at IS NULL
        """,  # noqa: S608
        [
            tenant.pk,
            TombstoneTarget.CLAIM,
            TombstoneAction.ERASED,
            tenant.pk,
            TombstoneTarget.EVENT,
            TombstoneAction.REDACTED,
        ],
    )
    if not rows:
        return []
    contents: dict[UUID, list[str]] = defaultdict(list)
    for deletion_id, text, value in rows:
        contents[deletion_id].append(
            claim_content(text=text or "", value=None if value is None else json.loads(value))
        )
    digests = dict(
        DeletionRequest.objects.filter(tenant=tenant, pk__in=list(contents)).values_list(
            "pk", "report__terms__digests"
        )
    )
    terms: dict[str, None] = {}
    for deletion_id, texts in contents.items():
        terms.update(dict.fromkeys(recover_terms(texts, digests.get(deletion_id) or [])))
    return list(terms)


def tombstones_enforce(*, tenant: Tenant, now: datetime | None = None) -> Enforcement:
    """Bring every tombstoned row back to what its deletion left. Touches only rows that
    differ: restored from a backup, or overwritten by a write that raced the erasure."""
    now = now or timezone.now()
    result = Enforcement()
    # Read before the rows holding the words are erased again.
    terms = restored_terms(tenant=tenant)
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
    result.counts["exports_erased"] = erase_exports_outlived_by_deletions(tenant_id=tenant.pk)
    if terms:
        # As the propagation does: replies quoting the words, then (last, once the rows
        # redacted whole are out of its reach) the words wherever else they were written.
        result.counts["idempotency_replies_redacted"] += redact_replies_quoting(
            tenant_id=tenant.pk, patterns=like_patterns(terms)
        )
        scrubbed = scrub_quoted_content(tenant_id=tenant.pk, terms=terms, now=now)
        result.counts["quoted_words_scrubbed"] = sum(scrubbed.values())
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
