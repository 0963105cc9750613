"""Lineage: what was derived from a claim stops standing when the claim does.

Below both the claim writes and consolidation: a correction or a supersede in
`claims` and the periodic pass in `consolidation` invalidate derivations the
same way, so neither has to import the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.transitions import moves_recorded
from memory.claims.models import CLAIM_MACHINE, Claim, ClaimRole, ClaimStatus
from reviews.models import OPEN_STATUSES, ReviewItem
from reviews.services import reviews_cancel_for_targets

# A parent in one of these no longer vouches for what was derived from it.
GONE_PARENT_STATUSES = (
    ClaimStatus.SUPERSEDED,
    ClaimStatus.INVALIDATED,
    ClaimStatus.REJECTED,
    ClaimStatus.ERASED,
)
# Where consolidation's set-based moves (expiry, derived invalidation) may start.
_INVALIDATABLE = CLAIM_MACHINE.sources(ClaimStatus.INVALIDATED, ClaimRole.WORKER)
MAX_LINEAGE_DEPTH = 32
AUDIT_IDS = 200

_CLAIM = Claim._meta.db_table
_LINEAGE = Claim.derived_from.through._meta.db_table
_REVIEW = ReviewItem._meta.db_table


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


@dataclass
class Changed:
    """Claims a step changed and the subjects they belong to."""

    ids: list[str] = field(default_factory=list)
    subjects: set[int] = field(default_factory=set)
    # (claim, the status it left) for the moves a set-wise statement made.
    moved: list[tuple[str, str]] = field(default_factory=list)

    def add(self, claim_id: Any, subject_id: int, was: str | None = None) -> None:
        self.ids.append(str(claim_id))
        self.subjects.add(subject_id)
        if was is not None:
            self.moved.append((str(claim_id), was))


def claims_moved(
    *, tenant: Tenant, actor: Actor, to: str, by: str, reason: str, changed: Changed
) -> None:
    """The per-claim records of a set-wise move made in SQL (`claim.<to>` audit rows),
    as `claim_move` writes them for one claim."""
    if changed.moved:
        moves_recorded(CLAIM_MACHINE, tenant, actor, to, by, reason, changed.moved, None)


def claim_reviews_cancel(*, tenant: Tenant, claim_ids: Iterable[UUID | str]) -> int:
    """Close the open review items of claims that left review (erased, invalidated)."""
    return reviews_cancel_for_targets(tenant=tenant, target_type="claim", target_ids=claim_ids)


def claims_invalidate_derived(
    *,
    tenant: Tenant,
    actor: Actor,
    reason: str,
    parent_ids: Iterable[Any] | None = None,
    now: datetime | None = None,
) -> Changed:
    """Invalidate live claims derived from a parent that changed after them, transitively.

    With `parent_ids`, only those parents are considered (a correction, a
    supersede); without, every parent of the tenant. A derived claim with an
    open `stale` item is left to the editor the item asks; one the editor
    refreshed since its parent changed is newer than the change and stays.
    """
    now = now or timezone.now()
    changed = Changed()
    given = sorted({str(p) for p in parent_ids}) if parent_ids is not None else None
    if given == []:
        return changed
    parents = given
    for _ in range(MAX_LINEAGE_DEPTH):
        rows = _rows(
            f"""
            WITH affected AS (
                SELECT DISTINCT d.id, d.status AS was FROM {_CLAIM} d
                JOIN {_LINEAGE} l ON l.from_claim_id = d.id
                JOIN {_CLAIM} p ON p.id = l.to_claim_id
                WHERE d.tenant_id = %s AND d.status = ANY(%s) AND p.status = ANY(%s)
                  AND p.updated_at > d.updated_at
                  AND (%s::uuid[] IS NULL OR p.id = ANY(%s::uuid[]))
                  AND NOT EXISTS (
                    SELECT 1 FROM {_REVIEW} r
                    WHERE r.tenant_id = d.tenant_id AND r.queue = 'stale'
                      AND r.target_type = 'claim' AND r.target_id = d.id::text
                      AND r.status = ANY(%s))
            )
            UPDATE {_CLAIM} c SET status = 'invalidated', updated_at = %s
            FROM affected WHERE c.id = affected.id AND c.status = ANY(%s)
            RETURNING c.id, c.subject_id, affected.was
            """,  # noqa: S608 - table names come from model metadata
            [
                tenant.pk,
                _INVALIDATABLE,
                list(GONE_PARENT_STATUSES),
                parents,
                parents,
                list(OPEN_STATUSES),
                now,
                _INVALIDATABLE,
            ],
        )
        if not rows:
            break
        for claim_id, subject_id, was in rows:
            changed.add(claim_id, subject_id, was)
        parents = [str(row[0]) for row in rows]
    if changed.ids:
        claims_moved(
            tenant=tenant,
            actor=actor,
            to=ClaimStatus.INVALIDATED,
            by=ClaimRole.WORKER,
            reason=reason,
            changed=changed,
        )
        claim_reviews_cancel(tenant=tenant, claim_ids=changed.ids)
        single = given is not None and len(given) == 1
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="claims.derived_invalidated",
            target_type="claim" if single else "tenant",
            target_id=given[0] if single and given else tenant.pk,
            reason=reason,
            data={"count": len(changed.ids), "claims": changed.ids[:AUDIT_IDS]},
        )
    return changed
