"""The consent the write path reads, recorded by the domain that owns it.

A sensitive class is kept only for a subject that consented to it (docs/privacy.md).
Consent is recorded, granted and withdrawn by `memory.privacy`, which builds on claims
(docs/architecture.md, "Layers"), so claims cannot import it: privacy hands its reader
over when its app starts, as `memory` hands `reviews` its decision handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from accounts.models import Tenant

ConsentReader = Callable[..., dict[Any, frozenset[str]]]

_readers: list[ConsentReader] = []


def consent_reader_register(reader: ConsentReader) -> None:
    """Make `reader(tenant=..., subject_ids=...)` the one consent reader."""
    _readers[:] = [reader]


def consented_classes(*, tenant: Tenant, subject_ids: Iterable[Any]) -> dict[Any, frozenset[str]]:
    """The sensitive classes each subject currently consents to."""
    if not _readers:
        # Without a reader a sensitive write would be refused for want of a consent
        # the subject may well have given: fail loudly instead.
        raise ImproperlyConfigured("memory.privacy is not installed: no consent reader.")
    return _readers[0](tenant=tenant, subject_ids=subject_ids)
