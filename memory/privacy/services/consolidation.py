"""Consolidation: one idempotent pass over a tenant's memory.

The pass re-applies tombstones that drifted, expires claims past `expires_at`,
merges duplicate candidates, turns contradictions that slipped past the gate
(candidates approved in arrival order) into conflicts, settles conflicts
between verified sources by authority and then observation time (never by
arrival order; ties stay with an editor), invalidates derived claims whose
sources changed, opens a `stale` review item for stale claims that recalls
keep asking for, and rebuilds the hot memory of every subject it changed.

Each step is its own transaction that only touches rows still needing it, so
a second pass changes nothing and a pass that dies half-way is finished by
the next one. Tombstoned and erased rows are never read as sources.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from memory.claims.hot_memory import hot_memory_purge
from memory.claims.models import (
    AUTHORITY_RANK,
    CLAIM_MACHINE,
    Authority,
    Basis,
    Claim,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    RecallTrace,
    Subject,
)
from memory.claims.selectors.hot_memory import hot_memory
from memory.claims.services.claim_inputs import claim_version
from memory.claims.services.claim_moves import claim_merge_into, claim_move
from memory.claims.services.lineage import (
    AUDIT_IDS,
    Changed,
    claim_reviews_cancel,
    claims_invalidate_derived,
    claims_moved,
)
from memory.privacy.models import ConsolidationRun, ConsolidationTrigger
from memory.privacy.services.erasure import lifecycle_lock_key
from memory.privacy.services.tombstones import tombstones_enforce
from reviews.models import OPEN_STATUSES, Queue, ReviewItem
from reviews.services import review_cancel_for_target, review_open

# Where consolidation's set-based moves (expiry, derived invalidation) may start.
_INVALIDATABLE = CLAIM_MACHINE.sources(ClaimStatus.INVALIDATED, ClaimRole.WORKER)

_CLAIM = Claim._meta.db_table
_REVIEW = ReviewItem._meta.db_table
_TRACE = RecallTrace._meta.db_table


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


@contextlib.contextmanager
def _tenant_lifecycle_lock(tenant_id: int) -> Iterator[None]:
    # Session level, so the pass's steps can commit one by one while a
    # deletion of the same tenant waits for the whole pass (and vice versa).
    key = lifecycle_lock_key(tenant_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _audit(tenant: Tenant, actor: Actor, verb: str, changed: Changed) -> None:
    if changed.ids:
        audit_record(
            tenant=tenant,
            actor=actor,
            verb=verb,
            target_type="tenant",
            target_id=tenant.pk,
            data={"count": len(changed.ids), "claims": changed.ids[:AUDIT_IDS]},
        )


def _expire(*, tenant: Tenant, actor: Actor, now: datetime) -> Changed:
    changed = Changed()
    rows = _rows(
        f"""
        WITH due AS (
            SELECT id, status AS was FROM {_CLAIM}
            WHERE tenant_id = %s AND status = ANY(%s) AND expires_at <= %s
            FOR UPDATE
        )
        UPDATE {_CLAIM} c SET status = 'invalidated', updated_at = %s
        FROM due WHERE c.id = due.id
        RETURNING c.id, c.subject_id, due.was
        """,  # noqa: S608 - table names come from model metadata
        [tenant.pk, _INVALIDATABLE, now, now],
    )
    for claim_id, subject_id, was in rows:
        changed.add(claim_id, subject_id, was)
    if changed.ids:
        claims_moved(
            tenant=tenant,
            actor=actor,
            to=ClaimStatus.INVALIDATED,
            by=ClaimRole.WORKER,
            reason="expired",
            changed=changed,
        )
        claim_reviews_cancel(tenant=tenant, claim_ids=changed.ids)
    _audit(tenant, actor, "claims.expired", changed)
    return changed


def _copy_sources(*, tenant: Tenant, source: Claim, into: Claim) -> int:
    have_events = set(into.sources.exclude(event=None).values_list("event_id", flat=True))
    have_uris = set(into.sources.filter(event=None).values_list("uri", flat=True))
    rows = [
        ClaimSource(
            tenant=tenant,
            claim=into,
            event_id=s.event_id,
            uri=s.uri,
            observed_at=s.observed_at,
            digest=s.digest,
        )
        for s in source.sources.all()
        if (s.event_id and s.event_id not in have_events)
        or (not s.event_id and s.uri not in have_uris)
    ]
    ClaimSource.objects.bulk_create(rows)
    return len(rows)


def _merge_duplicates(*, tenant: Tenant, actor: Actor) -> Changed:
    """Candidates that repeat an active claim fold into it; candidates that repeat each
    other fold into the oldest. Evidence is kept, the duplicates are rejected."""
    changed = Changed()
    candidates = Claim.objects.filter(tenant=tenant, status=ClaimStatus.CANDIDATE)
    same_as_active = Claim.objects.filter(
        tenant=tenant,
        subject_id=OuterRef("subject_id"),
        predicate=OuterRef("predicate"),
        scope_key=OuterRef("scope_key"),
        status=ClaimStatus.ACTIVE,
        value=OuterRef("value"),
    )
    duplicates_of_active = list(
        candidates.annotate(into=Subquery(same_as_active.values("id")[:1])).filter(
            into__isnull=False
        )
    )
    for candidate in duplicates_of_active:
        claim_merge_into(
            tenant=tenant,
            actor=actor,
            claim_id=candidate.pk,
            into_id=candidate.into,
            by=ClaimRole.WORKER,
            reason=f"duplicate of {candidate.into}",
        )
        review_cancel_for_target(tenant=tenant, target_type="claim", target_id=candidate.pk)
        changed.add(candidate.pk, candidate.subject_id)

    groups = list(
        Claim.objects.filter(tenant=tenant, status=ClaimStatus.CANDIDATE)
        .values("subject_id", "predicate", "scope_key", "value")
        .annotate(n=Count("id"), ids=ArrayAgg("id", order_by=("recorded_at", "id")))
        .filter(n__gt=1)
    )
    for group in groups:
        keep = Claim.objects.select_for_update().get(pk=group["ids"][0])
        for duplicate_id in group["ids"][1:]:
            duplicate = Claim.objects.select_for_update().get(pk=duplicate_id)
            _copy_sources(tenant=tenant, source=duplicate, into=keep)
            claim_move(
                tenant=tenant,
                actor=actor,
                claim_id=duplicate.pk,
                to=ClaimStatus.REJECTED,
                by=ClaimRole.WORKER,
                reason=f"duplicate of {keep.pk}",
            )
            review_cancel_for_target(tenant=tenant, target_type="claim", target_id=duplicate.pk)
            changed.add(duplicate.pk, duplicate.subject_id)
        if group["ids"][1:]:
            Claim.objects.filter(pk=keep.pk).update(updated_at=timezone.now())
    return changed


def _open_conflict(
    *, tenant: Tenant, actor: Actor, claim: Claim, others: list[Claim], reasons: list[str]
) -> None:
    """Make `claim` the reviewed side of a conflict with `others` and open its item."""
    for side in [claim, *others]:
        if side.status == ClaimStatus.CANDIDATE:
            claim_move(
                tenant=tenant,
                actor=actor,
                claim_id=side.pk,
                to=ClaimStatus.CONFLICTED,
                by=ClaimRole.WORKER,
                reason="contradiction_detected",
            )
            review_cancel_for_target(
                tenant=tenant, target_type="claim", target_id=side.pk, queue=Queue.CANDIDATES
            )
    now = timezone.now()
    Claim.objects.filter(pk=claim.pk).update(
        conflicts_with=sorted({*claim.conflicts_with, *(o.pk for o in others)}), updated_at=now
    )
    for other in others:
        Claim.objects.filter(pk=other.pk).update(
            conflicts_with=sorted({*other.conflicts_with, claim.pk}), updated_at=now
        )
    claim.refresh_from_db()
    review_open(
        tenant=tenant,
        queue=Queue.CONFLICTS,
        target_type="claim",
        target_id=claim.pk,
        target_version=claim_version(claim),
        subject_key=claim.subject.key,
        reason_codes=reasons,
    )


def _detect_conflicts(*, tenant: Tenant, actor: Actor) -> Changed:
    """Contradictions the gate could not see because they arrived as candidates before
    (or beside) each other: approving them one by one would settle them by arrival order."""
    changed = Changed()
    active_on_identity = Claim.objects.filter(
        tenant=tenant,
        subject_id=OuterRef("subject_id"),
        predicate=OuterRef("predicate"),
        scope_key=OuterRef("scope_key"),
        status=ClaimStatus.ACTIVE,
    )
    contradicting = list(
        Claim.objects.select_for_update(of=("self",))
        .select_related("subject")
        .filter(tenant=tenant, status=ClaimStatus.CANDIDATE)
        .annotate(active_id=Subquery(active_on_identity.values("id")[:1]))
        .filter(active_id__isnull=False)
        .order_by("recorded_at", "id")
    )
    for candidate in contradicting:
        active = Claim.objects.select_for_update().get(pk=candidate.active_id)
        _open_conflict(
            tenant=tenant,
            actor=actor,
            claim=candidate,
            others=[active],
            reasons=["contradicts_active", "detected_by_consolidation"],
        )
        changed.add(candidate.pk, candidate.subject_id)

    rival_identities = list(
        Claim.objects.filter(tenant=tenant, status=ClaimStatus.CANDIDATE)
        .filter(~Exists(active_on_identity))
        .values("subject_id", "predicate", "scope_key")
        .annotate(distinct_values=Count("value", distinct=True))
        .filter(distinct_values__gt=1)
    )
    for identity in rival_identities:
        sides = list(
            Claim.objects.select_for_update(of=("self",))
            .select_related("subject")
            .filter(
                tenant=tenant,
                status=ClaimStatus.CANDIDATE,
                subject_id=identity["subject_id"],
                predicate=identity["predicate"],
                scope_key=identity["scope_key"],
            )
            .order_by("-recorded_at", "-id")
        )
        _open_conflict(
            tenant=tenant,
            actor=actor,
            claim=sides[0],
            others=sides[1:],
            reasons=["rival_candidates", "detected_by_consolidation"],
        )
        for side in sides:
            changed.add(side.pk, side.subject_id)
    return changed


def _verified(claim: Claim) -> bool:
    # The gate stores `user_explicit` only with a source from the user channel
    # (whose basis is the user's report, not a tool's check) and `tool_verified`
    # only with a tool result; a tool claim must also say it checked its source.
    if claim.authority == Authority.USER_EXPLICIT:
        return True
    return claim.authority == Authority.TOOL_VERIFIED and claim.basis == Basis.VERIFIED


def _winner(sides: list[Claim]) -> tuple[Claim, str] | None:
    """The side authority and then observation time prefer, or None if they cannot tell."""
    if not all(_verified(s) for s in sides):
        return None
    ranked = sorted(
        sides, key=lambda s: (AUTHORITY_RANK[Authority(s.authority)], s.available_at), reverse=True
    )
    first, second = ranked[0], ranked[1]
    if first.authority != second.authority:
        return first, "settled_by_authority"
    if first.available_at != second.available_at:
        return first, "settled_by_observation_time"
    return None


def _settle_conflicts(*, tenant: Tenant, actor: Actor) -> Changed:
    changed = Changed()
    seen: set[UUID] = set()
    conflicted = list(
        Claim.objects.filter(tenant=tenant, status=ClaimStatus.CONFLICTED).order_by(
            "recorded_at", "id"
        )
    )
    live = {ClaimStatus.ACTIVE, ClaimStatus.CONFLICTED}
    for claim in conflicted:
        if claim.pk in seen:
            continue
        sides = list(
            Claim.objects.select_for_update()
            .filter(tenant=tenant, pk__in=[claim.pk, *claim.conflicts_with], status__in=live)
            .order_by("pk")
        )
        seen.update(s.pk for s in sides)
        if len(sides) < 2:
            continue
        decided = _winner(sides)
        if decided is None:
            continue
        winner, reason = decided
        claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=winner.pk,
            to=ClaimStatus.ACTIVE,
            by=ClaimRole.WORKER,
            reason=reason,
        )
        for side in sides:
            review_cancel_for_target(
                tenant=tenant, target_type="claim", target_id=side.pk, queue=Queue.CONFLICTS
            )
            changed.add(side.pk, side.subject_id)
            if side.pk != winner.pk and side.status == ClaimStatus.CONFLICTED:
                claim_move(
                    tenant=tenant,
                    actor=actor,
                    claim_id=side.pk,
                    to=ClaimStatus.SUPERSEDED,
                    by=ClaimRole.WORKER,
                    reason=f"lost_conflict:{reason}",
                )
    return changed


def _flag_stale_in_demand(*, tenant: Tenant, actor: Actor, now: datetime) -> Changed:
    """Stale claims that recalls keep asking for (include_stale) go to the stale queue."""
    changed = Changed()
    rows = _rows(
        f"""
        SELECT c.id FROM {_CLAIM} c
        WHERE c.tenant_id = %s AND c.status = 'active' AND c.refresh_after <= %s
          AND NOT EXISTS (
            SELECT 1 FROM {_REVIEW} r
            WHERE r.tenant_id = c.tenant_id AND r.queue = 'stale' AND r.target_type = 'claim'
              AND r.target_id = c.id::text AND r.status = ANY(%s))
          AND (SELECT count(*) FROM {_TRACE} t
               WHERE t.tenant_id = c.tenant_id AND t.subject_id = c.subject_id
                 AND t.created_at >= c.refresh_after AND t.chosen @> ARRAY[c.id]) >= %s
        """,  # noqa: S608
        [tenant.pk, now, list(OPEN_STATUSES), settings.STALE_ASK_THRESHOLD],
    )
    for claim in Claim.objects.select_related("subject").filter(pk__in=[r[0] for r in rows]):
        review_open(
            tenant=tenant,
            queue=Queue.STALE,
            target_type="claim",
            target_id=claim.pk,
            target_version=claim_version(claim),
            subject_key=claim.subject.key,
            reason_codes=["stale_in_demand"],
        )
        changed.add(claim.pk, claim.subject_id)
    _audit(tenant, actor, "claims.stale_in_demand", changed)
    return changed


def _rebuild_hot_memory(*, tenant: Tenant, subject_ids: set[int]) -> tuple[int, int]:
    """Drop the changed subjects' cached blocks and render them again from the claims;
    each block lists the claims it was built from."""
    purged = hot_memory_purge(tenant_id=tenant.pk, subject_ids=subject_ids)
    rebuilt = 0
    for subject in Subject.objects.filter(tenant=tenant, pk__in=subject_ids):
        # The block an agent reads without a scope: the subject's global claims.
        hot_memory(
            tenant=tenant, subject=subject, budget_chars=settings.HOT_MEMORY_BUDGET_CHARS, scope={}
        )
        rebuilt += 1
    return purged, rebuilt


def consolidation_run(
    *,
    tenant: Tenant,
    trigger: str = ConsolidationTrigger.COMMAND,
    actor: Actor | None = None,
    now: datetime | None = None,
) -> ConsolidationRun:
    """One pass over a tenant. Idempotent; waits for a deletion of the tenant to finish."""
    actor = actor or Actor.system("consolidation")
    started = timezone.now()
    now = now or started
    counts: dict[str, int] = {}
    claims: dict[str, list[str]] = {}
    subjects: set[int] = set()

    def record(step: str, changed: Changed) -> None:
        counts[step] = len(changed.ids)
        if changed.ids:
            claims[step] = changed.ids[:AUDIT_IDS]
        subjects.update(changed.subjects)

    with _tenant_lifecycle_lock(tenant.pk):
        with transaction.atomic():
            enforced = tombstones_enforce(tenant=tenant, now=now)
            if enforced.changed:
                audit_record(
                    tenant=tenant,
                    actor=actor,
                    verb="tombstones.enforced",
                    target_type="tenant",
                    target_id=tenant.pk,
                    data=dict(enforced.counts),
                )
        counts["tombstones_enforced"] = enforced.changed
        subjects.update(enforced.subjects)
        with transaction.atomic():
            record("expired", _expire(tenant=tenant, actor=actor, now=now))
        with transaction.atomic():
            record("duplicates_merged", _merge_duplicates(tenant=tenant, actor=actor))
        with transaction.atomic():
            record("conflicts_detected", _detect_conflicts(tenant=tenant, actor=actor))
        with transaction.atomic():
            record("conflicts_settled", _settle_conflicts(tenant=tenant, actor=actor))
        with transaction.atomic():
            record(
                "derived_invalidated",
                claims_invalidate_derived(
                    tenant=tenant, actor=actor, reason="source_changed", now=now
                ),
            )
        with transaction.atomic():
            record("stale_flagged", _flag_stale_in_demand(tenant=tenant, actor=actor, now=now))
    purged, rebuilt = _rebuild_hot_memory(tenant=tenant, subject_ids=subjects)
    return ConsolidationRun.objects.create(
        tenant=tenant,
        trigger=trigger,
        started_at=started,
        finished_at=timezone.now(),
        changes={
            "counts": counts,
            "claims": claims,
            "hot_memory": {"keys_purged": purged, "blocks_rebuilt": rebuilt},
        },
    )


def consolidation_run_all(
    *, trigger: str = ConsolidationTrigger.BEAT, tenants: Iterable[Tenant] | None = None
) -> list[ConsolidationRun]:
    return [
        consolidation_run(tenant=tenant, trigger=trigger)
        for tenant in (tenants if tenants is not None else Tenant.objects.order_by("pk"))
    ]
