"""What an end user may see: the claims about the subjects linked to them."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from accounts.models import Tenant
from accounts.selectors import owned_subject_keys
from memory.models import Claim, ClaimSource, ClaimStatus, Subject


def me_subjects(*, tenant: Tenant, user: Any) -> QuerySet[Subject]:
    """The subjects of the tenant linked to `user` that memdesk has heard of."""
    owned = Q(pk__in=[])
    for key in owned_subject_keys(tenant=tenant, user=user):
        kind, _, ref = key.partition(":")
        owned |= Q(kind=kind, ref=ref)
    return Subject.objects.filter(owned, tenant=tenant).order_by("kind", "ref")


def me_memories(
    *, tenant: Tenant, user: Any, subject_key: str | None = None, status: str | None = None
) -> QuerySet[Claim]:
    """Claims about the user's subjects, every status but erased, with their sources."""
    subjects = me_subjects(tenant=tenant, user=user)
    if subject_key:
        kind, _, ref = subject_key.partition(":")
        subjects = subjects.filter(kind=kind, ref=ref)
    claims = (
        Claim.objects.filter(tenant=tenant, subject__in=subjects)
        .exclude(status=ClaimStatus.ERASED)
        .select_related("subject")
        .prefetch_related(
            Prefetch(
                "sources",
                queryset=ClaimSource.objects.select_related("event").order_by("added_at", "id"),
            )
        )
    )
    if status:
        claims = claims.filter(status=status)
    return claims


def me_memory_get(*, tenant: Tenant, user: Any, claim_id: Any) -> Claim | None:
    return me_memories(tenant=tenant, user=user).filter(pk=claim_id).first()
