"""Taking back a review decision on claims: what it changed, and putting it back.

A decision on the candidates, conflicts or stale queue moves a few claims: the
item's target, the other sides of its conflict, and the claim standing on the
target's identity (an approval supersedes it). `claims_snapshot` records their
reviewable state before and after the decision; `claims_restore` moves them
back with the `undo` role of `CLAIM_TRANSITIONS`, one audited move each, and
restores what the decision rewrote beside the status (scope, conflict links,
validity, refresh date, the superseded link).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import InvalidTransition, Problem
from memory.claims.models import Claim, ClaimRole, ClaimStatus
from memory.claims.services.claim_inputs import identity_lock, scope_key
from memory.claims.services.claim_moves import claim_move
from reviews.models import ReviewItem


def _state(claim: Claim) -> dict[str, Any]:
    return {
        "status": claim.status,
        "scope": claim.scope,
        "conflicts_with": sorted(str(other) for other in claim.conflicts_with),
        "valid_to": claim.valid_to.isoformat() if claim.valid_to else None,
        "refresh_after": claim.refresh_after.isoformat() if claim.refresh_after else None,
        "supersedes": str(claim.supersedes_id) if claim.supersedes_id else None,
        "revision": claim.revision,
        # A recall since the decision means an agent acted on it: the undo is refused.
        "use_count": claim.use_count,
    }


def claims_snapshot(*, item: ReviewItem, also: Sequence[str] = ()) -> dict[str, Any]:
    """The state of every claim a decision on `item` may move (and of the claims `also`
    names), keyed by claim id."""
    target = Claim.objects.filter(tenant_id=item.tenant_id, pk=item.target_id).first()
    if target is None:
        return {}
    standing = Claim.objects.filter(
        tenant_id=item.tenant_id,
        subject_id=target.subject_id,
        predicate=target.predicate,
        scope_key=target.scope_key,
        status=ClaimStatus.ACTIVE,
    ).values_list("pk", flat=True)
    ids = {target.pk, *target.conflicts_with, *standing, *also}
    claims = Claim.objects.filter(tenant_id=item.tenant_id, pk__in=ids).order_by("pk")
    return {str(claim.pk): _state(claim) for claim in claims}


def claims_restore(
    *, tenant: Tenant, actor: Actor, before: dict[str, Any], decision_id: int
) -> list[Claim]:
    """Put the claims back as `before` recorded them. Claims leaving `active` move first,
    so the identity is free when the others return to it; a claim of another decision
    standing there now means the target moved (`target_changed`)."""
    reason = f"undo of review decision {decision_id}"
    order = sorted(before.items(), key=lambda pair: pair[1]["status"] == ClaimStatus.ACTIVE)
    restored: list[Claim] = []
    try:
        with transaction.atomic():
            for claim_id, state in order:
                restored.append(
                    _restore_one(
                        tenant=tenant,
                        actor=actor,
                        claim_id=claim_id,
                        state=state,
                        reason=reason,
                        others=set(before),
                    )
                )
    except (IntegrityError, InvalidTransition) as clash:
        raise _moved() from clash
    return restored


def _restore_one(
    *,
    tenant: Tenant,
    actor: Actor,
    claim_id: str,
    state: dict[str, Any],
    reason: str,
    others: set[str],
) -> Claim:
    claim = (
        Claim.objects.select_for_update().select_related("subject").get(tenant=tenant, pk=claim_id)
    )
    scope = state["scope"]
    if state["status"] == ClaimStatus.ACTIVE and claim.status != ClaimStatus.ACTIVE:
        # The writers' identity lock, so no claim becomes active there between this look
        # and the move (which would otherwise supersede it without a word).
        identity_lock(
            tenant=tenant,
            subject=claim.subject,
            predicate=claim.predicate,
            scope_json=scope_key(scope),
        )
        standing = (
            Claim.objects.filter(
                tenant=tenant,
                subject_id=claim.subject_id,
                predicate=claim.predicate,
                scope_key__in={claim.scope_key, scope_key(scope)},
                status=ClaimStatus.ACTIVE,
            )
            .exclude(pk__in=others)
            .exists()
        )
        if standing:
            raise _moved()
    if claim.status != state["status"]:
        claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=claim.pk,
            to=state["status"],
            by=ClaimRole.UNDO,
            reason=reason,
        )
    valid_to = state["valid_to"]
    refresh_after = state["refresh_after"]
    Claim.objects.filter(pk=claim.pk).update(
        scope=scope,
        scope_key=scope_key(scope),
        scope_size=len(scope),
        conflicts_with=state["conflicts_with"],
        valid_to=parse_datetime(valid_to) if valid_to else None,
        refresh_after=parse_datetime(refresh_after) if refresh_after else None,
        supersedes_id=state["supersedes"],
        updated_at=timezone.now(),
    )
    claim.refresh_from_db()
    return claim


def _moved() -> Problem:
    return Problem(
        "target_changed",
        "Another memory took this one's place since the decision, so it cannot be undone. "
        "Open the item again to decide what to do.",
        status_code=409,
    )
