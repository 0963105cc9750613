from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from accounts.models import Tenant
from common.problems import Problem
from memory.claims.models import Subject

_KEY = re.compile(r"^(?P<kind>[a-z][a-z0-9_\-]{0,31}):(?P<ref>\S.{0,199})$")


def parse_subject_key(key: str) -> tuple[str, str]:
    match = _KEY.match(key or "")
    if match is None:
        raise Problem(
            "subject_invalid",
            "A subject is written kind:ref, e.g. user:alice or project:crm.",
            errors={"subject": ["Use kind:ref with a lowercase kind."]},
        )
    return match["kind"], match["ref"]


def subject_resolve(*, tenant: Tenant, key: str) -> Subject:
    """The subject named `key`, created on first use."""
    kind, ref = parse_subject_key(key)
    subject = Subject.objects.filter(tenant=tenant, kind=kind, ref=ref).first()
    if subject is not None:
        return subject
    try:
        with transaction.atomic():
            return Subject.objects.create(tenant=tenant, kind=kind, ref=ref)
    except IntegrityError:
        return Subject.objects.get(tenant=tenant, kind=kind, ref=ref)


def subjects_resolve(*, tenant: Tenant, keys: list[str]) -> dict[str, Subject]:
    """The subjects named by `keys`, those missing created, in at most three statements."""
    wanted = {key: parse_subject_key(key) for key in dict.fromkeys(keys)}
    if not wanted:
        return {}
    by_ref = {(kind, ref): key for key, (kind, ref) in wanted.items()}

    def existing() -> dict[str, Subject]:
        refs = Subject.objects.filter(
            tenant=tenant,
            kind__in={kind for kind, _ in by_ref},
            ref__in={ref for _, ref in by_ref},
        )
        return {by_ref[(s.kind, s.ref)]: s for s in refs if (s.kind, s.ref) in by_ref}

    found = existing()
    missing = [key for key in wanted if key not in found]
    if missing:
        # A concurrent writer may create the same subject: the unique constraint
        # keeps one, and the second read finds it whoever won.
        Subject.objects.bulk_create(
            [Subject(tenant=tenant, kind=wanted[k][0], ref=wanted[k][1]) for k in missing],
            ignore_conflicts=True,
        )
        found = existing()
    return found
