"""Drafts built from experience memories: which experiences may seed one, and what a
drafted version was built from."""

from __future__ import annotations

import uuid

from django.db.models import (
    QuerySet,
)

from accounts.models import Tenant
from memory.claims.gate import experience_outcome
from memory.claims.models import Claim, ClaimKind, ClaimStatus
from memory.claims.selectors.claims import claims_visible
from skills.models import (
    DraftSource,
    SkillVersion,
)

DRAFT_CANDIDATES_SHOWN = 200


def experiences_for_draft(*, tenant: Tenant, claim_ids: list[str]) -> list[Claim]:
    """The named claims of this tenant (any kind and status, to say why one is refused)."""
    valid = []
    for claim_id in claim_ids:
        try:
            valid.append(uuid.UUID(claim_id))
        except ValueError:
            continue
    return list(
        claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(pk__in=valid)
        .exclude(status=ClaimStatus.ERASED)
    )


def draft_ineligibility(claim: Claim) -> str | None:
    """Why a claim cannot seed a skill draft, or None when it can."""
    if claim.kind != ClaimKind.EXPERIENCE:
        return "not_an_experience"
    if claim.status != ClaimStatus.ACTIVE:
        return f"not_active ({claim.status})"
    # A failed run is the contrast the draft learns its pitfalls from; a partial one
    # says neither what works nor what breaks.
    if experience_outcome(claim.value) not in {"success", "failure"}:
        return "outcome_not_success_or_failure"
    return None


def draft_candidates(*, tenant: Tenant) -> list[Claim]:
    """Active experiences that succeeded or failed, newest first: what an editor picks from."""
    return list(
        claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(
            kind=ClaimKind.EXPERIENCE,
            status=ClaimStatus.ACTIVE,
            value__outcome__in=["success", "failure"],
        )
        .order_by("-recorded_at")[:DRAFT_CANDIDATES_SHOWN]
    )


def draft_sources(*, tenant: Tenant, version: SkillVersion) -> QuerySet[DraftSource]:
    return DraftSource.objects.filter(tenant=tenant, version=version).order_by("id")


def draft_source_claims(*, tenant: Tenant, sources: list[DraftSource]) -> dict[str, Claim]:
    """The claims a draft names that still hold content, by id; erased ones are left out."""
    return {
        str(claim.pk): claim
        for claim in claims_visible(tenant=tenant, allowed_subjects=None)
        .filter(pk__in=[source.claim_id for source in sources])
        .exclude(status=ClaimStatus.ERASED)
    }
