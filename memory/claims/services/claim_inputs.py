"""What a claim write starts from: the candidate and its sources as the API and console
hand them in, scopes, and the lock that serialises writes to one identity."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from common.fingerprints import canonical_json
from common.problems import Problem
from memory.claims.models import Claim, Sensitivity, Subject
from reviews.models import ReviewItem
from reviews.services import review_open

# Built once: `Sensitivity.values` builds its list anew on every read.
SENSITIVITIES = frozenset(Sensitivity.values)


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


def open_claim_review(
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
