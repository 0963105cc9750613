from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from accounts.models import Tenant
from common.problems import Problem
from memory.models import Subject

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
