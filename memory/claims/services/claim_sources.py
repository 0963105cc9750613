"""Sources a claim cites, and the evidence they give: events read under the caller's
reach, source rows, and what a receipt's outcome says."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Subquery

from accounts.actors import Actor
from accounts.models import AgentToken, Tenant
from common.problems import Problem
from memory.claims import gate
from memory.claims.models import AUTHORITY_RANK, Authority, Claim, ClaimKind, ClaimSource, Event
from memory.claims.services.claim_inputs import SourceInput


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


def attach_sources(
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
