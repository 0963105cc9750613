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
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.hot_memory import hot_memory_purge
from memory.claims.models import ClaimEmbedding, EventEmbedding, RecallUse
from memory.claims.services.lineage import claim_reviews_cancel
from memory.claims.services.recall_outbox import pending_traces_drain
from memory.privacy.held_content import (
    CLAIM_CONTENT,
    EVENT_CONTENT,
    HELD_CONTENT,
    QUOTED_CONTENT,
    REPLY_CONTENT,
    REVIEW_TOPIC_CONTENT,
    TRACE_CONTENT,
    URI_SOURCE_CONTENT,
)
from memory.privacy.models import DeletionStatus, TombstoneAction, TombstoneTarget
from memory.privacy.services.deletion_leases import (
    DeletionLease,
    deletion_locked_for,
    deletion_move,
)
from memory.privacy.services.deletion_plan import deletion_plan_make
from memory.privacy.services.erasure import (
    ERASE,
    ErasedClaims,
    Rows,
    claim_index_pending_flush,
    drop_conflict_links,
    erase_claims,
    erase_review_topics,
    invalidate_claims,
    lifecycle_lock,
    redact_events,
    redact_idempotency_replies,
    redact_replies_quoting,
    redact_traces,
    remove_uri_sources,
    write_staged_tombstones,
    write_tombstones,
)
from memory.privacy.services.scrub import (
    QUOTE_MARK,
    receipt_keys_kept_in_flight,
    scrub_quoted_content,
)
from memory.privacy.signals import claims_forgotten
from memory.privacy.terms import like_patterns, term_digest


@dataclass
class Propagation:
    """What the worker carries from the wipe to the probes. `terms` never leave memory."""

    terms: list[str]
    hot_memory_keys_purged: int
    elapsed_ms: float
    # The tables this propagation changed rows of, whose old versions VACUUM removes.
    dead_row_tables: list[str]


# Tables a deletion may change rows of: their old row versions hold the content until VACUUM.
TOUCHED_TABLES = tuple(
    dict.fromkeys(
        [
            *(held.table for held in HELD_CONTENT),
            ClaimEmbedding._meta.db_table,
            # A redacted or scrubbed event's vector goes with its text (a trigger on the ledger).
            EventEmbedding._meta.db_table,
            # A redacted trace's uses lose their run and task ids (erasure.redact_traces).
            RecallUse._meta.db_table,
            *(quoted.table for quoted in QUOTED_CONTENT),
        ]
    )
)


def _dead_row_tables(
    artifacts: dict[str, dict[str, Any]],
    *,
    claims_changed: int,
    erased: ErasedClaims,
    scrubbed: dict[str, int],
) -> list[str]:
    """The touched tables this deletion changed rows of, so left old row versions in:
    VACUUM of a table it changed nothing in would only read it."""
    changed = {
        CLAIM_CONTENT.table: claims_changed + artifacts["conflict_links"]["removed"],
        ClaimEmbedding._meta.db_table: erased.embeddings_deleted,
        URI_SOURCE_CONTENT.table: artifacts["claim_sources"]["removed"],
        EVENT_CONTENT.table: artifacts["events"]["redacted"],
        EventEmbedding._meta.db_table: artifacts["events"]["redacted"]
        + scrubbed.get(EVENT_CONTENT.table, 0),
        TRACE_CONTENT.table: artifacts["recall_traces"]["redacted"],
        RecallUse._meta.db_table: artifacts["recall_traces"]["redacted"],
        REPLY_CONTENT.table: artifacts["idempotency_replies"]["redacted"],
        REVIEW_TOPIC_CONTENT.table: artifacts["review_items"]["cancelled"]
        + artifacts["review_items"]["topics_erased"],
    }
    return [table for table in TOUCHED_TABLES if changed.get(table) or scrubbed.get(table)]


def physical_horizon(now: datetime, tables: list[str]) -> dict[str, object]:
    """Where the bytes still are after the rows are gone, and until when."""
    retention = now + timedelta(days=settings.DELETION_BACKUP_RETENTION_DAYS)
    return {
        "live_tables": {"gone_at": now.isoformat()},
        "dead_row_versions": {
            "tables": tables,
            "until": "the VACUUM the worker runs for these tables after the deletion",
            "vacuumed_at": None,
        },
        "wal_and_backups": {
            "retention_days": settings.DELETION_BACKUP_RETENTION_DAYS,
            "until": retention.date().isoformat(),
        },
        "after_restore": "`manage.py reapply_tombstones` erases every tombstoned row again "
        "and scrubs the deleted words again wherever this deletion scrubbed them",
    }


