"""Set-based erasure primitives: the statements that wipe content from each table.

Each touches only rows that still need it (so running it again changes
nothing) and says what it changed. `Rows` names the rows: the ids a
propagation planned, the rows it staged in a temporary table, or everything
a tenant's tombstones name. A deletion's propagation and tombstone
enforcement (reapplication after a restore, consolidation's drift repair)
both erase through these, under `lifecycle_lock`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.contrib.postgres.indexes import GinIndex
from django.db import connection

from common.models import IdempotencyRecord
from memory.claims.models import (
    Claim,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    Event,
    RecallTrace,
    RecallUse,
    claim_sources_for,
)
from memory.claims.services.embeddings import claim_embeddings_delete_where
from memory.privacy.held_content import (
    CLAIM_CONTENT,
    ERASED_PREFIX,
    REDACTED_EVENT_KIND,
    REPLY_CONTENT,
    REVIEW_TOPIC_CONTENT,
    TRACE_CONTENT,
    URI_SOURCE_CONTENT,
)
from memory.privacy.models import (
    DataExport,
    DeletionRequest,
    Tombstone,
    TombstoneAction,
    TombstoneTarget,
)
from memory.privacy.models.exports import CONTENT_EXPORT_STATUSES

CLAIM_TABLE = Claim._meta.db_table
LINEAGE_TABLE = Claim.derived_from.through._meta.db_table
SOURCE_TABLE = ClaimSource._meta.db_table
EVENT_TABLE = Event._meta.db_table
TRACE_TABLE = RecallTrace._meta.db_table
_USE = RecallUse._meta.db_table
_TOMBSTONE = Tombstone._meta.db_table
_IDEMPOTENCY = IdempotencyRecord._meta.db_table
_REVIEW_ITEM = REVIEW_TOPIC_CONTENT.table
# The rows one propagation touches, staged server-side once: every statement joins
# this table instead of shipping (and re-parsing) an array of 10,000 ids.
STAGED_TABLE = "memdesk_deletion_rows"


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


# The claims' full-text and n-gram indexes.
_CLAIM_GIN_INDEXES = [index.name for index in Claim._meta.indexes if isinstance(index, GinIndex)]


def claim_index_pending_flush() -> None:
    """Move the pending entries of the claims' GIN indexes into the indexes proper.

    Every search of a GIN index also reads its whole pending list (the entries of
    every claim written since the last VACUUM): 10,000 claims just wiped make each
    search cost milliseconds, and a deletion searches both indexes for each of its
    words before the erasure and again in its probes. Moving them costs about a
    millisecond.
    Only the indexes' owner may; for anyone else they stay where they are.
    """
    sql_execute(
        "SELECT gin_clean_pending_list(i.oid) FROM pg_class i "
        "WHERE i.oid = ANY(ARRAY(SELECT to_regclass(name) FROM unnest(%s::text[]) AS name)) "
        "AND pg_has_role(i.relowner, 'USAGE')",
        [_CLAIM_GIN_INDEXES],
    )


def sql_rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def sql_execute(sql: str, params: list[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        changed: int = cursor.rowcount
        return changed


def stage_rows(rows: list[tuple[UUID, str, str]]) -> None:
    """Add (id, kind, digest) rows to the propagation's temporary table (created by
    `_roots`, dropped at commit) and refresh its statistics, in one round trip."""
    sql_execute(
        f"""
        INSERT INTO {STAGED_TABLE} (id, kind, digest)
        SELECT * FROM unnest(%s::uuid[], %s::text[], %s::text[])
        ON CONFLICT DO NOTHING;
        ANALYZE {STAGED_TABLE};
        """,  # noqa: S608
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
    )


@dataclass(frozen=True)
class Rows:
    ids: list[UUID] | None = None
    # (tenant, target types, actions) of the tombstones whose targets are meant.
    tombstoned: tuple[int, tuple[str, ...], tuple[str, ...]] | None = None
    # Kinds of rows staged by this propagation (see `stage_rows`).
    staged: tuple[str, ...] | None = None

    @classmethod
    def of_tombstones(
        cls, tenant_id: int, target_types: Iterable[str], actions: Iterable[str]
    ) -> Rows:
        return cls(tombstoned=(tenant_id, tuple(target_types), tuple(actions)))

    def match(self, column: str, *, as_text: bool = False) -> tuple[str, list[Any]]:
        """A SQL condition on `column` (uuid, or text with `as_text`) and its parameters."""
        if self.staged is not None:
            staged_id = "id::text" if as_text else "id"
            return (
                f"{column} IN (SELECT {staged_id} FROM {STAGED_TABLE} WHERE kind = ANY(%s))",  # noqa: S608
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
    embeddings_deleted: int


def _erased_digest_sql(column: str) -> str:
    """SQL replacing an agent's string by a short digest of it, once (a digest stays as it is)."""
    return (
        f"CASE WHEN starts_with({column}, '{ERASED_PREFIX}') THEN {column} ELSE "
        f"'{ERASED_PREFIX}' || substr(encode(sha256(convert_to({column}, 'UTF8')), 'hex'), 1, 24) "
        "END"
    )


