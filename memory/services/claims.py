"""Every write to claims: submit through the gate, derive, invalidate, review outcomes."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.contrib.postgres.search import SearchVector
from django.db import connection, transaction
from django.db.models import OuterRef, Subquery, Value
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, AgentToken, Tenant
from accounts.services import audit_record
from common.fingerprints import canonical_json, fingerprint
from common.problems import InvalidTransition, Problem, not_found
from common.screen import SecretFinding, find_secrets_in_text, find_secrets_in_value, strings_in
from common.screen.injection import InjectionResult, judge_injection, judge_injection_many
from common.screen.learned import PASS, Bands
from common.transitions import role_gated
from memory import gate, sensitivity
from memory.future_times import refuse_future_times
from memory.models import (
    AUTHORITY_RANK,
    CLAIM_TRANSITIONS,
    Authority,
    Claim,
    ClaimKind,
    ClaimRole,
    ClaimSource,
    ClaimStatus,
    Event,
    GateDecision,
    Sensitivity,
    Subject,
    allowed_claim_targets,
)
from memory.search import ngrams, searchable_text
from memory.selectors.consent import consented_classes
from memory.selectors.receipts import ReceiptOutcome, receipt_outcomes
from memory.selectors.screening import screen_bands
from memory.services.embeddings import embeddings_enqueue_on_commit
from memory.services.lineage import claims_invalidate_derived
from memory.services.subjects import subject_resolve
from reviews.models import Queue, ReviewItem
from reviews.services import review_cancel_for_target, review_open

# Built once: `Sensitivity.values` builds its list anew on every read.
_SENSITIVITIES = frozenset(Sensitivity.values)
REDACTED = "[withheld: secret detected]"
WITHHELD_TEXT = {
    "secret_detected": REDACTED,
    "ephemeral_value": "[withheld: ephemeral value]",
    "consent_required": "[withheld: consent required]",
}


@dataclass
class SourceInput:
    event: uuid.UUID | None = None
    uri: str = ""
    observed_at: datetime | None = None
    digest: str = ""


@dataclass
class CandidateInput:
    subject: str
    kind: str
    predicate: str
    authority: str
    basis: str
    value: Any = None
    text: str = ""
    scope: dict[str, str] = field(default_factory=dict)
    sources: list[SourceInput] = field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    available_at: datetime | None = None
    refresh_after: datetime | None = None
    expires_at: datetime | None = None
    supersedes: uuid.UUID | None = None
    derived_from: list[uuid.UUID] = field(default_factory=list)
    # The agent's hint: it can raise the class the rules find, never lower it.
    sensitivity: str = Sensitivity.NORMAL


@dataclass
class SubmitResult:
    claim: Claim
    decision: str
    reasons: list[str]
    merged_into: uuid.UUID | None = None
    conflict_with: list[uuid.UUID] = field(default_factory=list)
    review_item: ReviewItem | None = None
    # The sensitive classes the subject has not consented to (consent_required).
    consent_required: list[str] = field(default_factory=list)


def scope_key(scope: dict[str, str]) -> str:
    return canonical_json(scope).decode()


def validate_scope(scope: Any) -> dict[str, str]:
    if not isinstance(scope, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in scope.items()
    ):
        raise Problem(
            "scope_invalid",
            "A scope is a flat object of non-empty string keys and string values.",
            errors={"scope": ['Use e.g. {"project": "crm"}.']},
        )
    return scope


def claim_version(claim: Claim) -> str:
    """A claim's reviewable state; review items remember it to detect changes."""
    return f"{claim.status}:{claim.revision}:{len(claim.conflicts_with)}"


def identity_lock_key(*, tenant: Tenant, subject_id: int, predicate: str, scope_json: str) -> str:
    """The advisory lock key of an identity: single submits and batches take the same."""
    return f"claim:{tenant.pk}:{subject_id}:{predicate}:{scope_json}"


