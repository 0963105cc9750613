"""Many candidates through the write gate in one transaction, judged as one by one would.

`claims_submit_batch` gives every candidate the verdict, reasons, status and
stored rows that `claim_submit` would give it if the candidates were submitted
one after the other, in order, but reads and writes each kind of row with one
statement for the whole batch:

1. the checks that need no database (scope, secrets in identity and sources);
2. the cited events with their recorders' ceilings, then the subjects
   (missing ones created in one statement);
3. every identity's advisory lock in one statement, in the order of the lock
   keys, so two batches never wait on each other in a cycle (a single submit
   holds one identity lock at a time);
4. each identity's active claim and latest revision, the receipts experiences
   name;
5. the gate, in memory, per candidate;
6. supersedes, new claims, sources, merges, conflicts, review items and audit
   rows, each as one bulk statement; embeddings enqueued once after commit.

Candidates whose verdict depends on an earlier candidate of the same batch
(two candidates on one identity) go through `claim_submit` in their order,
after the others: no other candidate can see what they change. Superseding a
claim that others were derived from invalidates those others, which may stand
on identities of this batch; when that may happen the whole batch takes the
one-by-one path.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from common.problems import Problem
from memory.claims import gate
from memory.claims.consent import consented_classes
from memory.claims.models import (
    CLAIM_MACHINE,
    Claim,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    Event,
    GateDecision,
    Subject,
)
from memory.claims.selectors.screening import screen_bands
from memory.claims.services.claim_inputs import (
    CandidateInput,
    SourceInput,
    SubmitResult,
    claim_version,
    identity_lock_key,
)
from memory.claims.services.claim_screening import (
    Screened,
    SecretScan,
    consent_to_read,
    screen_candidate,
    screen_injections,
    screen_sensitivities,
)
from memory.claims.services.claim_sources import (
    events_by_id,
    outcome_receipt_id,
    resolve_sources,
    sources_to_add,
)
from memory.claims.services.claims import (
    Identity,
    IdentityState,
    claim_row,
    claim_submit,
    identity_states,
    judge,
    review_queue_for,
    verdict_audit_data,
)
from memory.claims.services.claims_batch_rows import (
    AuditRow,
    SourceRow,
    batch_source_rows,
    insert_audit,
    insert_claims,
    insert_sources,
    open_reviews,
)
from memory.claims.services.embeddings import embeddings_enqueue_on_commit
from memory.claims.services.subjects import parse_subject_key, subjects_resolve
from memory.receipts.selectors.receipts import receipt_outcomes
from reviews.models import Queue, ReviewItem
from reviews.services import reviews_cancel_for_targets

Outcome = SubmitResult | Problem


@dataclass
class _Planned:
    """One candidate on the bulk path: what it read and what the gate said."""

    index: int
    screened: Screened
    subject: Subject
    sources: list[Event | SourceInput]
    state: IdentityState
    verdict: gate.Verdict
    available_at: datetime
    claim: Claim | None = None


def claims_submit_batch(
    *, tenant: Tenant, actor: Actor, candidates: list[CandidateInput]
) -> list[Outcome]:
    """Judge and store `candidates`; one verdict or one problem per candidate, in order."""
    outcomes: list[Outcome | None] = [None] * len(candidates)
    screened: dict[int, Screened] = {}
    scan = SecretScan()
    for index, candidate in enumerate(candidates):
        try:
            screened[index] = screen_candidate(candidate, scan=scan, learned=False)
        except Problem as problem:
            outcomes[index] = problem
    screened = dict(
        zip(
            screened,
            screen_injections(
                screen_sensitivities(list(screened.values())), bands=screen_bands(tenant=tenant)
            ),
            strict=True,
        )
    )
    now = timezone.now()
    with transaction.atomic():
        if any(candidate.derived_from for candidate in candidates):
            # Derivations read and link other claims: rare in a batch, one by one.
            return _one_by_one(tenant=tenant, actor=actor, candidates=candidates)
        events = events_by_id(
            tenant=tenant,
            actor=actor,
            event_ids=[
                source.event
                for item in screened.values()
                for source in item.candidate.sources
                if source.event is not None
            ],
        )
        sources: dict[int, list[Event | SourceInput]] = {}
        for index, item in screened.items():
            try:
                parse_subject_key(item.candidate.subject)
                sources[index] = resolve_sources(sources=item.candidate.sources, events=events)
            except Problem as problem:
                outcomes[index] = problem
        live = sorted(sources)
        subjects = subjects_resolve(
            tenant=tenant, keys=[screened[i].candidate.subject for i in live]
        )
        identity_of: dict[int, Identity] = {
            i: (
                subjects[screened[i].candidate.subject].pk,
                screened[i].candidate.predicate,
                screened[i].scope_json,
            )
            for i in live
        }
        _lock_identities(tenant=tenant, identities=set(identity_of.values()))
        states = identity_states(
            tenant=tenant, identities=list(dict.fromkeys(identity_of.values()))
        )
        receipt_ids = {
            i: outcome_receipt_id(
                kind=screened[i].candidate.kind, value=screened[i].candidate.value
            )
            for i in live
        }
        receipts = receipt_outcomes(
            tenant=tenant,
            actor=actor,
            receipt_ids=[r for r in receipt_ids.values() if r is not None],
        )
        consents = consented_classes(
            tenant=tenant,
            subject_ids={identity_of[i][0] for i in live if consent_to_read(screened[i])},
        )
        shared = {
            identity for identity, count in Counter(identity_of.values()).items() if count > 1
        }
        planned: list[_Planned] = []
        for i in live:
            if identity_of[i] in shared:
                continue
            item = screened[i]
            state = states[identity_of[i]]
            available_at = item.candidate.available_at or now
            receipt_id = receipt_ids[i]
            verdict = judge(
                screened=item,
                actor=actor,
                sources=sources[i],
                active=state.active,
                available_at=available_at,
                outcome_receipt=receipts.get(receipt_id) if receipt_id else None,
                consented=consents.get(identity_of[i][0], frozenset()),
            )
            planned.append(
                _Planned(
                    index=i,
                    screened=item,
                    subject=subjects[item.candidate.subject],
                    sources=sources[i],
                    state=state,
                    verdict=verdict,
                    available_at=available_at,
                )
            )
        superseding = [p for p in planned if _supersedes(p)]
        may_lose_derivatives = {p.state.active.pk for p in superseding if p.state.active} | {
            active.pk for identity in shared if (active := states[identity].active) is not None
        }
        if _have_derivatives(claim_ids=may_lose_derivatives):
            return _one_by_one(tenant=tenant, actor=actor, candidates=candidates)
        # A reviewer or an invalidation moves a claim under its row lock alone;
        # a candidate whose active claim moved since it was read is judged again
        # on the one-by-one path, as it would have been had it come later.
        moved = _lock_superseded(tenant=tenant, planned=superseding)
        again = [p.index for p in planned if p.index in moved]
        planned = [p for p in planned if p.index not in moved]
        for index, result in _store(tenant=tenant, actor=actor, planned=planned, now=now).items():
            outcomes[index] = result
        for i in sorted([*again, *(i for i in live if identity_of[i] in shared)]):
            outcomes[i] = _submit_alone(tenant=tenant, actor=actor, candidate=candidates[i])
    judged = [outcome for outcome in outcomes if outcome is not None]
    if len(judged) != len(candidates):
        raise RuntimeError("a candidate of the batch was left without a verdict")
    return judged


def _submit_alone(*, tenant: Tenant, actor: Actor, candidate: CandidateInput) -> Outcome:
    try:
        with transaction.atomic():
            return claim_submit(tenant=tenant, actor=actor, candidate=candidate)
    except Problem as problem:
        return problem


def _one_by_one(*, tenant: Tenant, actor: Actor, candidates: list[CandidateInput]) -> list[Outcome]:
    return [_submit_alone(tenant=tenant, actor=actor, candidate=c) for c in candidates]


def _supersedes(p: _Planned) -> bool:
    return p.verdict.supersede is not None and p.state.active is not None


def _lock_identities(*, tenant: Tenant, identities: set[Identity]) -> None:
    """`identity_lock` for every identity, in one statement and in the order of the keys."""
    if not identities:
        return
    keys = [
        identity_lock_key(tenant=tenant, subject_id=s, predicate=p, scope_json=k)
        for s, p, k in identities
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock(key)) FROM ("
            "  SELECT DISTINCT hashtextextended(name, 0) AS key FROM unnest(%s::text[]) AS name"
            "  ORDER BY key) AS keys",
            [keys],
        )


def _have_derivatives(*, claim_ids: set[Any]) -> bool:
    if not claim_ids:
        return False
    lineage = Claim.derived_from.through
    return lineage.objects.filter(to_claim_id__in=list(claim_ids)).exists()


def _lock_superseded(*, tenant: Tenant, planned: list[_Planned]) -> set[int]:
    """Lock the active claims the batch supersedes; the indexes of those no longer active."""
    if not planned:
        return set()
    ids = [p.state.active.pk for p in planned if p.state.active]
    current = {
        claim.pk: claim
        for claim in Claim.objects.select_for_update()
        .filter(tenant=tenant, pk__in=ids)
        .order_by("pk")
    }
    moved = set()
    for p in planned:
        if p.state.active is None:
            continue
        locked = current.get(p.state.active.pk)
        if locked is None or locked.status != ClaimStatus.ACTIVE:
            moved.add(p.index)
        else:
            # The row as it stands under the lock, as `claim_move` would read it.
            p.state.active = locked
    return moved


def _audit(
    *,
    tenant: Tenant,
    actor: Actor,
    verb: str,
    target_id: Any,
    reason: str = "",
    data: dict[str, Any],
) -> AuditRow:
    """The row `audit_record` writes (no model instance: the batch only inserts it)."""
    return AuditRow(
        tenant_id=tenant.pk,
        actor_kind=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label,
        verb=verb,
        target_type="claim",
        target_id=str(target_id),
        reason=reason[:500],
        data=data,
    )


def _store(
    *, tenant: Tenant, actor: Actor, planned: list[_Planned], now: datetime
) -> dict[int, SubmitResult]:
    """Write what the planned verdicts decided, one statement per kind of row."""
    superseded = _supersede(tenant=tenant, actor=actor, planned=planned, now=now)
    audits: dict[int, list[AuditRow]] = {p.index: [] for p in planned}
    for p in planned:
        if p.state.active is not None and p.state.active.pk in superseded:
            audits[p.index].append(superseded[p.state.active.pk])

    new = [p for p in planned if p.verdict.decision != GateDecision.MERGED]
    for p in new:
        p.claim = claim_row(
            tenant=tenant,
            actor=actor,
            screened=p.screened,
            subject=p.subject,
            verdict=p.verdict,
            revision=p.state.top_revision + 1,
            available_at=p.available_at,
            superseded=p.state.active if _supersedes(p) else None,
            now=now,
            with_search_vector=False,
        )
    insert_claims([p.claim for p in new if p.claim is not None])

    merged = [p for p in planned if p.verdict.decision == GateDecision.MERGED and p.state.active]
    merged_indexes = {p.index for p in merged}
    cited = _sources_cited(claim_ids=[p.state.active.pk for p in merged if p.state.active])
    rows: list[SourceRow] = []
    for p in planned:
        if p.index in merged_indexes and p.state.active is not None:
            events, uris = cited.get(p.state.active.pk, (set(), set()))
            added = sources_to_add(sources=p.sources, existing_events=events, existing_uris=uris)
            rows += batch_source_rows(tenant=tenant, claim_id=p.state.active.pk, sources=added)
            audits[p.index].append(
                _audit(
                    tenant=tenant,
                    actor=actor,
                    verb="claim.merged",
                    target_id=p.state.active.id,
                    data={"sources_added": len(added)},
                )
            )
        elif p.claim is not None and not gate.withholds_content(p.verdict.reasons):
            rows += batch_source_rows(
                tenant=tenant, claim_id=p.claim.pk, sources=sources_to_add(sources=p.sources)
            )
    insert_sources(rows)
    if merged:
        Claim.objects.filter(pk__in=[p.state.active.pk for p in merged if p.state.active]).update(
            updated_at=now
        )

    queues = {p.index: review_queue_for(p.verdict, p.state.active) for p in new}
    contradicted = []
    for p in new:
        if (
            p.claim is not None
            and p.state.active is not None
            and queues[p.index] == Queue.CONFLICTS
        ):
            p.state.active.conflicts_with = [*p.state.active.conflicts_with, p.claim.id]
            p.state.active.updated_at = now
            contradicted.append(p.state.active)
    if contradicted:
        Claim.objects.bulk_update(contradicted, ["conflicts_with", "updated_at"])
    items = open_reviews(
        tenant=tenant,
        rows={
            p.index: ReviewItem(
                tenant=tenant,
                queue=queue,
                target_type="claim",
                target_id=str(p.claim.id),
                target_version=claim_version(p.claim),
                subject_key=p.claim.subject.key,
                topic=p.claim.predicate[:200],
                agent_label=actor.label if actor.kind == ActorKind.AGENT else "",
                reason_codes=list(p.verdict.reasons),
            )
            for p in new
            if p.claim is not None and (queue := queues[p.index]) is not None
        },
    )

    for p in new:
        if p.claim is not None:
            audits[p.index].append(
                _audit(
                    tenant=tenant,
                    actor=actor,
                    verb=f"claim.{p.verdict.decision}",
                    target_id=p.claim.id,
                    reason=",".join(p.verdict.reasons),
                    data=verdict_audit_data(
                        claim=p.claim,
                        verdict=p.verdict,
                        superseded=p.state.active if _supersedes(p) else None,
                    ),
                )
            )
    insert_audit([row for p in planned for row in audits[p.index]])
    embeddings_enqueue_on_commit(
        claim_ids=[
            p.claim.id
            for p in new
            if p.claim is not None and not gate.withholds_content(p.verdict.reasons)
        ]
    )

    results: dict[int, SubmitResult] = {}
    for p in planned:
        if p.claim is None and p.state.active is not None:
            results[p.index] = SubmitResult(
                claim=p.state.active,
                decision=p.verdict.decision,
                reasons=list(p.verdict.reasons),
                merged_into=p.state.active.id,
            )
        elif p.claim is not None:
            results[p.index] = SubmitResult(
                claim=p.claim,
                decision=p.verdict.decision,
                reasons=list(p.verdict.reasons),
                conflict_with=list(p.verdict.conflict_with),
                review_item=items.get(p.index),
                consent_required=list(p.verdict.consent_missing),
            )
    return results


def _supersede(
    *, tenant: Tenant, actor: Actor, planned: list[_Planned], now: datetime
) -> dict[Any, AuditRow]:
    """`claim_move(… to=superseded, by=writer, reason="newer_revision")` for each claim the
    batch supersedes, in one UPDATE, with their review items cancelled. Returns each
    claim's audit row, unsaved, so the batch writes them in order with its own."""
    moved: list[Claim] = []
    audits: dict[Any, AuditRow] = {}
    for p in planned:
        old = p.state.active
        if not _supersedes(p) or old is None:
            continue
        # The batch writes its moves with one UPDATE; the machine still checks each.
        CLAIM_MACHINE.check(old.status, ClaimStatus.SUPERSEDED, ClaimRole.WRITER)
        closes_at = p.screened.candidate.valid_from or now
        old.valid_to = old.valid_to or closes_at
        if old.valid_from and old.valid_to <= old.valid_from:
            old.valid_to = None
        old_status, old.status = old.status, ClaimStatus.SUPERSEDED
        old.updated_at = now
        moved.append(old)
        audits[old.pk] = _audit(
            tenant=tenant,
            actor=actor,
            verb=f"claim.{ClaimStatus.SUPERSEDED}",
            target_id=old.id,
            reason="newer_revision",
            data={"from": old_status, "by": ClaimRole.WRITER},
        )
    if moved:
        Claim.objects.bulk_update(moved, ["status", "valid_to", "updated_at"])
        reviews_cancel_for_targets(
            tenant=tenant, target_type="claim", target_ids=[c.pk for c in moved]
        )
    return audits


def _sources_cited(*, claim_ids: list[Any]) -> dict[Any, tuple[set[Any], set[str]]]:
    """The events and uris each claim already cites."""
    cited: dict[Any, tuple[set[Any], set[str]]] = {}
    if not claim_ids:
        return cited
    for claim_id, event_id, uri in ClaimSource.objects.filter(claim_id__in=claim_ids).values_list(
        "claim_id", "event_id", "uri"
    ):
        events, uris = cited.setdefault(claim_id, (set(), set()))
        if event_id is None:
            uris.add(uri)
        else:
            events.add(event_id)
    return cited
