"""Every write to claims: submit through the gate, derive, invalidate, review outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.db.models import Value
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.fingerprints import fingerprint
from common.problems import Problem
from memory.claims import gate
from memory.claims.consent import consented_classes
from memory.claims.models import (
    Authority,
    Claim,
    ClaimRole,
    ClaimStatus,
    Event,
    GateDecision,
    Subject,
)
from memory.claims.search import ngrams, searchable_text
from memory.claims.selectors.screening import screen_bands
from memory.claims.services.claim_inputs import (
    WITHHELD_TEXT,
    CandidateInput,
    SourceInput,
    SubmitResult,
    identity_lock,
    open_claim_review,
)
from memory.claims.services.claim_moves import claim_move
from memory.claims.services.claim_screening import (
    Screened,
    consent_to_read,
    injection_in_context,
    screen_candidate,
    screen_injections,
    screen_record,
)
from memory.claims.services.claim_sources import (
    attach_sources,
    events_by_id,
    evidence_of,
    outcome_receipt_id,
    resolve_sources,
)
from memory.claims.services.embeddings import embeddings_enqueue_on_commit
from memory.claims.services.lineage import claims_invalidate_derived
from memory.claims.services.subjects import subject_resolve
from memory.receipts.selectors.receipts import ReceiptOutcome, receipt_outcomes
from reviews.models import Queue
from reviews.services import review_cancel_for_target


def ceiling_of(actor: Actor) -> str:
    # People (end users correcting their memories, editors) and memdesk's own
    # workers are not bounded by a token; the evidence rules still apply.
    return actor.max_authority or Authority.USER_EXPLICIT


def _search_fields(
    *, predicate: str, text: str, value: Any, with_search_vector: bool = True
) -> dict[str, Any]:
    document = searchable_text(predicate=predicate, text=text, value=value)
    if not with_search_vector:
        return {"ngrams": ngrams(document)}
    return {
        "search_vector": SearchVector(Value(document), config="english"),
        "ngrams": ngrams(document),
    }


@dataclass
class IdentityState:
    """Where an identity stands: its active claim and its latest revision number."""

    active: Claim | None = None
    top_revision: int = 0


Identity = tuple[int, str, str]  # (subject id, predicate, scope key)


def identity_states(*, tenant: Tenant, identities: list[Identity]) -> dict[Identity, IdentityState]:
    """The state of each identity: one statement for their newest revisions and active
    claims' ids, then their active claims."""
    states = {identity: IdentityState() for identity in identities}
    if not identities:
        return states
    subjects, predicates, scopes = (list(column) for column in zip(*states, strict=True))
    # Per identity, its newest revision read from the top of `claim_identity_revisions`
    # and its active claim from `claim_one_active_per_identity`: two index probes,
    # whatever the number of the subject's or the tenant's claims (a join would read
    # all of them to pick these, and without statistics the planner may walk a
    # subject's claims for each identity unless the order asked for is the index's).
    same_identity = (
        "c.tenant_id = %(tenant)s AND c.subject_id = i.subject_id "
        "AND c.predicate = i.predicate AND c.scope_key = i.scope_key"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT i.subject_id, i.predicate, i.scope_key, newest.revision, active.id
            FROM unnest(%(subjects)s::bigint[], %(predicates)s::text[], %(scopes)s::text[])
                AS i(subject_id, predicate, scope_key)
            CROSS JOIN LATERAL (
                SELECT c.revision FROM {Claim._meta.db_table} c WHERE {same_identity}
                ORDER BY c.revision DESC LIMIT 1
            ) AS newest
            LEFT JOIN LATERAL (
                SELECT c.id FROM {Claim._meta.db_table} c
                WHERE {same_identity} AND c.status = %(active)s LIMIT 1
            ) AS active ON true
            """,  # noqa: S608 - the table name comes from model metadata
            {
                "subjects": subjects,
                "predicates": predicates,
                "scopes": scopes,
                "tenant": tenant.pk,
                "active": ClaimStatus.ACTIVE,
            },
        )
        rows = cursor.fetchall()
    active_of: dict[Any, Identity] = {}
    for subject_id, predicate, scope_json, top, active_id in rows:
        identity = (subject_id, predicate, scope_json)
        states[identity].top_revision = top or 0
        if active_id is not None:
            active_of[active_id] = identity
    if active_of:
        for claim in Claim.objects.filter(tenant=tenant, pk__in=list(active_of)):
            states[active_of[claim.pk]].active = claim
    return states


def judge(
    *,
    screened: Screened,
    actor: Actor,
    sources: list[Event | SourceInput],
    active: Claim | None,
    available_at: datetime,
    outcome_receipt: ReceiptOutcome | None,
    consented: frozenset[str] = frozenset(),
    in_context: bool = False,
) -> gate.Verdict:
    """The gate's verdict on a screened candidate, given everything it reads.

    `consented` is what the subject consented to, read only when the candidate
    is of a class that needs it (see `consent_to_read`).
    """
    candidate = screened.candidate
    events = [s for s in sources if isinstance(s, Event)]
    evidence = evidence_of(events, subject=candidate.subject)
    verdict = gate.evaluate(
        gate.Candidate(
            kind=candidate.kind,
            predicate=candidate.predicate,
            value=candidate.value,
            text=candidate.text,
            authority=candidate.authority,
            basis=candidate.basis,
            available_at=available_at,
            supersedes=candidate.supersedes,
            source_count=len(sources),
            sources_all_echo=bool(events)
            and len(events) == len(sources)
            and all(e.echo_of for e in events),
            ceiling=ceiling_of(actor),
            user_channel_source=evidence.user_channel,
            tool_source=evidence.tool_result,
            outcome_receipt_state=outcome_receipt.state if outcome_receipt else None,
            outcome_independent=outcome_receipt is not None and not outcome_receipt.self_reported,
            subject=candidate.subject,
            scope=screened.scope,
            sensitivity=screened.classification.sensitivity,
            consent_classes=screened.classification.consent_classes,
            consented=consented,
            ephemeral=screened.ephemeral,
            secrets=screened.content_secrets,
            injection=screened.injection,
            injection_in_context=in_context,
        ),
        active=None
        if active is None
        else gate.ActiveClaimFacts(
            id=active.id,
            value=active.value,
            authority=active.authority,
            available_at=active.available_at,
        ),
    )
    if screened.uri_secrets and verdict.decision != GateDecision.REJECTED:
        verdict = gate.Verdict(
            decision=GateDecision.REJECTED,
            reasons=("secret_detected",),
            status=ClaimStatus.REJECTED,
            secrets=tuple(screened.uri_secrets),
            authority=verdict.authority,
            basis=verdict.basis,
            sensitivity=verdict.sensitivity,
            consent_classes=verdict.consent_classes,
        )
    return verdict


def claim_row(
    *,
    tenant: Tenant,
    actor: Actor,
    screened: Screened,
    subject: Subject,
    verdict: gate.Verdict,
    revision: int,
    available_at: datetime,
    superseded: Claim | None,
    now: datetime,
    with_search_vector: bool = True,
) -> Claim:
    """The unsaved claim a verdict stores: a secret's text and value never reach it.

    Without `with_search_vector` the caller fills `search_vector` itself, as the
    batch's insert does for many rows in one statement.
    """
    candidate = screened.candidate
    withheld = next((r for r in verdict.reasons if r in gate.WITHHOLDS_CONTENT), None)
    text = WITHHELD_TEXT[withheld] if withheld else candidate.text
    value = None if withheld else candidate.value
    return Claim(
        tenant=tenant,
        subject=subject,
        kind=candidate.kind,
        predicate=candidate.predicate,
        scope=screened.scope,
        scope_key=screened.scope_json,
        scope_size=len(screened.scope),
        value=value,
        text=text,
        authority=verdict.authority,
        basis=verdict.basis,
        valid_from=candidate.valid_from,
        valid_to=candidate.valid_to,
        available_at=available_at,
        refresh_after=candidate.refresh_after,
        expires_at=candidate.expires_at,
        status=verdict.status,
        revision=revision,
        supersedes=superseded,
        conflicts_with=list(verdict.conflict_with),
        gate_decision=verdict.decision,
        gate_reasons=list(verdict.reasons),
        screen=screen_record(verdict),
        agent=actor.label,
        token_id=int(actor.id) if actor.kind == ActorKind.AGENT else None,
        value_digest=fingerprint({"value": candidate.value, "text": candidate.text}),
        sensitivity=verdict.sensitivity,
        consent_classes=list(verdict.consent_classes),
        updated_at=now,
        **(
            {"ngrams": []}
            if withheld
            else _search_fields(
                predicate=candidate.predicate,
                text=text,
                value=value,
                with_search_vector=with_search_vector,
            )
        ),
    )


def verdict_audit_data(
    *, claim: Claim, verdict: gate.Verdict, superseded: Claim | None
) -> dict[str, Any]:
    return {
        "revision": claim.revision,
        "supersedes": str(superseded.id) if superseded else None,
        "value_digest": claim.value_digest,
        "secret_kinds": sorted({f.kind for f in verdict.secrets}),
        "injection_signals": list(verdict.signals),
        **screen_record(verdict),
        "sensitivity": verdict.sensitivity,
        "consent_missing": list(verdict.consent_missing),
        "ephemeral_kinds": list(verdict.ephemeral),
    }


def review_queue_for(verdict: gate.Verdict, active: Claim | None) -> str | None:
    """The queue a verdict's new claim waits in, if any."""
    if verdict.decision in (GateDecision.NEEDS_REVIEW, GateDecision.QUARANTINED):
        return Queue.CANDIDATES
    if verdict.decision == GateDecision.CONFLICT and active is not None:
        return Queue.CONFLICTS
    return None


def claim_submit(*, tenant: Tenant, actor: Actor, candidate: CandidateInput) -> SubmitResult:
    """Judge a candidate with the write gate and store the outcome with its reasons."""
    bands = screen_bands(tenant=tenant)
    [screened] = screen_injections([screen_candidate(candidate)], bands=bands)
    now = timezone.now()
    available_at = candidate.available_at or now
    with transaction.atomic():
        subject = subject_resolve(tenant=tenant, key=candidate.subject)
        events = events_by_id(
            tenant=tenant,
            actor=actor,
            event_ids=[s.event for s in candidate.sources if s.event is not None],
        )
        sources = resolve_sources(sources=candidate.sources, events=events)
        parents = (
            [
                parent
                for parent in Claim.objects.filter(tenant=tenant, id__in=candidate.derived_from)
                .exclude(status=ClaimStatus.ERASED)
                .select_related("subject")
                if actor.may_touch_subject(parent.subject.key)
            ]
            if candidate.derived_from
            else []
        )
        if len(parents) != len(set(candidate.derived_from)):
            raise Problem(
                "derived_from_not_found",
                "A claim listed in derived_from does not exist.",
                errors={"derived_from": ["Name existing claims of this tenant."]},
            )
        identity_lock(
            tenant=tenant,
            subject=subject,
            predicate=candidate.predicate,
            scope_json=screened.scope_json,
        )
        identity = (subject.pk, candidate.predicate, screened.scope_json)
        state = identity_states(tenant=tenant, identities=[identity])[identity]
        active = state.active
        receipt_id = outcome_receipt_id(kind=candidate.kind, value=candidate.value)
        receipts = receipt_outcomes(
            tenant=tenant, actor=actor, receipt_ids=[receipt_id] if receipt_id else []
        )
        consents = (
            consented_classes(tenant=tenant, subject_ids=[subject.pk])
            if consent_to_read(screened)
            else {}
        )
        verdict = judge(
            screened=screened,
            actor=actor,
            sources=sources,
            active=active,
            available_at=available_at,
            outcome_receipt=receipts.get(receipt_id) if receipt_id else None,
            consented=consents.get(subject.pk, frozenset()),
            in_context=injection_in_context(
                tenant=tenant, subject=subject, screened=screened, bands=bands
            ),
        )

        if verdict.decision == GateDecision.MERGED and active is not None:
            added = attach_sources(tenant=tenant, claim=active, sources=sources)
            Claim.objects.filter(pk=active.pk).update(updated_at=now)
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="claim.merged",
                target_type="claim",
                target_id=active.id,
                data={"sources_added": added},
            )
            return SubmitResult(
                claim=active,
                decision=verdict.decision,
                reasons=list(verdict.reasons),
                merged_into=active.id,
            )

        superseded: Claim | None = None
        if verdict.supersede is not None and active is not None:
            superseded = claim_move(
                tenant=tenant,
                actor=actor,
                claim_id=active.pk,
                to=ClaimStatus.SUPERSEDED,
                by=ClaimRole.WRITER,
                reason="newer_revision",
                closes_at=candidate.valid_from or now,
            )
            review_cancel_for_target(tenant=tenant, target_type="claim", target_id=active.id)
        claim = claim_row(
            tenant=tenant,
            actor=actor,
            screened=screened,
            subject=subject,
            verdict=verdict,
            revision=state.top_revision + 1,
            available_at=available_at,
            superseded=superseded,
            now=now,
        )
        claim.save(force_insert=True)
        if not gate.withholds_content(verdict.reasons):
            attach_sources(tenant=tenant, claim=claim, sources=sources, new=True)
            embeddings_enqueue_on_commit(claim_ids=[claim.id])
        if parents:
            claim.derived_from.set(parents)
        if superseded is not None:
            # What was derived from the old revision restates it.
            claims_invalidate_derived(
                tenant=tenant, actor=actor, parent_ids=[superseded.id], reason="source_superseded"
            )

        review_item = None
        queue = review_queue_for(verdict, active)
        if queue == Queue.CONFLICTS and active is not None:
            active.conflicts_with = [*active.conflicts_with, claim.id]
            active.updated_at = now
            active.save(update_fields=["conflicts_with", "updated_at"])
        if queue is not None:
            review_item = open_claim_review(
                tenant=tenant,
                queue=queue,
                claim=claim,
                reasons=list(verdict.reasons),
                actor=actor,
            )
        audit_record(
            tenant=tenant,
            actor=actor,
            verb=f"claim.{verdict.decision}",
            target_type="claim",
            target_id=claim.id,
            reason=",".join(verdict.reasons),
            data=verdict_audit_data(claim=claim, verdict=verdict, superseded=superseded),
        )
    return SubmitResult(
        claim=claim,
        decision=verdict.decision,
        reasons=list(verdict.reasons),
        conflict_with=list(verdict.conflict_with),
        review_item=review_item,
        consent_required=list(verdict.consent_missing),
    )