def identity_lock(*, tenant: Tenant, subject: Subject, predicate: str, scope_json: str) -> None:
    # Decisions on one identity are serialised so concurrent writers cannot
    # both see "no active claim" and both accept; the partial unique index is
    # the last line of defence behind this lock.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [
                identity_lock_key(
                    tenant=tenant, subject_id=subject.pk, predicate=predicate, scope_json=scope_json
                )
            ],
        )


def events_by_id(*, tenant: Tenant, actor: Actor, event_ids: list[Any]) -> dict[Any, Event]:
    """The events a caller may cite, by id, each with the ceiling of the token that recorded it.

    An event of a subject outside the token's subjects is, for this caller,
    an event that does not exist: same problem, no hint that it does.
    """
    if not event_ids:
        return {}
    ceiling = AgentToken.objects.filter(tenant=tenant, pk=OuterRef("token_id")).values(
        "max_authority"
    )[:1]
    return {
        e.id: e
        for e in Event.objects.filter(tenant=tenant, id__in=event_ids)
        .select_related("subject")
        .annotate(recorder_ceiling=Subquery(ceiling))
        if actor.may_touch_subject(e.subject.key)
    }


def resolve_sources(
    *, sources: list[SourceInput], events: dict[Any, Event]
) -> list[Event | SourceInput]:
    """The candidate's sources with their events, from `events` (see `events_by_id`)."""
    if not sources:
        raise Problem(
            "source_required",
            "A candidate needs at least one source: a ledger event or a uri with observed_at.",
            errors={"sources": ["Give at least one source."]},
        )
    resolved: list[Event | SourceInput] = []
    for index, source in enumerate(sources):
        if source.event is not None:
            event = events.get(source.event)
            if event is None:
                raise Problem(
                    "source_not_found",
                    f"Source {index} names an event that does not exist.",
                    errors={f"sources.{index}.event": ["No such event."]},
                )
            resolved.append(event)
        elif source.uri:
            resolved.append(source)
        else:
            raise Problem(
                "source_invalid",
                f"Source {index} needs an `event` or a `uri`.",
                errors={f"sources.{index}": ["Give an event id or a uri."]},
            )
    return resolved


@dataclass(frozen=True)
class Evidence:
    user_channel: bool
    tool_result: bool


def evidence_of(events: list[Event], *, subject: str) -> Evidence:
    """What the source events prove about `subject`, judged by their kind, their subject
    and who recorded them.

    An agent picks an event's `kind` freely, so a kind counts only when its
    recorder could have asserted that much itself: a person (events written
    by the console carry no token) or a token whose ceiling reaches it. The
    events come from `events_by_id`, which read each recorder's ceiling.
    What someone said, or a tool returned, about one subject is no one's word
    about another: such an event stays a source (provenance) but proves nothing
    here. Subjects are linked to people, never to each other, so the rule is
    the same subject key.
    """
    live = [e for e in events if e.redacted_at is None and e.subject.key == subject]

    def reaches(event: Event, authority: Authority) -> bool:
        if event.token_id is None:
            return True
        # `events_by_id` annotates the recorder's ceiling; Event has no such column.
        ceiling = event.recorder_ceiling or Authority.AGENT_INFERRED  # type: ignore[attr-defined]
        return AUTHORITY_RANK[Authority(ceiling)] >= AUTHORITY_RANK[authority]

    return Evidence(
        user_channel=any(
            e.kind in gate.USER_CHANNEL_KINDS and reaches(e, Authority.USER_EXPLICIT) for e in live
        ),
        tool_result=any(
            e.kind in gate.TOOL_RESULT_KINDS and reaches(e, Authority.TOOL_VERIFIED) for e in live
        ),
    )


def outcome_receipt_id(*, kind: str, value: Any) -> uuid.UUID | None:
    """The receipt an experience names as evidence of its outcome, if it names one."""
    if kind != ClaimKind.EXPERIENCE or not isinstance(value, dict):
        return None
    try:
        return uuid.UUID(str(value.get("receipt")))
    except ValueError:
        return None


