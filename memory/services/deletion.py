"""Forgetting that provably propagates (DESIGN.md principle 7, seed 004).

A deletion request names one memory or everything about a subject. A worker
takes the request with a lease and, in one transaction, erases the claims
(value and text wiped, index entries cleared), erases or invalidates what was
derived from them, redacts the user's own statements in the ledger, redacts
recall traces and idempotency replies that hold the content, and writes a
tombstone per row. After commit it purges the subject's hot-memory blocks
from Redis and runs the probes of `memory.selectors.deletion`, whose queries
and results go into the report.

The probes search for the deleted content's distinctive words. Those words
are read before the wipe and live only in the worker's memory: the report
keeps their HMAC digests. The plan stages the rows it will touch in a
temporary table once; every write after that is one set-based statement per
table joined to it, so erasing a subject costs the same number of queries
whether it has 10 claims or 10,000.

What one deletion reaches: the claim and the revisions it superseded (or
every claim of the subject); claims derived from them, transitively — erased
when they contain a distinctive word of the deleted content or rest on
nothing but erased claims, invalidated otherwise; the ledger events of the
subject that are sources of erased claims or repeat their words (all of the
subject's events for a subject deletion), and events quoting erased claims
(`echo_of`); recall traces of the touched subjects that returned them or
asked for their words; stored idempotent replies carrying erased rows; open
review items of erased or invalidated claims.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.models import IdempotencyRecord
from common.problems import InvalidTransition, not_found
from memory.models import (
    DELETION_TRANSITIONS,
    Claim,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    DeletionRequest,
    DeletionScope,
    DeletionStatus,
    Event,
    RecallTrace,
    Subject,
    Tombstone,
    TombstoneAction,
    TombstoneTarget,
    claim_sources_for,
)
from memory.models.lifecycle import UNFINISHED_DELETION_STATUSES
from memory.search import ngrams
from memory.selectors.deletion import (
    cache_client,
    candidate_terms,
    claim_content,
    deletion_probes,
    hot_memory_cache_keys,
    like_patterns,
    term_digest,
)
from memory.services.claims import REDACTED as SECRET_PLACEHOLDER
from memory.services.embeddings import claim_embeddings_delete_where
from memory.services.lineage import claim_reviews_cancel
from reviews.models import Queue
from reviews.services import review_open

logger = logging.getLogger(__name__)

_CHUNK = 5000

_CLAIM = Claim._meta.db_table
_LINEAGE = Claim.derived_from.through._meta.db_table
_SOURCE = ClaimSource._meta.db_table
_EVENT = Event._meta.db_table
_TRACE = RecallTrace._meta.db_table
_TOMBSTONE = Tombstone._meta.db_table
_IDEMPOTENCY = IdempotencyRecord._meta.db_table
# The rows one propagation touches, staged server-side once: every statement joins
# this table instead of shipping (and re-parsing) an array of 10,000 ids.
_STAGED = "memdesk_deletion_rows"


# -- shared building blocks ------------------------------------------------------------


def lifecycle_lock(*, tenant_id: int) -> None:
    """Serialise erasure, reapplication and consolidation within one tenant.

    A transaction-level advisory lock; consolidation takes the same key at
    session level, so neither ever sees the other half done.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lifecycle_lock_key(tenant_id)])


def lifecycle_lock_key(tenant_id: int) -> int:
    # A fixed namespace in the high bits keeps this clear of other advisory locks.
    return (0x4D454D << 32) | int(tenant_id)


