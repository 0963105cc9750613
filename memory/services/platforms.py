"""Registering the platforms memdesk may read from, and the operation policies that say
what an agent's `succeeded` needs on them: admins (console, API) and operators.

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
from django.db.models.functions import Now

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from memory.models.platforms import (
    EVIDENCE_FIELD_PATTERN,
    PLATFORM_NAME_PATTERN,
    OperationPolicy,
    Platform,
)
from memory.reconcilers.addresses import AddressRefused, Unresolvable, resolve_checked
from memory.reconcilers.http import PLATFORM_ADDRESS_REFUSED, PLATFORM_NOT_REGISTERED
from memory.reconcilers.urls import URLRefused, normalise_base_url, parse_platform_url

PLATFORM_TARGET_TYPE = "platform"
OPERATION_POLICY_TARGET_TYPE = "operation_policy"


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


def operation_policy_set(
    *,
    tenant: Tenant,
    actor: Actor,
    platform: str,
    operation: str,
    require_external_id: bool = False,
    evidence_fields: list[str] | tuple[str, ...] = (),
    require_verifying_read: bool = False,
) -> tuple[OperationPolicy, bool]:
    """Say what an agent's `succeeded` needs for `operation`; replaces the operation's policy.

    Returns `(policy, created)`. Replacing is audited with what was required
    before, so a loosened policy is never silent.
    """
    registered = Platform.objects.filter(tenant=tenant, name=platform).first()
    if registered is None:
        raise Problem(
            PLATFORM_NOT_REGISTERED,
            f"No platform named `{platform}` is registered; register it first.",
            errors={"platform": ["Not a registered platform."]},
        )
    operation = operation.strip() if isinstance(operation, str) else ""
    if not operation or len(operation) > 200:
        raise Problem(
            "invalid_operation",
            "Name the operation the policy is for, as receipts name it (1 to 200 characters).",
            errors={"operation": ["1 to 200 characters, e.g. articles.create."]},
        )
    fields = list(dict.fromkeys(evidence_fields))
    bad = [name for name in fields if not re.match(EVIDENCE_FIELD_PATTERN, name)]
    if bad or len(fields) > 32:
        raise Problem(
            "invalid_evidence_field",
            "Evidence fields are top-level keys of a report's `evidence`: lower-case letters, "
            "digits and `_`, starting with a letter; at most 32.",
            errors={
                "evidence_fields": [f"Not a field name: {name}" for name in bad] or ["Too many."]
            },
        )
    if not (require_external_id or fields or require_verifying_read):
        raise Problem(
            "policy_requires_nothing",
            "A policy must require something: an external id, evidence fields or a verifying "
            "read. Without a policy the agent's report is taken as it comes.",
            errors={"require_external_id": ["Choose at least one requirement."]},
        )
    values = {
        "platform": registered,
        "require_external_id": require_external_id,
        "evidence_fields": fields,
        "require_verifying_read": require_verifying_read,
    }
    with transaction.atomic():
        previous = (
            OperationPolicy.objects.select_for_update()
            .filter(tenant=tenant, operation=operation)
            .first()
        )
        before = None if previous is None else _policy_summary(previous)
        policy, created = OperationPolicy.objects.update_or_create(
            tenant=tenant,
            operation=operation,
            defaults={**values, "updated_at": Now()},
            create_defaults={
                **values,
                "created_by_kind": actor.kind,
                "created_by_id": actor.id,
                "created_by_label": actor.label[:150],
            },
        )
        after = _policy_summary(policy) | {"platform": registered.name}
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="operation_policy.set",
            target_type=OPERATION_POLICY_TARGET_TYPE,
            target_id=policy.pk,
            data={"operation": operation, "before": before, "after": after},
        )
    policy.refresh_from_db()
    return policy, created


def _policy_summary(policy: OperationPolicy) -> dict[str, object]:
    return {
        "platform_id": policy.platform_id,
        "require_external_id": policy.require_external_id,
        "evidence_fields": list(policy.evidence_fields),
        "require_verifying_read": policy.require_verifying_read,
    }