def ceiling_of(actor: Actor) -> str:
    # People (end users correcting their memories, editors) and memdesk's own
    # workers are not bounded by a token; the evidence rules still apply.
    return actor.max_authority or Authority.USER_EXPLICIT


def sources_to_add(
    *,
    sources: list[Event | SourceInput],
    existing_events: set[Any] | None = None,
    existing_uris: set[str] | None = None,
) -> list[Event | SourceInput]:
    """The sources a claim gains: each event and uri once, none it already cites."""
    seen_events = set(existing_events or ())
    seen_uris = set(existing_uris or ())
    added: list[Event | SourceInput] = []
    for source in sources:
        if isinstance(source, Event):
            if source.id in seen_events:
                continue
            seen_events.add(source.id)
        else:
            if source.uri in seen_uris:
                continue
            seen_uris.add(source.uri)
        added.append(source)
    return added


def source_rows(
    *,
    tenant: Tenant,
    claim: Claim,
    sources: list[Event | SourceInput],
    existing_events: set[Any] | None = None,
    existing_uris: set[str] | None = None,
) -> list[ClaimSource]:
    """New source rows for `claim`, for the sources it gains (see `sources_to_add`)."""
    return [
        ClaimSource(
            tenant=tenant,
            claim=claim,
            event=source,
            observed_at=source.observed_at,
            digest=source.digest,
        )
        if isinstance(source, Event)
        else ClaimSource(
            tenant=tenant,
            claim=claim,
            uri=source.uri,
            observed_at=source.observed_at,
            digest=source.digest,
        )
        for source in sources_to_add(
            sources=sources, existing_events=existing_events, existing_uris=existing_uris
        )
    ]


def _attach_sources(
    *, tenant: Tenant, claim: Claim, sources: list[Event | SourceInput], new: bool = False
) -> int:
    # A claim created in this transaction cites nothing yet: no need to ask.
    existing = (
        ClaimSource.objects.none() if new else ClaimSource.objects.filter(claim=claim)
    ).values_list("event_id", "uri")
    rows = source_rows(
        tenant=tenant,
        claim=claim,
        sources=sources,
        existing_events={event for event, _ in existing if event is not None},
        existing_uris={uri for event, uri in existing if event is None},
    )
    ClaimSource.objects.bulk_create(rows)
    return len(rows)


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


def _open_review(
    *, tenant: Tenant, queue: str, claim: Claim, reasons: list[str], actor: Actor
) -> ReviewItem:
    return review_open(
        tenant=tenant,
        queue=queue,
        target_type="claim",
        target_id=claim.id,
        target_version=claim_version(claim),
        subject_key=claim.subject.key,
        topic=claim.predicate,
        agent_label=actor.label if actor.kind == ActorKind.AGENT else "",
        reason_codes=reasons,
    )


def _refuse_identity_secrets(
    *, candidate: CandidateInput, scope: dict[str, str], scan: SecretScan
) -> None:
    """A credential in what names the claim would be stored even on a rejected claim: refuse it."""
    errors: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for name, findings in (
        ("subject", scan.text(candidate.subject)),
        ("predicate", scan.text(candidate.predicate)),
        ("scope", scan.scope(scope)),
    ):
        if findings:
            found = sorted({f.kind for f in findings})
            kinds.update(found)
            errors[name] = [f"Looks like a credential ({', '.join(found)})."]
    if errors:
        raise Problem(
            "secret_detected",
            "The claim's subject, predicate or scope contains what looks like a credential. "
            "Nothing was stored; memdesk never stores secrets.",
            errors=errors,
            kinds=sorted(kinds),
        )


