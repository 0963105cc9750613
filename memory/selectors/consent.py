"""What subjects consented to be remembered."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from accounts.models import Tenant
from memory.models import Consent


def consented_classes(*, tenant: Tenant, subject_ids: Iterable[Any]) -> dict[Any, frozenset[str]]:
    """The sensitive classes each subject currently consents to (one statement)."""
    subject_ids = list(subject_ids)
    granted: dict[Any, set[str]] = {}
    if not subject_ids:
        return {}
    for subject_id, sensitivity in Consent.objects.filter(
        tenant=tenant, subject_id__in=subject_ids, granted=True
    ).values_list("subject_id", "sensitivity"):
        granted.setdefault(subject_id, set()).add(sensitivity)
    return {subject_id: frozenset(classes) for subject_id, classes in granted.items()}
