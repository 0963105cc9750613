"""A subject's consent to sensitive classes of memory: grant, and withdraw with deletion.

Withdrawing consent for a class forgets what it covered: every claim about
the subject stored under that class gets a deletion request of its own, so
the same pipeline erases it, propagates along lineage (the claim's source
statements in the ledger included) and proves it with a report; the
subject's ledger events of that class (those no claim cites too) go in one
`records` deletion of the same pipeline, with its report. The requests are
named in the audit row of the withdrawal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from common.screen import strings_in
from memory.claims.models import Claim, ClaimStatus, Event, Subject
from memory.claims.sensitivity import classify
from memory.claims.services.subjects import subject_resolve
from memory.privacy.models import CONSENT_CHOICES, Consent, DeletionCause, DeletionRequest
from memory.privacy.services.deletion import deletion_records_create, deletion_request_create

CONSENT_CLASS_VALUES = frozenset(value for value, _ in CONSENT_CHOICES)


@dataclass
class ConsentOutcome:
    """What changed: (subject key, class, granted) per change, and the deletions started."""

    changed: list[tuple[str, str, bool]] = field(default_factory=list)
    deletions: list[DeletionRequest] = field(default_factory=list)


def validate_consent_changes(changes: Any) -> dict[str, bool]:
    """`{class: granted}` with known classes and booleans, or a `validation_error`."""
    if not isinstance(changes, dict) or not changes:
        raise Problem(
            "validation_error",
            "Give the classes to change as an object of class → true or false.",
            errors={"consents": ['e.g. {"health": true}']},
        )
    errors = {
        f"consents.{name}": [f"One of {', '.join(sorted(CONSENT_CLASS_VALUES))}."]
        for name in changes
        if name not in CONSENT_CLASS_VALUES
    } | {
        f"consents.{name}": ["true to grant, false to withdraw."]
        for name, granted in changes.items()
        if name in CONSENT_CLASS_VALUES and not isinstance(granted, bool)
    }
    if errors:
        raise Problem("validation_error", "Some consent changes are not valid.", errors=errors)
    return changes


def _covered_claims(*, tenant: Tenant, subject: Subject, sensitivity: str) -> list[Claim]:
    # Claims the gate rejected for want of this consent hold no content: nothing to forget.
    return list(
        Claim.objects.filter(
            tenant=tenant, subject=subject, consent_classes__contains=[sensitivity]
        )
        .exclude(status=ClaimStatus.ERASED)
        .exclude(gate_reasons__contains=["consent_required"])
        .order_by("recorded_at", "id")
    )


def _covered_events(*, tenant: Tenant, subject: Subject, sensitivity: str) -> list[UUID]:
    """The subject's unredacted events the class covers. An event keeps only its strongest
    class, so events of any consent class are classified again (one subject's sensitive
    events: few) to find those that also hold this one."""
    covered: list[UUID] = []
    events = Event.objects.filter(
        tenant=tenant,
        subject=subject,
        redacted_at__isnull=True,
        sensitivity__in=list(CONSENT_CLASS_VALUES),
    ).order_by("recorded_at", "id")
    for event in events.only("id", "kind", "text", "source_uri", "body", "sensitivity"):
        content = [event.kind, event.text, event.source_uri, *strings_in(event.body)]
        if event.sensitivity == sensitivity or sensitivity in (
            classify(content, hint=event.sensitivity).consent_classes
        ):
            covered.append(event.pk)
    return covered


def consents_set(
    *,
    tenant: Tenant,
    actor: Actor,
    subject_keys: list[str],
    changes: dict[str, bool],
    user: Any = None,
) -> ConsentOutcome:
    """Grant or withdraw consent per class for each subject; a withdrawal deletes what the
    class covered. Setting a class to what it already is changes nothing."""
    changes = validate_consent_changes(changes)
    outcome = ConsentOutcome()
    with transaction.atomic():
        for key in subject_keys:
            subject = subject_resolve(tenant=tenant, key=key)
            current = {
                c.sensitivity: c
                for c in Consent.objects.select_for_update().filter(
                    tenant=tenant, subject=subject, sensitivity__in=list(changes)
                )
            }
            for sensitivity, granted in changes.items():
                row = current.get(sensitivity)
                if (row.granted if row else False) == granted:
                    continue
                if row is None:
                    row = Consent(tenant=tenant, subject=subject, sensitivity=sensitivity)
                row.granted = granted
                row.changed_at = timezone.now()
                row.changed_by = user
                row.save()
                deletions: list[DeletionRequest] = []
                if not granted:
                    deletions = [
                        deletion_request_create(
                            tenant=tenant,
                            actor=actor,
                            subject=subject,
                            claim=claim,
                            requested_by=user,
                            cause=DeletionCause.CONSENT_WITHDRAWN,
                        )[0]
                        for claim in _covered_claims(
                            tenant=tenant, subject=subject, sensitivity=sensitivity
                        )
                    ]
                    events = _covered_events(
                        tenant=tenant, subject=subject, sensitivity=sensitivity
                    )
                    if events:
                        deletions.append(
                            deletion_records_create(
                                tenant=tenant,
                                actor=actor,
                                subject=subject,
                                event_ids=events,
                                trace_ids=[],
                                cause=DeletionCause.CONSENT_WITHDRAWN,
                                requested_by=user,
                            )
                        )
                audit_record(
                    tenant=tenant,
                    actor=actor,
                    verb="consent.granted" if granted else "consent.withdrawn",
                    target_type="subject",
                    target_id=subject.pk,
                    reason=sensitivity,
                    data={
                        "sensitivity": sensitivity,
                        "deletions": [str(d.pk) for d in deletions],
                    },
                )
                outcome.changed.append((key, sensitivity, granted))
                outcome.deletions += deletions
    return outcome
