"""Registering the platforms memdesk may read from: admins (console, API) and operators.

The base URL is normalised and its host resolved by memdesk before anything
is stored: a host that resolves to an internal address is refused unless the
platform is registered with `allow_private`. The same check runs again on
every read, because names can resolve differently later; a name that does
not resolve yet is accepted for that reason (the read will resolve it).
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from memory.models.platforms import PLATFORM_NAME_PATTERN, Platform
from memory.reconcilers.addresses import AddressRefused, Unresolvable, resolve_checked
from memory.reconcilers.http import PLATFORM_ADDRESS_REFUSED
from memory.reconcilers.urls import URLRefused, normalise_base_url, parse_platform_url

PLATFORM_TARGET_TYPE = "platform"


def platform_register(
    *, tenant: Tenant, actor: Actor, name: str, base_url: str, allow_private: bool = False
) -> tuple[Platform, bool]:
    """Register a platform, or return the identical one already registered.

    Returns `(platform, created)`. The same name with another base URL or
    address policy is refused (`409 platform_name_taken`): changing where
    existing receipts read from is not a registration.
    """
    if not isinstance(name, str) or not re.match(PLATFORM_NAME_PATTERN, name):
        raise Problem(
            "invalid_platform_name",
            "A platform name is 1 to 63 lower-case letters, digits, `.`, `_` or `-`.",
            errors={"name": ["Use lower-case letters, digits, `.`, `_` and `-`."]},
        )
    try:
        normalised = normalise_base_url(base_url)
    except URLRefused as exc:
        raise Problem("invalid_base_url", str(exc), errors={"base_url": [str(exc)]}) from None
    parsed = parse_platform_url(normalised)
    try:
        resolve_checked(
            parsed.host,
            parsed.port,
            allow_private=allow_private,
            timeout=settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
        )
    except AddressRefused as refused:
        raise Problem(
            PLATFORM_ADDRESS_REFUSED,
            f"{parsed.host} resolves to {refused.address}, an internal address (loopback, "
            "private, link-local, multicast or reserved). Register it with allow_private "
            "only if memdesk is meant to read from your internal network.",
            errors={"base_url": [f"Resolves to the internal address {refused.address}."]},
            address=refused.address,
        ) from None
    except Unresolvable:
        pass
    existing = Platform.objects.filter(tenant=tenant, name=name).first()
    if existing is not None:
        return _same_platform(existing, normalised, allow_private), False
    try:
        with transaction.atomic():
            platform = Platform.objects.create(
                tenant=tenant,
                name=name,
                base_url=normalised,
                allow_private=allow_private,
                created_by_kind=actor.kind,
                created_by_id=actor.id,
                created_by_label=actor.label[:150],
            )
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="platform.registered",
                target_type=PLATFORM_TARGET_TYPE,
                target_id=platform.pk,
                data={"name": name, "base_url": normalised, "allow_private": allow_private},
            )
    except IntegrityError:
        # A concurrent registration of the same name won the unique race.
        existing = Platform.objects.filter(tenant=tenant, name=name).first()
        if existing is None:
            raise
        return _same_platform(existing, normalised, allow_private), False
    return platform, True


def _same_platform(existing: Platform, base_url: str, allow_private: bool) -> Platform:
    if (existing.base_url, existing.allow_private) != (base_url, allow_private):
        raise Problem(
            "platform_name_taken",
            f"A platform named `{existing.name}` is already registered with another base URL "
            "or address policy. Choose another name.",
            status_code=409,
            errors={"name": ["Already registered."]},
        )
    return existing
