"""What subjects consented to be remembered."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from accounts.models import Tenant
from accounts.selectors import owned_subject_keys
from memory.claims.sensitivity import SENSITIVITY_RULES
from memory.privacy.models import CONSENT_CHOICES, Consent
from memory.privacy.selectors.me import me_subjects


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


@dataclass(frozen=True)
class ConsentRow:
    subject: str
    sensitivity: str
    label: str
    description: str
    granted: bool
    changed_at: datetime | None


def me_consents(*, tenant: Tenant, user: Any) -> list[ConsentRow]:
    """Every sensitive class for every subject the user owns, granted or not."""
    keys = owned_subject_keys(tenant=tenant, user=user)
    rows = {
        (c.subject.key, c.sensitivity): c
        for c in Consent.objects.filter(
            tenant=tenant, subject__in=me_subjects(tenant=tenant, user=user)
        ).select_related("subject")
    }
    descriptions = {rule.sensitivity: rule.description for rule in SENSITIVITY_RULES}
    return [
        ConsentRow(
            subject=key,
            sensitivity=value,
            label=str(label),
            description=descriptions.get(value, "Content the agent marked as sensitive."),
            granted=bool(rows.get((key, value)) and rows[(key, value)].granted),
            changed_at=rows[(key, value)].changed_at if (key, value) in rows else None,
        )
        for key in keys
        for value, label in CONSENT_CHOICES
    ]
