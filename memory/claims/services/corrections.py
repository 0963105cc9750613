"""An end user corrects what is remembered about them.

A correction is the user's own statement: it enters the ledger as an event
and becomes a `user_explicit` revision through the write gate, superseding
the claim it corrects. What was derived from the old revision is invalidated
at once (a new global preference ends the old one and invalidates
what was built on it), and the subject's cached hot memory is purged after
commit. If the gate will not accept the correction (injection, secret), the
whole correction is refused and nothing changes.
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import InvalidTransition, Problem, not_found
from memory.claims.hot_memory import hot_memory_purge
from memory.claims.models import (
    Authority,
    Basis,
    Claim,
    ClaimRole,
    ClaimStatus,
    GateDecision,
    claim_sources_for,
)
from memory.claims.services.claim_inputs import CandidateInput, SourceInput
from memory.claims.services.claim_moves import claim_move
from memory.claims.services.claims import claim_submit
from memory.claims.services.events import event_record
from memory.claims.services.lineage import claims_invalidate_derived
from reviews.services import review_cancel_for_target

logger = logging.getLogger(__name__)

# What the user may replace with a correction; the rest is history.
CORRECTABLE_STATUSES = frozenset(claim_sources_for(ClaimStatus.SUPERSEDED, ClaimRole.USER))
ACCEPTED_DECISIONS = frozenset(
    {GateDecision.ACCEPTED, GateDecision.SUPERSEDED_PREVIOUS, GateDecision.MERGED}
)


def memory_correct(
    *, tenant: Tenant, actor: Actor, claim_id: UUID | str, value: Any, text: str
) -> Claim:
    """Replace a claim with the user's corrected value and statement. Returns the claim
    that now holds the memory (a new revision, or the active claim it agreed with)."""
    text = text.strip()
    with transaction.atomic():
        old = (
            Claim.objects.select_for_update(of=("self",))
            .select_related("subject")
            .filter(tenant=tenant, pk=claim_id)
            .exclude(status=ClaimStatus.ERASED)
            .first()
        )
        if old is None:
            raise not_found("memory")
        if old.status not in CORRECTABLE_STATUSES:
            raise InvalidTransition(
                f"A {old.status} memory is history; correct the current one instead.",
                allowed=sorted(CORRECTABLE_STATUSES),
            )
        if value == old.value and text == old.text:
            raise Problem(
                "correction_unchanged",
                "The correction says what the memory already says.",
                errors={"value": ["Change the value or the text."]},
            )
        now = timezone.now()
        statement = event_record(
            tenant=tenant,
            actor=actor,
            subject_key=old.subject.key,
            kind="user_correction",
            observed_at=now,
            text=text,
            body={"value": value, "corrects": str(old.pk)},
            agent="memdesk:me",
        )
        # The gate's explicit-correction path needs a different value; a
        # reworded statement (or a correction of something not active) first
        # retires the old claim, then enters as the identity's new revision.
        explicit = old.status == ClaimStatus.ACTIVE and value != old.value
        if not explicit:
            claim_move(
                tenant=tenant,
                actor=actor,
                claim_id=old.pk,
                to=ClaimStatus.SUPERSEDED,
                by=ClaimRole.USER,
                reason="user_correction",
            )
            review_cancel_for_target(tenant=tenant, target_type="claim", target_id=old.pk)
        result = claim_submit(
            tenant=tenant,
            actor=actor,
            candidate=CandidateInput(
                subject=old.subject.key,
                kind=old.kind,
                predicate=old.predicate,
                # The user's own statement (a user-channel event written here)
                # is what makes this `user_explicit`; no tool checked it.
                authority=Authority.USER_EXPLICIT,
                basis=Basis.REPORTED,
                value=value,
                text=text,
                scope=old.scope,
                sources=[SourceInput(event=statement.pk)],
                available_at=now,
                supersedes=old.pk if explicit else None,
            ),
        )
        if result.decision not in ACCEPTED_DECISIONS:
            # A person's correction refused is rare and worth reading afterwards: the
            # decision and the gate's reasons, never the words.
            logger.warning(
                "correction refused",
                extra={
                    "decision": result.decision,
                    "reasons": result.reasons,
                    "claim": str(old.pk),
                },
            )
            # Raising rolls back the retired claim and the ledger entry too.
            raise Problem(
                "correction_refused",
                "The write gate did not accept the correction; nothing was changed.",
                decision=result.decision,
                reasons=result.reasons,
            )
        current = result.claim
        if current.pk != old.pk and current.supersedes_id is None and not result.merged_into:
            Claim.objects.filter(pk=current.pk).update(supersedes=old)
            current.supersedes = old
        claims_invalidate_derived(
            tenant=tenant, actor=actor, parent_ids=[old.pk], reason="source_corrected", now=now
        )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="memory.corrected",
            target_type="claim",
            target_id=old.pk,
            data={
                "revision": str(current.pk),
                "decision": result.decision,
                "value_digest": current.value_digest,
            },
        )
        tenant_id, subject_id = tenant.pk, old.subject_id
        transaction.on_commit(
            lambda: hot_memory_purge(tenant_id=tenant_id, subject_ids=[subject_id]), robust=True
        )
    return current