@dataclass(frozen=True)
class Screened:
    """A candidate past the checks that need no database: its scope and what its uris hide."""

    candidate: CandidateInput
    scope: dict[str, str]
    scope_json: str
    uri_secrets: list[SecretFinding]
    # What `gate.find_secrets` would find in the text and the value.
    content_secrets: tuple[SecretFinding, ...]
    classification: sensitivity.Classification
    ephemeral: tuple[str, ...]
    # The injection screen's judgement of the content (`gate.content_strings`).
    injection: InjectionResult | None = None


class SecretScan:
    """The secret detectors, remembering what they found in strings seen before.

    A batch names the same subjects and scopes again and again, and a value
    often repeats its text; each is scanned once. The findings depend on the
    string alone, so remembering them changes no answer.
    """

    def __init__(self) -> None:
        self._texts: dict[str, list[SecretFinding]] = {}
        self._scopes: dict[str, list[SecretFinding]] = {}

    def text(self, text: str) -> list[SecretFinding]:
        if text not in self._texts:
            self._texts[text] = find_secrets_in_text(text)
        return self._texts[text]

    def scope(self, scope: dict[str, str]) -> list[SecretFinding]:
        key = scope_key(scope)
        if key not in self._scopes:
            self._scopes[key] = find_secrets_in_value(scope, find=self.text)
        return self._scopes[key]

    def value(self, value: Any) -> list[SecretFinding]:
        return find_secrets_in_value(value, find=self.text)


def content_strings_of(screened: Screened) -> list[str]:
    candidate = screened.candidate
    return gate.strings_of_content(
        text=candidate.text,
        value=candidate.value,
        predicate=candidate.predicate,
        subject=candidate.subject,
        scope=screened.scope,
    )


def screen_injections(
    screened: Sequence[Screened], *, bands: Bands | None = None
) -> list[Screened]:
    """`screened` with their injection judgements, the learned head run once for them all.

    `bands` are the tenant's calibrated thresholds, if it has any; else the head's own.
    """
    judged = judge_injection_many([content_strings_of(item) for item in screened], bands=bands)
    return [replace(item, injection=result) for item, result in zip(screened, judged, strict=True)]


# How far back, and how many of a subject's claims, an order split across claims is looked for.
CONTEXT_WINDOW = timedelta(hours=24)
CONTEXT_CLAIMS = 5


def injection_in_context(
    *, tenant: Tenant, subject: Subject, screened: Screened, bands: Bands | None = None
) -> bool:
    """Whether the candidate, read after the subject's recent claims, completes an order.

    Only when neither reads as one alone: a claim already judged an order was
    quarantined on its own, and the recent claims passed the screen when written.
    """
    if screened.injection is not None and screened.injection.band != PASS:
        return False
    recent = list(
        Claim.objects.filter(
            tenant=tenant,
            subject=subject,
            status__in=(ClaimStatus.ACTIVE, ClaimStatus.CANDIDATE),
            recorded_at__gte=timezone.now() - CONTEXT_WINDOW,
        )
        .exclude(text="")
        .order_by("-recorded_at", "-id")
        .values_list("text", flat=True)[:CONTEXT_CLAIMS]
    )
    if not recent:
        return False
    joined = judge_injection([*reversed(recent), *content_strings_of(screened)], bands=bands)
    return joined.is_injection and not judge_injection(recent, bands=bands).is_injection


