"""Reads for deletions: who may see which report.

The probes that prove a deletion are in `memory.privacy.selectors.probes`.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from accounts.models import Role, Tenant
from memory.privacy.models import DeletionRequest
from memory.privacy.selectors.me import me_subjects

# People who work the deletions queue read every report of their tenant.
REPORT_READERS = frozenset({Role.EDITOR, Role.ADMIN, Role.AUDITOR})


def deletions_visible(*, tenant: Tenant, user: Any, role: str | None) -> QuerySet[DeletionRequest]:
    """Deletions of the tenant the person may read: an end user those about their own
    subjects, the people who work the deletions queue all of them."""
    deletions = DeletionRequest.objects.filter(tenant=tenant).select_related("subject")
    if role in REPORT_READERS:
        return deletions
    return deletions.filter(subject__in=me_subjects(tenant=tenant, user=user))


def deletion_get(
    *, tenant: Tenant, user: Any, role: str | None, deletion_id: Any
) -> DeletionRequest | None:
    return deletions_visible(tenant=tenant, user=user, role=role).filter(pk=deletion_id).first()


def deletions_of_my_subjects(*, tenant: Tenant, user: Any) -> QuerySet[DeletionRequest]:
    """The person's own deletions (about subjects they own), newest first, whatever
    their role: "my deletions", to find a report again."""
    return (
        DeletionRequest.objects.filter(
            tenant=tenant, subject__in=me_subjects(tenant=tenant, user=user)
        )
        .select_related("subject")
        .order_by("-created_at")
    )
