"""Archiving: an editor takes a claim out of use without deleting it, and may restore it.

An archived claim is kept with its sources and history, never recalled and
never in hot memory; a deletion erases it like any other. Restoring it makes it
active again only while no other claim holds its identity: a newer claim that
took its place is never superseded by an old one coming back.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import InvalidTransition, Problem
from memory.claims.models import Claim, ClaimRole, ClaimStatus, allowed_claim_targets
from memory.claims.services.claim_moves import claim_move


def claim_archive(*, tenant: Tenant, actor: Actor, claim_id: Any, reason: str = "") -> Claim:
    return claim_move(
        tenant=tenant,
        actor=actor,
        claim_id=claim_id,
        to=ClaimStatus.ARCHIVED,
        by=ClaimRole.REVIEWER,
        reason=reason or "archived: no longer needed in recall",
    )


def claim_restore(*, tenant: Tenant, actor: Actor, claim_id: Any, reason: str = "") -> Claim:
    with transaction.atomic():
        claim = Claim.objects.select_for_update().filter(tenant=tenant, pk=claim_id).first()
        if claim is not None and claim.status != ClaimStatus.ARCHIVED:
            # Activating an active claim is a legal stay for a reviewer; a restore is not.
            raise InvalidTransition(
                f"Only an archived claim is restored; this one is {claim.status}.",
                allowed=allowed_claim_targets(claim.status, ClaimRole.REVIEWER),
            )
        if claim is not None:
            taken = (
                Claim.objects.filter(
                    tenant=tenant,
                    subject_id=claim.subject_id,
                    predicate=claim.predicate,
                    scope_key=claim.scope_key,
                    status=ClaimStatus.ACTIVE,
                )
                .values_list("pk", flat=True)
                .first()
            )
            if taken is not None:
                raise Problem(
                    "identity_taken",
                    "Another active claim says what this one said; restoring it would "
                    "replace a newer memory with an older one. Archive or invalidate that "
                    "one first.",
                    status_code=409,
                    active=str(taken),
                )
        return claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=claim_id,
            to=ClaimStatus.ACTIVE,
            by=ClaimRole.REVIEWER,
            reason=reason or "restored from the archive",
        )