def screen_candidate(candidate: CandidateInput, *, scan: SecretScan | None = None) -> Screened:
    """The checks before any read: times, scope shape, secrets in the identity and in the sources.

    A batch passes one `scan` for all its candidates (see `SecretScan`).
    """
    scan = scan or SecretScan()
    refuse_future_times(
        {
            "available_at": candidate.available_at,
            "valid_from": candidate.valid_from,
            **{
                f"sources.{index}.observed_at": source.observed_at
                for index, source in enumerate(candidate.sources)
            },
        }
    )
    scope = validate_scope(candidate.scope)
    if candidate.sensitivity not in _SENSITIVITIES:
        raise Problem(
            "validation_error",
            "Unknown sensitivity class.",
            errors={"sensitivity": [f"One of {', '.join(Sensitivity.values)}."]},
        )
    _refuse_identity_secrets(candidate=candidate, scope=scope, scan=scan)
    # What the claim says and what names it: a sensitive predicate is as telling as a text.
    content = [
        candidate.text,
        *strings_in(candidate.value),
        candidate.predicate,
        *scope.values(),
    ]
    return Screened(
        candidate=candidate,
        scope=scope,
        scope_json=scope_key(scope),
        uri_secrets=[f for s in candidate.sources for f in scan.text(s.uri) + scan.text(s.digest)],
        content_secrets=(*scan.text(candidate.text), *scan.value(candidate.value)),
        classification=sensitivity.classify(content, hint=candidate.sensitivity),
        ephemeral=sensitivity.find_ephemeral(content),
    )


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


def consent_to_read(screened: Screened) -> bool:
    """Whether the gate needs the subject's consents for this candidate."""
    return bool(screened.classification.consent_classes)


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


def screen_record(verdict: gate.Verdict) -> dict[str, Any]:
    """What the injection screen saw, kept on the claim for editors (never the content)."""
    injection = verdict.injection
    if injection is None:
        return {}
    return {
        "injection": {
            "band": injection.band,
            "score": round(injection.learned, 4),
            "reading": injection.learned_reading,
            "signals": list(injection.signals),
            "signals_reading": injection.reading,
        }
    }


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
            added = _attach_sources(tenant=tenant, claim=active, sources=sources)
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
            _attach_sources(tenant=tenant, claim=claim, sources=sources, new=True)
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
            review_item = _open_review(
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
        _open_review(
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
        if by not in CLAIM_TRANSITIONS.get(claim.status, {}).get(to, frozenset()):
            raise InvalidTransition(
                f"A {claim.status} claim cannot become {to}.",
                allowed=allowed_claim_targets(claim.status, by),
            )
        fields = ["status", "updated_at"]
        if scope is not None:
            claim.scope = validate_scope(scope)
            claim.scope_key = scope_key(claim.scope)
            claim.scope_size = len(claim.scope)
            fields += ["scope", "scope_key", "scope_size"]
        if to == ClaimStatus.SUPERSEDED and closes_at is not None:
            claim.valid_to = claim.valid_to or closes_at
            if claim.valid_from and claim.valid_to <= claim.valid_from:
                claim.valid_to = None
            fields.append("valid_to")
        if to == ClaimStatus.ACTIVE:
            identity_lock(
                tenant=tenant,
                subject=claim.subject,
                predicate=claim.predicate,
                scope_json=claim.scope_key,
            )
            current = (
                Claim.objects.filter(
                    tenant=tenant,
                    subject=claim.subject,
                    predicate=claim.predicate,
                    scope_key=claim.scope_key,
                    status=ClaimStatus.ACTIVE,
                )
                .exclude(pk=claim.pk)
                .values_list("pk", flat=True)
                .first()
            )
            if current is not None:
                claim.supersedes = claim_move(
                    tenant=tenant,
                    actor=actor,
                    claim_id=current,
                    to=ClaimStatus.SUPERSEDED,
                    by=by,
                    reason=f"superseded by {claim.pk}",
                    closes_at=now,
                )
                fields.append("supersedes")
            claim.conflicts_with = []
            fields.append("conflicts_with")
        source = claim.status
        claim.status = to
        claim.updated_at = now
        # Moves only an undo may make pass the database trigger only inside this role.
        with role_gated(by) if by == ClaimRole.UNDO else nullcontext():
            claim.save(update_fields=fields)
        audit_record(
            tenant=tenant,
            actor=actor,
            verb=f"claim.{to}",
            target_type="claim",
            target_id=claim.id,
            reason=reason,
            data={"from": source, "by": by, **(data or {})},
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
    _attach_sources(tenant=tenant, claim=target, sources=sources)
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