def erase_claims(*, tenant_id: int, rows: Rows, now: datetime) -> ErasedClaims:
    """Wipe value, text, scope and both index entries; the predicate becomes a digest
    and the value digest stays."""
    # Claims are wiped, not deleted, so no cascade removes the vectors of their text.
    embeddings = claim_embeddings_delete_where(tenant_id=tenant_id, match=rows.match("claim_id"))
    where, params = rows.match("id")
    erased = sql_rows(
        f"""
        WITH target AS (
            SELECT id, search_vector IS NOT NULL AS had_fts, cardinality(ngrams) > 0 AS had_grams
            FROM {CLAIM_TABLE}
            WHERE tenant_id = %s AND {where}
              AND {CLAIM_CONTENT.sql()}
            FOR UPDATE
        )
        UPDATE {CLAIM_TABLE} AS c
        SET status = 'erased', value = NULL, text = '', search_vector = NULL,
            ngrams = '{{}}', predicate = {_erased_digest_sql("c.predicate")},
            scope = '{{}}'::jsonb, scope_key = '{{}}', scope_size = 0, updated_at = %s
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
        embeddings_deleted=embeddings,
    )


def remove_uri_sources(*, tenant_id: int, claims: Rows) -> int:
    # A uri may itself carry personal content; event sources keep only ids and digests.
    where, params = claims.match("claim_id")
    return sql_execute(
        f"DELETE FROM {SOURCE_TABLE} WHERE tenant_id = %s AND {URI_SOURCE_CONTENT.sql()} "  # noqa: S608
        f"AND {where}",
        [tenant_id, *params],
    )


def invalidate_claims(*, tenant_id: int, rows: Rows, now: datetime) -> list[tuple[UUID, int]]:
    where, params = rows.match("id")
    return sql_rows(
        f"UPDATE {CLAIM_TABLE} SET status = 'invalidated', updated_at = %s "  # noqa: S608
        f"WHERE tenant_id = %s AND status = ANY(%s) AND {where} RETURNING id, subject_id",
        [now, tenant_id, claim_sources_for(ClaimStatus.INVALIDATED, ClaimRole.DELETION), *params],
    )


def drop_conflict_links(
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
    return sql_execute(
        f"""
        WITH linked AS MATERIALIZED (
            SELECT id, conflicts_with FROM {CLAIM_TABLE}
            WHERE tenant_id = %s AND subject_id = ANY(%s) AND cardinality(conflicts_with) > 0
              AND status <> 'erased'
        ), changed AS (
            SELECT linked.id, ARRAY(
                SELECT x FROM unnest(linked.conflicts_with) AS x WHERE NOT ({is_erased})
            ) AS kept
            FROM linked
        )
        UPDATE {CLAIM_TABLE} AS c SET conflicts_with = changed.kept, updated_at = %s
        FROM changed
        WHERE c.id = changed.id AND cardinality(changed.kept) < cardinality(c.conflicts_with)
        """,  # noqa: S608
        [tenant_id, subject_ids, *params, now],
    )


def redact_events(*, tenant_id: int, rows: Rows, now: datetime) -> int:
    # The ledger's trigger allows exactly this one update per event, so this reaches
    # only the unredacted part of `EVENT_CONTENT`: a redacted event can never be
    # touched again, and one that still held content would be the probe's to report.
    where, params = rows.match("id")
    return sql_execute(
        f"UPDATE {EVENT_TABLE} SET text = '', body = '{{}}'::jsonb, source_uri = '', "  # noqa: S608
        "run_id = '', agent = '', kind = %s, stage = '', idempotency_key = '', "
        "effect = NULL, evidence = '[]'::jsonb, "
        f"redacted_at = %s WHERE tenant_id = %s AND redacted_at IS NULL AND {where}",
        [REDACTED_EVENT_KIND, now, tenant_id, *params],
    )


# The run and task ids agents reported with their uses of the traces just redacted
# (uses are refused once a trace is redacted, so nothing is reported after this).
_BLANK_USES = (
    f"uses AS (UPDATE {_USE} SET run_id = '', task_id = '' "  # noqa: S608
    "WHERE tenant_id = %s AND trace_id IN (SELECT id FROM redacted) "
    "AND (run_id <> '' OR task_id <> '') RETURNING 1)"
)


def redact_traces(*, tenant_id: int, rows: Rows, now: datetime) -> int:
    where, params = rows.match("id")
    redacted: int = sql_rows(
        f"WITH redacted AS (UPDATE {TRACE_TABLE} SET query = '', filters = '{{}}'::jsonb, "  # noqa: S608
        "ranking = '{}'::jsonb, "
        "redacted_at = COALESCE(redacted_at, %s) WHERE tenant_id = %s "
        f"AND {TRACE_CONTENT.sql()} AND {where} RETURNING id), {_BLANK_USES} "
        "SELECT count(*) FROM redacted",
        [now, tenant_id, *params, tenant_id],
    )[0][0]
    return redacted


def redact_traces_choosing(
    *, tenant_id: int, subject_ids: list[int], claim_ids: list[UUID], now: datetime
) -> int:
    """Redact recalls that returned claims which had to be erased again (they were
    recalled while restored), and tombstone them under the claim's deletion."""
    redacted: int = sql_rows(
        f"""
        WITH redacted AS (
            UPDATE {TRACE_TABLE} SET query = '', filters = '{{}}'::jsonb, ranking = '{{}}'::jsonb,
                redacted_at = %s
            WHERE tenant_id = %s AND subject_id = ANY(%s) AND redacted_at IS NULL
              AND chosen && %s::uuid[]
            RETURNING id, chosen
        ), {_BLANK_USES}, tombstoned AS (
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
            tenant_id,
            TombstoneTarget.RECALL_TRACE,
            TombstoneAction.REDACTED,
            now,
            tenant_id,
            TombstoneTarget.CLAIM,
        ],
    )[0][0]
    return redacted


def redact_idempotency_replies(*, tenant_id: int, rows: Rows) -> int:
    """Stored API replies (kept for Idempotency-Key replays) that carry an erased row."""
    where, params = rows.match("response_body->>'id'", as_text=True)
    return sql_execute(
        f"UPDATE {_IDEMPOTENCY} "  # noqa: S608
        "SET response_body = jsonb_build_object('id', response_body->'id', 'redacted', true) "
        f"WHERE tenant_id = %s AND {REPLY_CONTENT.sql()} AND {where}",
        [tenant_id, *params],
    )


def redact_replies_quoting(*, tenant_id: int, patterns: list[str]) -> int:
    """Stored API replies of any row that quote the deleted content's words."""
    if not patterns:
        return 0
    return sql_execute(
        f"UPDATE {_IDEMPOTENCY} "  # noqa: S608
        "SET response_body = jsonb_build_object('id', response_body->'id', 'redacted', true) "
        f"WHERE tenant_id = %s AND {REPLY_CONTENT.sql()} AND response_body::text ILIKE ANY(%s)",
        [tenant_id, patterns],
    )


def erase_review_topics(*, tenant_id: int, claims: Rows) -> int:
    """A claim's review items name its predicate as their topic: a digest replaces it."""
    where, params = claims.match("target_id", as_text=True)
    return sql_execute(
        f"UPDATE {_REVIEW_ITEM} SET topic = {_erased_digest_sql('topic')} "  # noqa: S608
        f"WHERE tenant_id = %s AND {REVIEW_TOPIC_CONTENT.sql()} AND {where}",
        [tenant_id, *params],
    )


def write_tombstones(
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
    return sql_execute(
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


def write_staged_tombstones(
    *, tenant_id: int, deletion_id: UUID, kind: str, target_type: str, action: str, now: datetime
) -> int:
    return sql_execute(
        f"""
        INSERT INTO {_TOMBSTONE} (tenant_id, deletion_id, target_type, target_id, action,
                                  digest, created_at)
        SELECT %s, %s, %s, s.id, %s, s.digest, %s FROM {STAGED_TABLE} s WHERE s.kind = %s
        ON CONFLICT (tenant_id, target_type, target_id, action) DO NOTHING
        """,  # noqa: S608
        [tenant_id, deletion_id, target_type, action, now, kind],
    )


def erase_exports_outlived_by_deletions(*, tenant_id: int) -> int:
    """Erase every stored export that a deletion of one of its subjects, moving after the
    export was asked for, would have erased (the `deletion_erases_exports` trigger does it
    as the deletion moves): after a restore, an export file from the backup comes back
    with the person's words in it."""
    return sql_execute(
        f"""
        UPDATE {DataExport._meta.db_table} AS e
           SET status = 'erased', content = '', size_bytes = 0, digest = '',
               lease_expires_at = NULL
         WHERE e.tenant_id = %s AND e.status = ANY(%s)
           AND EXISTS (
             SELECT 1 FROM {DeletionRequest._meta.db_table} d
             WHERE d.tenant_id = e.tenant_id
               AND e.subject_ids @> ARRAY[d.subject_id]::bigint[]
               AND d.updated_at >= e.created_at
           )
        """,  # noqa: S608
        [tenant_id, list(CONTENT_EXPORT_STATUSES)],
    )