def _chunks(items: list[Any], size: int = _CHUNK) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _execute(sql: str, params: list[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _stage(rows: list[tuple[UUID, str, str]]) -> None:
    """Add (id, kind, digest) rows to the propagation's temporary table (created by
    `_roots`, dropped at commit) and refresh its statistics, in one round trip."""
    _execute(
        f"""
        INSERT INTO {_STAGED} (id, kind, digest)
        SELECT * FROM unnest(%s::uuid[], %s::text[], %s::text[])
        ON CONFLICT DO NOTHING;
        ANALYZE {_STAGED};
        """,  # noqa: S608
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )


def hot_memory_purge(*, tenant_id: int, subject_ids: Iterable[int]) -> int:
    """Delete every cached hot-memory block of these subjects. Returns the keys deleted.

    A changed claim already moves the block's version key, but the old block
    still holds its text in Redis until it expires; erasure cannot wait.
    """
    client = cache_client()
    purged = 0
    for subject_id in sorted(set(subject_ids)):
        keys = hot_memory_cache_keys(tenant_id=tenant_id, subject_id=subject_id)
        for batch in _chunks(keys, 500):
            purged += client.delete(*batch)
    return purged


# -- set-based erasure primitives ----------------------------------------------------
# Each touches only rows that still need it (so running it again changes
# nothing) and says what it changed. `Rows` names the rows: the ids a
# propagation planned, or everything a tenant's tombstones name.


@dataclass(frozen=True)
class Rows:
    ids: list[UUID] | None = None
    # (tenant, target types, actions) of the tombstones whose targets are meant.
    tombstoned: tuple[int, tuple[str, ...], tuple[str, ...]] | None = None
    # Kinds of rows staged by this propagation (see `_stage`).
    staged: tuple[str, ...] | None = None

    @classmethod
    def of_tombstones(cls, tenant_id: int, target_types: Iterable[str], actions: Iterable[str]):  # type: ignore[no-untyped-def]
        return cls(tombstoned=(tenant_id, tuple(target_types), tuple(actions)))

    def match(self, column: str, *, as_text: bool = False) -> tuple[str, list[Any]]:
        """A SQL condition on `column` (uuid, or text with `as_text`) and its parameters."""
        if self.staged is not None:
            staged_id = "id::text" if as_text else "id"
            return (
                f"{column} IN (SELECT {staged_id} FROM {_STAGED} WHERE kind = ANY(%s))",  # noqa: S608
                [list(self.staged)],
            )
        if self.tombstoned is None:
            ids = self.ids or []
            if as_text:
                return f"{column} = ANY(%s::text[])", [[str(i) for i in ids]]
            return f"{column} = ANY(%s::uuid[])", [ids]
        tenant_id, target_types, actions = self.tombstoned
        target = "target_id::text" if as_text else "target_id"
        return (
            f"{column} IN (SELECT {target} FROM {_TOMBSTONE} WHERE tenant_id = %s "  # noqa: S608
            "AND target_type = ANY(%s) AND action = ANY(%s))",
            [tenant_id, list(target_types), list(actions)],
        )


ERASE = Rows(staged=("erase",))


@dataclass(frozen=True)
class ErasedClaims:
    ids: list[UUID]
    subject_ids: set[int]
    full_text_cleared: int
    ngrams_cleared: int


def _erase_claims(*, tenant_id: int, rows: Rows, now: datetime) -> ErasedClaims:
    """Wipe value, text and both index entries; the value digest stays."""
    # Claims are wiped, not deleted, so no cascade removes the vectors of their text.
    claim_embeddings_delete_where(tenant_id=tenant_id, match=rows.match("claim_id"))
    where, params = rows.match("id")
    erased = _rows(
        f"""
        WITH target AS (
            SELECT id, search_vector IS NOT NULL AS had_fts, cardinality(ngrams) > 0 AS had_grams
            FROM {_CLAIM}
            WHERE tenant_id = %s AND {where}
              AND (status <> 'erased' OR value IS NOT NULL OR text <> ''
                   OR search_vector IS NOT NULL OR cardinality(ngrams) > 0)
            FOR UPDATE
        )
        UPDATE {_CLAIM} AS c
        SET status = 'erased', value = NULL, text = '', search_vector = NULL,
            ngrams = '{{}}', updated_at = %s
        FROM target WHERE c.id = target.id AND c.status = ANY(%s)
        RETURNING c.id, c.subject_id, target.had_fts, target.had_grams
        """,  # noqa: S608 - table names come from model metadata
        # Every state may be erased; an erased row is wiped again if anything is left.
        [tenant_id, *params, now, [*claim_sources_for(ClaimStatus.ERASED), ClaimStatus.ERASED]],
    )
    return ErasedClaims(
        ids=[row[0] for row in erased],
        subject_ids={row[1] for row in erased},
        full_text_cleared=sum(1 for row in erased if row[2]),
        ngrams_cleared=sum(1 for row in erased if row[3]),
    )


def _remove_uri_sources(*, tenant_id: int, claims: Rows) -> int:
    # A uri may itself carry personal content; event sources keep only ids and digests.
    where, params = claims.match("claim_id")
    return _execute(
        f"DELETE FROM {_SOURCE} WHERE tenant_id = %s AND event_id IS NULL AND {where}",  # noqa: S608
        [tenant_id, *params],
    )


def _invalidate_claims(*, tenant_id: int, rows: Rows, now: datetime) -> list[tuple[UUID, int]]:
    where, params = rows.match("id")
    return _rows(
        f"UPDATE {_CLAIM} SET status = 'invalidated', updated_at = %s "  # noqa: S608
        f"WHERE tenant_id = %s AND status = ANY(%s) AND {where} RETURNING id, subject_id",
        [now, tenant_id, claim_sources_for(ClaimStatus.INVALIDATED, ClaimRole.DELETION), *params],
    )


def _drop_conflict_links(
    *, tenant_id: int, subject_ids: list[int], erased: list[UUID] | Rows, now: datetime
) -> int:
    """Remove erased claims from the other side of their conflicts (same subject only).

    Runs after the erasure, so `status <> 'erased'` skips the erased claims themselves.
    Only claims that have conflicts at all (read first, materialised) are compared
    with the erased ids: testing `&&` against a 10,000-id array on every claim of the
    subject costs a second.
    """
    rows = erased if isinstance(erased, Rows) else Rows(ids=erased)
    is_erased, params = rows.match("x")
    return _execute(
        f"""
        WITH linked AS MATERIALIZED (
            SELECT id, conflicts_with FROM {_CLAIM}
            WHERE tenant_id = %s AND subject_id = ANY(%s) AND cardinality(conflicts_with) > 0
              AND status <> 'erased'
        ), changed AS (
            SELECT linked.id, ARRAY(
                SELECT x FROM unnest(linked.conflicts_with) AS x WHERE NOT ({is_erased})
            ) AS kept
            FROM linked
        )
        UPDATE {_CLAIM} AS c SET conflicts_with = changed.kept, updated_at = %s
        FROM changed
        WHERE c.id = changed.id AND cardinality(changed.kept) < cardinality(c.conflicts_with)
        """,  # noqa: S608
        [tenant_id, subject_ids, *params, now],
    )


def _redact_events(*, tenant_id: int, rows: Rows, now: datetime) -> int:
    # The ledger's trigger allows exactly this one update per event.
    where, params = rows.match("id")
    return _execute(
        f"UPDATE {_EVENT} SET text = '', body = '{{}}'::jsonb, source_uri = '', "  # noqa: S608
        f"redacted_at = %s WHERE tenant_id = %s AND redacted_at IS NULL AND {where}",
        [now, tenant_id, *params],
    )


def _redact_traces(*, tenant_id: int, rows: Rows, now: datetime) -> int:
    where, params = rows.match("id")
    return _execute(
        f"UPDATE {_TRACE} SET query = '', filters = '{{}}'::jsonb, "  # noqa: S608
        "redacted_at = COALESCE(redacted_at, %s) WHERE tenant_id = %s "
        "AND (redacted_at IS NULL OR query <> '' OR filters <> '{}'::jsonb) "
        f"AND {where}",
        [now, tenant_id, *params],
    )


def _redact_traces_choosing(
    *, tenant_id: int, subject_ids: list[int], claim_ids: list[UUID], now: datetime
) -> int:
    """Redact recalls that returned claims which had to be erased again (they were
    recalled while restored), and tombstone them under the claim's deletion."""
    return _rows(
        f"""
        WITH redacted AS (
            UPDATE {_TRACE} SET query = '', filters = '{{}}'::jsonb, redacted_at = %s
            WHERE tenant_id = %s AND subject_id = ANY(%s) AND redacted_at IS NULL
              AND chosen && %s::uuid[]
            RETURNING id, chosen
        ), tombstoned AS (
            INSERT INTO {_TOMBSTONE} (tenant_id, deletion_id, target_type, target_id, action,
                                      digest, created_at)
            SELECT DISTINCT ON (r.id) %s, t.deletion_id, %s, r.id, %s, '', %s
            FROM redacted r JOIN {_TOMBSTONE} t
              ON t.tenant_id = %s AND t.target_type = %s AND t.target_id = ANY(r.chosen)
            ORDER BY r.id, t.id
            ON CONFLICT (tenant_id, target_type, target_id, action) DO NOTHING
            RETURNING 1
        )
        SELECT count(*) FROM redacted
        """,  # noqa: S608
        [
            now,
            tenant_id,
            subject_ids,
            claim_ids,
            tenant_id,
            TombstoneTarget.RECALL_TRACE,
            TombstoneAction.REDACTED,
            now,
            tenant_id,
            TombstoneTarget.CLAIM,
        ],
    )[0][0]


def _redact_idempotency_replies(*, tenant_id: int, rows: Rows) -> int:
    """Stored API replies (kept for Idempotency-Key replays) that carry an erased row."""
    where, params = rows.match("response_body->>'id'", as_text=True)
    return _execute(
        f"UPDATE {_IDEMPOTENCY} "  # noqa: S608
        "SET response_body = jsonb_build_object('id', response_body->'id', 'redacted', true) "
        "WHERE tenant_id = %s AND NOT response_body @> '{\"redacted\": true}'::jsonb "
        f"AND {where}",
        [tenant_id, *params],
    )


def _write_tombstones(
    *,
    tenant_id: int,
    deletion_id: UUID,
    target_type: str,
    action: str,
    rows: list[tuple[UUID, str]],
    now: datetime,
) -> int:
    if not rows:
        return 0
    return _execute(
        f"""
        INSERT INTO {_TOMBSTONE} (tenant_id, deletion_id, target_type, target_id, action,
                                  digest, created_at)
        SELECT %s, %s, %s, t.id, %s, t.digest, %s
        FROM unnest(%s::uuid[], %s::text[]) AS t(id, digest)
        ON CONFLICT (tenant_id, target_type, target_id, action) DO NOTHING
        """,  # noqa: S608
        [
            tenant_id,
            deletion_id,
            target_type,
            action,
            now,
            [r[0] for r in rows],
            [r[1] for r in rows],
        ],
    )


def _write_staged_tombstones(
    *, tenant_id: int, deletion_id: UUID, kind: str, target_type: str, action: str, now: datetime
) -> int:
    return _execute(
        f"""
        INSERT INTO {_TOMBSTONE} (tenant_id, deletion_id, target_type, target_id, action,
                                  digest, created_at)
        SELECT %s, %s, %s, s.id, %s, s.digest, %s FROM {_STAGED} s WHERE s.kind = %s
        ON CONFLICT (tenant_id, target_type, target_id, action) DO NOTHING
        """,  # noqa: S608
        [tenant_id, deletion_id, target_type, action, now, kind],
    )


# -- tombstone enforcement (reapply after a restore; consolidation's drift repair) -------


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
    erased = _erase_claims(tenant_id=tenant.pk, rows=erased_claims, now=now)
    if erased.ids:
        result.counts["claims_erased"] = len(erased.ids)
        result.counts["review_items_cancelled"] += claim_reviews_cancel(
            tenant=tenant, claim_ids=erased.ids
        )
        result.subjects |= erased.subject_ids
        result.counts["conflict_links_removed"] = _drop_conflict_links(
            tenant_id=tenant.pk, subject_ids=sorted(erased.subject_ids), erased=erased.ids, now=now
        )
        result.counts["recall_traces_redacted"] += _redact_traces_choosing(
            tenant_id=tenant.pk,
            subject_ids=sorted(erased.subject_ids),
            claim_ids=erased.ids,
            now=now,
        )
    result.counts["claim_sources_removed"] = _remove_uri_sources(
        tenant_id=tenant.pk, claims=erased_claims
    )
    revived = _invalidate_claims(
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
    result.counts["events_redacted"] = _redact_events(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(tenant.pk, [TombstoneTarget.EVENT], [TombstoneAction.REDACTED]),
        now=now,
    )
    result.counts["recall_traces_redacted"] += _redact_traces(
        tenant_id=tenant.pk,
        rows=Rows.of_tombstones(
            tenant.pk, [TombstoneTarget.RECALL_TRACE], [TombstoneAction.REDACTED]
        ),
        now=now,
    )
    result.counts["idempotency_replies_redacted"] = _redact_idempotency_replies(
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
        for row in _rows(
            f"SELECT DISTINCT subject_id FROM {_CLAIM} WHERE tenant_id = %s AND {where}",  # noqa: S608
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


# -- requests and the state machine -------------------------------------------------


def deletion_enqueue(*, deletion_ids: Iterable[UUID | str]) -> int:
    """Wake a lifecycle worker for each request. Returns the messages sent."""
    sent = 0
    for deletion_id in deletion_ids:
        # By name: the tasks module imports this one, never the other way round.
        current_app.signature(
            "memory.deletion_run", args=[str(deletion_id)], queue=settings.LIFECYCLE_QUEUE
        ).apply_async()
        sent += 1
    return sent


def _enqueue_on_commit(deletion_id: UUID) -> None:
    # robust: the request is committed whatever happens to the broker; the
    # due-deletions sweep finds it from the row if this message is lost.
    transaction.on_commit(lambda: deletion_enqueue(deletion_ids=[deletion_id]), robust=True)


def deletion_request_create(
    *,
    tenant: Tenant,
    actor: Actor,
    subject: Subject,
    claim: Claim | None = None,
    requested_by: Any = None,
) -> tuple[DeletionRequest, bool]:
    """Record a request to forget one claim (and its history) or everything about a subject.

    Returns the request and whether it is new: asking again while one is
    unfinished for the same target returns that one. Propagation starts
    after commit.
    """
    if claim is not None and (claim.subject_id != subject.pk or claim.status == ClaimStatus.ERASED):
        raise not_found("memory")
    with transaction.atomic():
        unfinished = DeletionRequest.objects.filter(
            tenant=tenant, subject=subject, claim=claim, status__in=UNFINISHED_DELETION_STATUSES
        ).first()
        if unfinished is not None:
            return unfinished, False
        try:
            with transaction.atomic():
                deletion = DeletionRequest.objects.create(
                    tenant=tenant,
                    scope=DeletionScope.CLAIM if claim else DeletionScope.SUBJECT,
                    subject=subject,
                    claim=claim,
                    requested_by=requested_by,
                )
        except IntegrityError:
            return (
                DeletionRequest.objects.get(
                    tenant=tenant,
                    subject=subject,
                    claim=claim,
                    status__in=UNFINISHED_DELETION_STATUSES,
                ),
                False,
            )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="deletion.requested",
            target_type="deletion",
            target_id=deletion.pk,
            data={
                "scope": deletion.scope,
                "subject": subject.pk,
                "claim": str(claim.pk) if claim else None,
            },
        )
        _enqueue_on_commit(deletion.pk)
    return deletion, True


def _move(
    deletion: DeletionRequest,
    *,
    to: str,
    actor: Actor,
    now: datetime,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> None:
    allowed = DELETION_TRANSITIONS.get(deletion.status, frozenset())
    if to not in allowed:
        raise InvalidTransition(
            f"A {deletion.status} deletion cannot become {to}.", allowed=sorted(allowed)
        )
    deletion.status = to
    deletion.updated_at = now
    audit_record(
        tenant=deletion.tenant,
        actor=actor,
        verb=f"deletion.{to}",
        target_type="deletion",
        target_id=deletion.pk,
        reason=reason,
        data={"attempt": deletion.attempts, **(data or {})},
    )


def _open_deletion_review(deletion: DeletionRequest, reasons: list[str]) -> None:
    review_open(
        tenant=deletion.tenant,
        queue=Queue.DELETIONS,
        target_type="deletion",
        target_id=deletion.pk,
        target_version=deletion.version(),
        subject_key=deletion.subject.key,
        reason_codes=[reason[:64] for reason in reasons],
    )


def _fail(deletion: DeletionRequest, *, actor: Actor, now: datetime, error_code: str) -> None:
    _move(deletion, to=DeletionStatus.FAILED, actor=actor, now=now, reason=error_code)
    deletion.error_code = error_code[:100]
    deletion.lease_expires_at = None
    deletion.finished_at = now
    deletion.report = {**deletion.report, "clean": False, "error": error_code[:100]}
    deletion.save(
        update_fields=[
            "status",
            "error_code",
            "lease_expires_at",
            "finished_at",
            "report",
            "updated_at",
        ]
    )
    # A failed deletion leaves content behind: a person must look at it.
    _open_deletion_review(deletion, [error_code])


@dataclass(frozen=True)
class DeletionLease:
    deletion_id: UUID
    attempt: int


def _claimable(now: datetime) -> Q:
    return Q(status__in=UNFINISHED_DELETION_STATUSES) & (
        Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    )


def deletion_claim(
    *, deletion_id: UUID | str, worker: Actor, now: datetime | None = None
) -> DeletionLease | None:
    """Take a request for one attempt, or None if it is finished, leased, or out of attempts."""
    now = now or timezone.now()
    with transaction.atomic():
        deletion = (
            DeletionRequest.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant", "subject")
            .filter(_claimable(now), pk=deletion_id)
            .first()
        )
        if deletion is None:
            return None
        if deletion.attempts >= settings.DELETION_MAX_ATTEMPTS:
            _fail(deletion, actor=worker, now=now, error_code="attempts_exhausted")
            return None
        deletion.attempts += 1
        deletion.lease_expires_at = now + timedelta(seconds=settings.DELETION_LEASE_SECONDS)
        deletion.started_at = deletion.started_at or now
        deletion.updated_at = now
        if deletion.status == DeletionStatus.PENDING:
            _move(deletion, to=DeletionStatus.PROPAGATING, actor=worker, now=now)
        deletion.save(
            update_fields=["status", "attempts", "lease_expires_at", "started_at", "updated_at"]
        )
    return DeletionLease(deletion_id=deletion.pk, attempt=deletion.attempts)


def _locked_for(lease: DeletionLease, status: str) -> DeletionRequest | None:
    """The request under lock, or None if this lease was fenced off by a newer attempt."""
    deletion = (
        DeletionRequest.objects.select_for_update(of=("self",))
        .select_related("tenant", "subject")
        .filter(pk=lease.deletion_id)
        .first()
    )
    if deletion is None or deletion.status != status or deletion.attempts != lease.attempt:
        logger.warning(
            "stale deletion attempt discarded",
            extra={
                "deletion": str(lease.deletion_id),
                "attempt": lease.attempt,
                "current_attempt": deletion.attempts if deletion else None,
                "status": deletion.status if deletion else None,
            },
        )
        return None
    return deletion


def deletion_release(
    *, lease: DeletionLease, worker: Actor, error_code: str, now: datetime | None = None
) -> None:
    """An attempt broke: record why and let the sweep retry after a backoff (or give up)."""
    now = now or timezone.now()
    with transaction.atomic():
        deletion = (
            DeletionRequest.objects.select_for_update(of=("self",))
            .select_related("tenant", "subject")
            .filter(pk=lease.deletion_id, attempts=lease.attempt)
            .filter(status__in=UNFINISHED_DELETION_STATUSES)
            .first()
        )
        if deletion is None:
            return
        if deletion.attempts >= settings.DELETION_MAX_ATTEMPTS:
            _fail(deletion, actor=worker, now=now, error_code=error_code)
            return
        backoff = min(
            settings.DELETION_RETRY_BASE_SECONDS * 2 ** (deletion.attempts - 1),
            settings.DELETION_LEASE_SECONDS,
        )
        deletion.error_code = error_code[:100]
        deletion.lease_expires_at = now + timedelta(seconds=backoff)
        deletion.updated_at = now
        deletion.save(update_fields=["error_code", "lease_expires_at", "updated_at"])


# -- propagation ----------------------------------------------------------------------


@dataclass
class _Plan:
    roots: list[UUID]
    derived_erase: list[UUID]
    derived_invalidate: list[UUID]
    digests: dict[UUID, str]
    subjects: set[int]
    events: dict[UUID, str]
    traces: list[UUID]
    terms: list[str]


@dataclass
class Propagation:
    """What the worker carries from the wipe to the probes. `terms` never leave memory."""

    terms: list[str]
    hot_memory_keys_purged: int
    elapsed_ms: float


def _roots(deletion: DeletionRequest) -> list[tuple[UUID, int, Any, str, str]]:
    """The claims the request names, staged as `erase` in the same statement that reads
    them: id, subject, value, text and value digest."""
    if deletion.scope == DeletionScope.SUBJECT:
        named, params = "c.subject_id = %s", [deletion.subject_id]
    else:
        # One memory is the claim with the revisions it superseded: its own history.
        named = f"""c.id IN (
            WITH RECURSIVE chain(id, supersedes_id) AS (
                SELECT id, supersedes_id FROM {_CLAIM} WHERE tenant_id = %s AND id = %s
              UNION
                SELECT c.id, c.supersedes_id FROM {_CLAIM} c
                JOIN chain ON c.id = chain.supersedes_id
                WHERE c.tenant_id = %s AND c.subject_id = %s
            )
            SELECT id FROM chain)"""  # noqa: S608
        params = [deletion.tenant_id, deletion.claim_id, deletion.tenant_id, deletion.subject_id]
    _execute(
        f"DROP TABLE IF EXISTS pg_temp.{_STAGED}; CREATE TEMPORARY TABLE {_STAGED} "
        "(id uuid NOT NULL, kind text NOT NULL, digest text NOT NULL DEFAULT '', "
        "PRIMARY KEY (kind, id)) ON COMMIT DROP",
        [],
    )
    rows = _rows(
        f"""
        WITH roots AS (
            SELECT c.id, c.subject_id, c.value, c.text, c.value_digest FROM {_CLAIM} c
            WHERE c.tenant_id = %s AND c.status <> 'erased' AND {named}
        ), staged AS (
            INSERT INTO {_STAGED} (id, kind, digest) SELECT id, 'erase', value_digest FROM roots
        )
        SELECT * FROM roots
        """,  # noqa: S608
        [deletion.tenant_id, *params],
    )
    return [(row[0], row[1], _json(row[2]), row[3], row[4]) for row in rows]


def _lineage(*, tenant_id: int, roots: Rows) -> list[tuple[UUID, int, Any, str, str]]:
    """Every claim derived from the roots, directly or through other derived claims:
    id, subject, value, text and value digest."""
    is_root, params = roots.match("to_claim_id")
    is_root_claim, claim_params = roots.match("c.id")
    rows = _rows(
        f"""
        WITH RECURSIVE lineage(id) AS (
            SELECT from_claim_id FROM {_LINEAGE} WHERE {is_root}
          UNION
            SELECT l.from_claim_id FROM {_LINEAGE} l JOIN lineage ON l.to_claim_id = lineage.id
        )
        SELECT c.id, c.subject_id, c.value, c.text, c.value_digest
        FROM {_CLAIM} c JOIN lineage ON c.id = lineage.id
        WHERE c.tenant_id = %s AND c.status <> 'erased' AND NOT ({is_root_claim})
        """,  # noqa: S608
        [*params, tenant_id, *claim_params],
    )
    return [(row[0], row[1], _json(row[2]), row[3], row[4]) for row in rows]


def _json(value: str | None) -> Any:
    # Django's connections load jsonb as text; the ORM decodes it per field, raw SQL here.
    return None if value is None else json.loads(value)


def _distinctive(*, tenant_id: int, candidates: list[str], excluded: Rows) -> list[str]:
    """The candidates no claim outside the deletion set contains (full text or n-grams)."""
    if not candidates:
        return []
    grams = [" ".join(ngrams(term)) for term in candidates]
    is_excluded, params = excluded.match("c.id")
    rows = _rows(
        f"""
        SELECT t.term FROM unnest(%s::text[], %s::text[]) AS t(term, grams)
        WHERE (numnode(plainto_tsquery('english', t.term)) > 0 OR t.grams <> '')
          AND NOT EXISTS (
            SELECT 1 FROM {_CLAIM} c
            WHERE c.tenant_id = %s AND c.status <> 'erased' AND NOT ({is_excluded})
              AND ((numnode(plainto_tsquery('english', t.term)) > 0
                    AND c.search_vector @@ plainto_tsquery('english', t.term))
                OR (t.grams <> '' AND c.ngrams @> string_to_array(t.grams, ' ')::varchar[]))
          )
        """,  # noqa: S608
        [candidates, grams, tenant_id, *params],
    )
    found = {row[0] for row in rows}
    kept = [term for term in candidates if term in found]
    return kept[: settings.DELETION_PROBE_TERMS]


def _stored_text(text: str) -> str:
    # A claim rejected for a secret keeps memdesk's placeholder, not the person's words:
    # "withheld", "secret" and "detected" would match every such claim's audit row.
    return "" if text == SECRET_PLACEHOLDER else text


def _plan(deletion: DeletionRequest) -> _Plan:
    tenant_id = deletion.tenant_id
    roots = _roots(deletion)
    root_ids = [row[0] for row in roots]
    digests = {row[0]: row[4] for row in roots}
    subjects = {deletion.subject_id, *(row[1] for row in roots)}
    # Everything below joins the staged rows rather than passing ids around.
    lineage = _lineage(tenant_id=tenant_id, roots=ERASE) if root_ids else []
    derived_ids = [row[0] for row in lineage]
    derived: dict[UUID, tuple[int, str, str]] = {
        claim_id: (subject_id, claim_content(text=text, value=value), digest)
        for claim_id, subject_id, value, text, digest in lineage
    }
    # Also the statistics of the roots, so the planner joins them sensibly.
    _stage([(row[0], "derived", row[4]) for row in lineage])

    terms = _distinctive(
        tenant_id=tenant_id,
        candidates=candidate_terms(
            claim_content(text=_stored_text(row[3]), value=row[2]) for row in roots
        ),
        excluded=Rows(staged=("erase", "derived")),
    )

    # A derived claim that restates the deleted content, or rests on nothing
    # but erased claims, is erased; one that merely built on it is invalidated.
    parents: dict[UUID, set[UUID]] = {claim_id: set() for claim_id in derived}
    if derived_ids:
        for child, parent in _rows(
            f"SELECT from_claim_id, to_claim_id FROM {_LINEAGE} "  # noqa: S608
            f"WHERE from_claim_id IN (SELECT id FROM {_STAGED} WHERE kind = 'derived')",
            [],
        ):
            parents[child].add(parent)
    erase = set(root_ids)
    erase.update(d for d, (_, content, _) in derived.items() if any(t in content for t in terms))
    grew = True
    while grew:
        grew = False
        for claim_id, claim_parents in parents.items():
            if claim_id not in erase and claim_parents and claim_parents <= erase:
                erase.add(claim_id)
                grew = True
    derived_erase = [d for d in derived_ids if d in erase]
    derived_invalidate = [d for d in derived_ids if d not in erase]
    if derived_ids:
        _execute(
            f"UPDATE {_STAGED} SET kind = CASE WHEN id = ANY(%s::uuid[]) THEN 'erase' "  # noqa: S608
            "ELSE 'invalidate' END WHERE kind = 'derived'",
            [derived_erase],
        )
    for claim_id, (subject_id, _, digest) in derived.items():
        subjects.add(subject_id)
        digests[claim_id] = digest

    erase_ids = [*root_ids, *derived_erase]
    patterns = like_patterns(terms)
    events: dict[UUID, str] = {}
    if deletion.scope == DeletionScope.SUBJECT:
        events.update(
            Event.objects.filter(
                tenant_id=tenant_id, subject_id=deletion.subject_id, redacted_at__isnull=True
            ).values_list("id", "digest")
        )
    else:
        # The user's own statements behind the erased claims, and any other
        # statement of theirs that repeats the deleted content.
        events.update(
            _rows(
                f"SELECT e.id, e.digest FROM {_SOURCE} s JOIN {_EVENT} e ON e.id = s.event_id "  # noqa: S608
                f"WHERE s.tenant_id = %s AND s.claim_id IN (SELECT id FROM {_STAGED} "
                "WHERE kind = 'erase') AND e.subject_id = %s AND e.redacted_at IS NULL",
                [tenant_id, deletion.subject_id],
            )
        )
        if patterns:
            events.update(
                _rows(
                    f"SELECT id, digest FROM {_EVENT} WHERE tenant_id = %s "  # noqa: S608
                    "AND subject_id = %s AND redacted_at IS NULL AND (text ILIKE ANY(%s) "
                    "OR body::text ILIKE ANY(%s) OR source_uri ILIKE ANY(%s))",
                    [tenant_id, deletion.subject_id, patterns, patterns, patterns],
                )
            )
    if patterns and erase_ids:
        # Agent output produced while the memory was injected, quoting it back.
        events.update(
            _rows(
                f"SELECT id, digest FROM {_EVENT} WHERE tenant_id = %s "  # noqa: S608
                # Most events quote nothing: testing that first spares them the
                # overlap test against every erased id.
                "AND redacted_at IS NULL AND cardinality(echo_of) > 0 "
                "AND echo_of && ARRAY(SELECT id FROM "
                f"{_STAGED} WHERE kind = 'erase') AND (text ILIKE ANY(%s) "
                "OR body::text ILIKE ANY(%s) OR source_uri ILIKE ANY(%s))",
                [tenant_id, patterns, patterns, patterns],
            )
        )

    traces: set[UUID] = set()
    if deletion.scope == DeletionScope.SUBJECT:
        traces.update(
            RecallTrace.objects.filter(
                tenant_id=tenant_id, subject_id=deletion.subject_id, redacted_at__isnull=True
            ).values_list("id", flat=True)
        )
    traces.update(
        row[0]
        for row in _rows(
            f"SELECT id FROM {_TRACE} WHERE tenant_id = %s AND subject_id = ANY(%s) "  # noqa: S608
            f"AND redacted_at IS NULL AND (chosen && ARRAY(SELECT id FROM {_STAGED} "
            "WHERE kind = 'erase') OR query ILIKE ANY(%s))",
            [tenant_id, sorted(subjects), patterns],
        )
    )
    _stage(
        [
            *((event, "event", digest) for event, digest in events.items()),
            *((trace, "trace", "") for trace in traces),
        ]
    )
    return _Plan(
        roots=root_ids,
        derived_erase=derived_erase,
        derived_invalidate=derived_invalidate,
        digests=digests,
        subjects=subjects,
        events=events,
        traces=sorted(traces),
        terms=terms,
    )


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


# -- verification ---------------------------------------------------------------------


def deletion_verify(
    *,
    lease: DeletionLease,
    worker: Actor,
    propagation: Propagation | None,
    now: datetime | None = None,
) -> DeletionRequest | None:
    """Purge hot memory once more, run the probes and complete the request with its report.

    A report with a dirty probe still completes (the erasure happened), and
    opens a `deletions` review item so a person looks at what survived.
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
        terms=propagation.terms if propagation is not None else None,
    )
    now = now or timezone.now()
    with transaction.atomic():
        deletion = _locked_for(lease, DeletionStatus.VERIFYING)
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
        deletion.finished_at = now
        dirty = [probe["name"] for probe in probes if not probe["clean"]]
        _move(
            deletion,
            to=DeletionStatus.COMPLETED,
            actor=worker,
            now=now,
            reason="clean" if clean else "dirty_probes",
            data={"clean": clean, "dirty": dirty},
        )
        deletion.save(
            update_fields=["status", "report", "lease_expires_at", "finished_at", "updated_at"]
        )
        if not clean:
            _open_deletion_review(deletion, [f"dirty:{name}" for name in dirty])
    return deletion


def deletion_run(*, deletion_id: UUID | str, worker: Actor) -> DeletionRequest | None:
    """One worker pass: take the request, propagate if not done yet, verify, complete.

    Safe to run twice: a second message finds the request leased or finished.
    """
    lease = deletion_claim(deletion_id=deletion_id, worker=worker)
    if lease is None:
        return None
    try:
        status = DeletionRequest.objects.values_list("status", flat=True).get(pk=lease.deletion_id)
        propagation = None
        if status == DeletionStatus.PROPAGATING:
            propagation = deletion_propagate(lease=lease, worker=worker)
            if propagation is None:
                return None
        return deletion_verify(lease=lease, worker=worker, propagation=propagation)
    except Exception as exc:
        logger.exception("deletion attempt failed", extra={"deletion": str(deletion_id)})
        deletion_release(lease=lease, worker=worker, error_code=type(exc).__name__)
        return None


def deletions_due_ids(*, now: datetime | None = None, limit: int = 500) -> list[UUID]:
    """Unfinished requests of every tenant with no live lease, oldest first (ids only)."""
    now = now or timezone.now()
    return list(
        DeletionRequest.objects.filter(_claimable(now))
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )


def deletions_dispatch_due(*, now: datetime | None = None, limit: int = 500) -> int:
    """Beat's safety net: wake a worker for every due request. A duplicate message
    costs one skipped claim."""
    ids = deletions_due_ids(now=now, limit=limit)
    if ids:
        deletion_enqueue(deletion_ids=ids)
    return len(ids)