def _residual_copies(now: datetime) -> list[dict[str, str]]:
    retention = now + timedelta(days=settings.DELETION_BACKUP_RETENTION_DAYS)
    return [
        {
            "copy": "database backups taken before this deletion",
            "until": retention.date().isoformat(),
            "remedy": "after any restore, `manage.py reapply_tombstones` erases every "
            "tombstoned row again and scrubs the deleted words where they were quoted "
            "(consolidation also repairs drift on each pass)",
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
        deletion = deletion_locked_for(lease, DeletionStatus.PROPAGATING)
        if deletion is None:
            return None
        tenant = deletion.tenant
        lifecycle_lock(tenant_id=tenant.pk)
        # Pending recall traces first, so the plan finds and redacts them like any other.
        pending_traces_drain(tenant_id=tenant.pk)
        # The plan searches the claims' indexes for every candidate word.
        claim_index_pending_flush()
        plan = deletion_plan_make(deletion)
        erase_ids = [*plan.roots, *plan.derived_erase]
        erased = erase_claims(tenant_id=tenant.pk, rows=ERASE, now=now)
        # Derived claims already out of use (superseded, rejected…) keep their status.
        invalidated_ids = [
            row[0]
            for row in invalidate_claims(
                tenant_id=tenant.pk, rows=Rows(ids=plan.derived_invalidate), now=now
            )
        ]
        invalidated = len(invalidated_ids)
        artifacts: dict[str, dict[str, Any]] = {
            "claims": {"erased": len(plan.roots)},
            "derived_claims": {"erased": len(plan.derived_erase), "invalidated": invalidated},
            "claim_sources": {"removed": remove_uri_sources(tenant_id=tenant.pk, claims=ERASE)},
            "conflict_links": {
                "removed": drop_conflict_links(
                    tenant_id=tenant.pk,
                    subject_ids=sorted(plan.subjects),
                    erased=ERASE,
                    now=now,
                )
            },
            "events": {
                "redacted": redact_events(
                    tenant_id=tenant.pk, rows=Rows(staged=("event",)), now=now
                )
            },
            "full_text_index": {"entries_cleared": erased.full_text_cleared},
            "trigram_index": {"entries_cleared": erased.ngrams_cleared},
            "recall_traces": {
                "redacted": redact_traces(
                    tenant_id=tenant.pk, rows=Rows(staged=("trace",)), now=now
                )
            },
            "idempotency_replies": {
                "redacted": redact_idempotency_replies(
                    tenant_id=tenant.pk, rows=Rows(staged=("erase", "event"))
                )
            },
            "review_items": {
                "cancelled": claim_reviews_cancel(
                    tenant=tenant, claim_ids=[*erase_ids, *invalidated_ids]
                ),
                "topics_erased": erase_review_topics(tenant_id=tenant.pk, claims=ERASE),
            },
        }
        claims_forgotten.send(
            sender=deletion_propagate,
            tenant_id=tenant.pk,
            claim_ids=[str(i) for i in [*erase_ids, *invalidated_ids]],
            deletion_id=deletion.pk,
            terms=list(plan.terms),
        )
        artifacts["idempotency_replies"]["redacted"] += redact_replies_quoting(
            tenant_id=tenant.pk, patterns=like_patterns(plan.terms)
        )
        # Last: rows redacted whole above are no longer candidates for a partial scrub.
        scrubbed = scrub_quoted_content(tenant_id=tenant.pk, terms=plan.terms, now=now)
        artifacts["quoted_elsewhere"] = {"rows_scrubbed": sum(scrubbed.values()), **scrubbed}
        kept_in_flight = receipt_keys_kept_in_flight(tenant_id=tenant.pk, terms=plan.terms)
        if kept_in_flight:
            artifacts["receipts_in_flight"] = {"keys_kept": kept_in_flight}
        staged_tombstones = (
            ("erase", TombstoneTarget.CLAIM, TombstoneAction.ERASED),
            ("event", TombstoneTarget.EVENT, TombstoneAction.REDACTED),
            ("trace", TombstoneTarget.RECALL_TRACE, TombstoneAction.REDACTED),
        )
        tombstones = sum(
            write_staged_tombstones(
                tenant_id=tenant.pk,
                deletion_id=deletion.pk,
                kind=kind,
                target_type=target_type,
                action=action,
                now=now,
            )
            for kind, target_type, action in staged_tombstones
        )
        tombstones += write_tombstones(
            tenant_id=tenant.pk,
            deletion_id=deletion.pk,
            target_type=TombstoneTarget.CLAIM,
            action=TombstoneAction.INVALIDATED,
            rows=[(i, plan.digests.get(i, "")) for i in invalidated_ids],
            now=now,
        )
        artifacts["tombstones"] = {"written": tombstones}
        # The probes search them again, past the entry the erasure left for each claim.
        claim_index_pending_flush()
        dead_row_tables = _dead_row_tables(
            artifacts,
            claims_changed=len(erased.ids) + invalidated,
            erased=erased,
            scrubbed=scrubbed,
        )
        digests = [term_digest(term) for term in plan.terms]
        deletion.report = {
            "scope": deletion.scope,
            "target": {
                "subject": deletion.subject.key,
                "claim": str(deletion.claim_id) if deletion.claim_id else None,
                "events": len(deletion.event_ids),
                "recall_traces": len(deletion.trace_ids),
            },
            "cause": deletion.cause,
            "artifacts": artifacts,
            "terms": {"count": len(digests), "digests": digests},
            "subjects": sorted(plan.subjects),
            "residual_copies": _residual_copies(now),
            "horizon": physical_horizon(now, dead_row_tables),
            "quotes": {
                "other_subjects_events_scrubbed": scrubbed.get("memory_event", 0),
                "how": "events of other subjects (a project's notes) keep what they said "
                f"about themselves: only the quoted words were replaced by {QUOTE_MARK}; "
                "elsewhere a string holding a word was replaced whole by a digest",
            },
            "identifiers": {
                "in_flight_receipt_keys_kept": kept_in_flight,
                "how": "a receipt's idempotency key, an Idempotency-Key and a checkpoint's "
                "task key holding a word were replaced by their keyed digest, which a retry "
                "or a recovery under the original key still finds; a receipt still being "
                "settled keeps its key and lookup settings (reconciliation reads the outside "
                "system by them), so the probe over every column reports that copy and the "
                "deletion waits for a person",
            },
        }
        deletion.error_code = ""
        deletion_move(
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
        dead_row_tables=dead_row_tables,
    )
