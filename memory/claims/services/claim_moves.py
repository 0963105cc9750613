"""Moving a claim once it exists: invalidate, the guarded move every path uses, merge and
refresh. Each move checks the state table and the role, writes its audit row and
closes or opens review items in the same transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import InvalidTransition, Problem, not_found
from common.screen import find_secrets_in_text
from common.transitions import move_row
from memory.claims.models import (
    CLAIM_MACHINE,
    Claim,
    ClaimRole,
    ClaimStatus,
    Event,
)
from memory.claims.services.claim_inputs import (
    SourceInput,
    identity_lock,
    open_claim_review,
    scope_key,
    validate_scope,
)
from memory.claims.services.claim_sources import attach_sources
from reviews.models import Queue
from reviews.services import review_cancel_for_target


def _locked_claim(*, tenant: Tenant, claim_id: Any) -> Claim:
    claim = (
        Claim.objects.select_for_update()
        .select_related("subject")
        .filter(tenant=tenant, pk=claim_id)
        .first()
    )
    if claim is None:
        raise not_found("claim")
    return claim


def _flag_derivatives(*, tenant: Tenant, claim: Claim, actor: Actor) -> int:
    flagged = 0
    for derived in claim.derivatives.filter(status=ClaimStatus.ACTIVE).select_related("subject"):
        open_claim_review(
            tenant=tenant,
            queue=Queue.STALE,
            claim=derived,
            reasons=["source_invalidated"],
            actor=actor,
        )
        flagged += 1
    return flagged


def claim_invalidate(*, tenant: Tenant, actor: Actor, claim_id: Any, reason: str) -> Claim:
    """End a claim that is no longer true; claims derived from it go to the stale queue."""
    if not reason.strip():
        raise Problem("reason_required", "Say why the claim is no longer true.")
    if find_secrets_in_text(reason):
        raise Problem(
            "secret_detected",
            "The reason contains what looks like a credential. Nothing was changed; "
            "memdesk never stores secrets.",
            errors={"reason": ["Looks like a credential."]},
        )
    with transaction.atomic():
        claim = _locked_claim(tenant=tenant, claim_id=claim_id)
        # Flagged first so the move's audit row can count them; an illegal move
        # raises below and rolls the flags back with it.
        flagged = _flag_derivatives(tenant=tenant, claim=claim, actor=actor)
        claim = claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=claim.pk,
            to=ClaimStatus.INVALIDATED,
            by=ClaimRole.WRITER,
            reason=reason,
            data={"derivatives_flagged": flagged},
        )
        review_cancel_for_target(tenant=tenant, target_type="claim", target_id=claim.id)
    return claim


def claim_move(
    *,
    tenant: Tenant,
    actor: Actor,
    claim_id: Any,
    to: str,
    by: str,
    reason: str = "",
    scope: dict[str, str] | None = None,
    closes_at: datetime | None = None,
    data: dict[str, Any] | None = None,
) -> Claim:
    """Move one claim to `to` as `by`, if `CLAIM_TRANSITIONS` allows it, with its audit row.

    The only way a single claim changes status. Raises `InvalidTransition` with
    the statuses `by` may move this claim to. Activation keeps one active claim
    per identity: the one standing is superseded (a move of its own). A move to
    superseded closes the claim's validity at `closes_at` unless it already
    ended; `scope` narrows the claim's scope in the same write.
    """
    with transaction.atomic():
        now = timezone.now()
        claim = _locked_claim(tenant=tenant, claim_id=claim_id)
        # Checked before the activation below supersedes anything in its name.
        CLAIM_MACHINE.check(claim.status, to, by)
        changes: dict[str, Any] = {"updated_at": now}
        if scope is not None:
            narrowed = validate_scope(scope)
            changes |= {
                "scope": narrowed,
                "scope_key": scope_key(narrowed),
                "scope_size": len(narrowed),
            }
        if to == ClaimStatus.SUPERSEDED and closes_at is not None:
            valid_to = claim.valid_to or closes_at
            # A validity that would end before it began is left open instead.
            changes["valid_to"] = (
                None if claim.valid_from and valid_to <= claim.valid_from else valid_to
            )
        if to == ClaimStatus.ACTIVE:
            scope_json = changes.get("scope_key", claim.scope_key)
            identity_lock(
                tenant=tenant,
                subject=claim.subject,
                predicate=claim.predicate,
                scope_json=scope_json,
            )
            current = (
                Claim.objects.filter(
                    tenant=tenant,
                    subject=claim.subject,
                    predicate=claim.predicate,
                    scope_key=scope_json,
                    status=ClaimStatus.ACTIVE,
                )
                .exclude(pk=claim.pk)
                .values_list("pk", flat=True)
                .first()
            )
            if current is not None:
                changes["supersedes"] = claim_move(
                    tenant=tenant,
                    actor=actor,
                    claim_id=current,
                    to=ClaimStatus.SUPERSEDED,
                    by=by,
                    reason=f"superseded by {claim.pk}",
                    closes_at=now,
                )
            changes["conflicts_with"] = []
        claim = move_row(
            CLAIM_MACHINE,
            claim,
            to=to,
            by=by,
            tenant=tenant,
            actor=actor,
            reason=reason,
            changes=changes,
            data=data,
        )
    return claim


def claim_merge_into(
    *, tenant: Tenant, actor: Actor, claim_id: Any, into_id: Any, by: str, reason: str = ""
) -> Claim:
    """Fold a candidate's evidence into an active claim and retire the candidate."""
    candidate = _locked_claim(tenant=tenant, claim_id=claim_id)
    target = _locked_claim(tenant=tenant, claim_id=into_id)
    if target.status != ClaimStatus.ACTIVE:
        raise Problem("merge_target_inactive", "Merge only into an active claim.", status_code=409)
    sources: list[Event | SourceInput] = [
        s.event if s.event is not None else SourceInput(uri=s.uri, observed_at=s.observed_at)
        for s in candidate.sources.select_related("event")
    ]
    attach_sources(tenant=tenant, claim=target, sources=sources)
    Claim.objects.filter(pk=target.pk).update(updated_at=timezone.now())
    return claim_move(
        tenant=tenant,
        actor=actor,
        claim_id=candidate.pk,
        to=ClaimStatus.REJECTED,
        by=by,
        reason=reason or f"merged into {target.id}",
    )


def claim_refresh(
    *, tenant: Tenant, actor: Actor, claim_id: Any, refresh_after: datetime | None = None
) -> Claim:
    """An editor re-checked a stale claim: it is a fact again until `refresh_after`."""
    claim = _locked_claim(tenant=tenant, claim_id=claim_id)
    if claim.status != ClaimStatus.ACTIVE:
        raise InvalidTransition(
            f"Only active claims are refreshed; this one is {claim.status}.",
            allowed=[ClaimStatus.ACTIVE],
        )
    claim.refresh_after = refresh_after
    claim.updated_at = timezone.now()
    claim.save(update_fields=["refresh_after", "updated_at"])
    audit_record(
        tenant=tenant,
        actor=actor,
        verb="claim.refreshed",
        target_type="claim",
        target_id=claim.id,
        data={"refresh_after": refresh_after.isoformat() if refresh_after else None},
    )
    return claim
