"""An editor merges a pending claim into the active one on its identity, by value type.

The active claim is superseded by a new revision whose value the typed rules
(memory/claims/merges.py) computed from both, citing both claims' sources; the pending
claim is rejected as merged and its review item closed. One transaction, each
move through the claim state machine, an audit row for the merge.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.search import SearchVector
from django.db import transaction
from django.db.models import Max, Value
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.fingerprints import fingerprint
from common.problems import Problem, not_found
from memory.claims.merges import Side, merge_values, merged_text, value_type
from memory.claims.models import (
    Claim,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    Event,
    GateDecision,
    Sensitivity,
)
from memory.claims.search import ngrams, searchable_text
from memory.claims.sensitivity import classify
from memory.claims.services.claim_inputs import SourceInput
from memory.claims.services.claim_moves import claim_move
from memory.claims.services.claim_sources import source_rows
from memory.claims.services.embeddings import embeddings_enqueue_on_commit
from reviews.services import review_cancel_for_target

# What may be merged into the active claim: a claim still waiting for a person.
MERGEABLE = (ClaimStatus.CANDIDATE, ClaimStatus.CONFLICTED)


def _side(claim: Claim) -> Side:
    return Side(
        claim_id=str(claim.id),
        value=claim.value,
        authority=claim.authority,
        recorded_at=claim.recorded_at,
    )


def _sources(claim: Claim) -> list[Event | SourceInput]:
    return [
        s.event if s.event is not None else SourceInput(uri=s.uri, observed_at=s.observed_at)
        for s in ClaimSource.objects.filter(claim=claim).select_related("event")
    ]


def claim_merge_typed(
    *, tenant: Tenant, actor: Actor, into_id: Any, from_id: Any, reason: str = ""
) -> Claim:
    """Merge pending claim `from_id` into active claim `into_id`; returns the new revision."""
    with transaction.atomic():
        claims = {
            str(claim.id): claim
            for claim in Claim.objects.select_for_update()
            .select_related("subject")
            .filter(tenant=tenant, pk__in=[into_id, from_id])
        }
        into, incoming = claims.get(str(into_id)), claims.get(str(from_id))
        if into is None or incoming is None or into.pk == incoming.pk:
            raise not_found("claim")
        if into.status != ClaimStatus.ACTIVE or incoming.status not in MERGEABLE:
            raise Problem(
                "merge_not_pending",
                "Merge a pending claim (candidate or conflicted) into the active one.",
                status_code=409,
                statuses={"into": into.status, "from": incoming.status},
            )
        if (into.subject_id, into.predicate, into.scope_key) != (
            incoming.subject_id,
            incoming.predicate,
            incoming.scope_key,
        ):
            raise Problem(
                "merge_identity_mismatch",
                "Only claims on one identity (subject, predicate, scope) merge.",
                errors={"from": ["Not a claim on the same subject, predicate and scope."]},
            )
        try:
            merged = merge_values(_side(into), _side(incoming))
        except ValueError as exc:
            raise Problem(
                "merge_types_differ",
                f"The values are of different types ({value_type(into.value)} and "
                f"{value_type(incoming.value)}); settle it as a conflict instead.",
                status_code=409,
            ) from exc
        # Whose words and basis the new revision keeps: the scalar's winner, else the standing.
        winner = incoming if merged.decided.get("value") == str(incoming.pk) else into
        text = merged_text(into.predicate, merged, winner.text)
        now = timezone.now()
        claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=into.pk,
            to=ClaimStatus.SUPERSEDED,
            by=ClaimRole.REVIEWER,
            reason=f"merged with {incoming.pk}",
            closes_at=now,
        )
        classified = classify(
            [text],
            hint=into.sensitivity
            if into.sensitivity != Sensitivity.NORMAL
            else incoming.sensitivity,
        )
        revision = (
            Claim.objects.filter(
                tenant=tenant,
                subject_id=into.subject_id,
                predicate=into.predicate,
                scope_key=into.scope_key,
            ).aggregate(top=Max("revision"))["top"]
            or 0
        ) + 1
        document = searchable_text(predicate=into.predicate, text=text, value=merged.value)
        claim = Claim.objects.create(
            tenant=tenant,
            subject=into.subject,
            kind=into.kind,
            predicate=into.predicate,
            scope=into.scope,
            scope_key=into.scope_key,
            scope_size=into.scope_size,
            value=merged.value,
            text=text,
            authority=merged.authority,
            basis=winner.basis,
            valid_from=into.valid_from,
            valid_to=into.valid_to,
            available_at=max(into.available_at, incoming.available_at),
            refresh_after=into.refresh_after,
            expires_at=into.expires_at,
            status=ClaimStatus.ACTIVE,
            revision=revision,
            supersedes=into,
            gate_decision=GateDecision.MERGED,
            gate_reasons=[f"typed_merge_{merged.value_type}"],
            agent=actor.label,
            token_id=int(actor.id) if actor.kind == ActorKind.AGENT else None,
            value_digest=fingerprint({"value": merged.value, "text": text}),
            sensitivity=classified.sensitivity,
            consent_classes=sorted(
                {*into.consent_classes, *incoming.consent_classes, *classified.consent_classes}
            ),
            search_vector=SearchVector(Value(document), config="english"),
            ngrams=ngrams(document),
            updated_at=now,
        )
        ClaimSource.objects.bulk_create(
            source_rows(tenant=tenant, claim=claim, sources=_sources(into) + _sources(incoming))
        )
        claim_move(
            tenant=tenant,
            actor=actor,
            claim_id=incoming.pk,
            to=ClaimStatus.REJECTED,
            by=ClaimRole.REVIEWER,
            reason=f"merged into {claim.pk}",
        )
        review_cancel_for_target(tenant=tenant, target_type="claim", target_id=incoming.pk)
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="claim.merged",
            target_type="claim",
            target_id=claim.id,
            reason=reason,
            data={
                "value_type": merged.value_type,
                "into": str(into.pk),
                "from": str(incoming.pk),
                # How many keys (or the value) the sides disputed; the keys are the
                # agents' words and stay out of the audit log.
                "disputed": len(merged.decided),
            },
        )
        embeddings_enqueue_on_commit(claim_ids=[claim.id])
    return claim
