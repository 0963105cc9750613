"""Registering the platforms memdesk may read from, and the operation policies that say
what an agent's `succeeded` needs on them: admins (console, API) and operators.

The base URL is normalised and its host resolved by memdesk before anything
is stored: a host that resolves to an internal address is refused unless the
platform is registered with `allow_private`. The same check runs again on
every read, because names can resolve differently later; a name that does
not resolve yet is accepted for that reason (the read will resolve it).

How a platform proves that a write never happened is the admin's registration
too (docs/reconciliation.md): the kind of proof, the lookup by key that gives
it, how long the platform remembers a key, and how long after submission a
negative answer may still be the platform catching up.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import Now

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem
from memory.receipts.models.platforms import (
    EVIDENCE_FIELD_PATTERN,
    KEY_NAME,
    KEY_PLACEHOLDER,
    PLATFORM_NAME_PATTERN,
    AbsenceProof,
    OperationPolicy,
    Platform,
)
from memory.receipts.reconcilers.addresses import AddressRefused, Unresolvable, resolve_checked
from memory.receipts.reconcilers.http import (
    MAX_LOOKUP_LENGTH,
    PLATFORM_ADDRESS_REFUSED,
    PLATFORM_NOT_REGISTERED,
    lookup_url_placeholders,
    lookup_url_probe,
)
from memory.receipts.reconcilers.urls import URLRefused, normalise_base_url, parse_platform_url

PLATFORM_TARGET_TYPE = "platform"
OPERATION_POLICY_TARGET_TYPE = "operation_policy"
# Longest key retention and consistency delay a registration accepts (ten years).
MAX_PLATFORM_SECONDS = 10 * 366 * 24 * 3600


@dataclass(frozen=True)
class AbsenceRegistration:
    """What an admin says about proving absence on a platform, checked and normalised."""

    absence_proof: str = AbsenceProof.NONE
    lookup_template: str = ""
    key_retention_seconds: int | None = None
    consistency_delay_seconds: int = 0


def _absence_problem(code: str, field: str, message: str) -> Problem:
    return Problem(code, message, errors={field: [message]})


def absence_registration_checked(
    *,
    base_url: str,
    absence_proof: str = AbsenceProof.NONE,
    lookup_template: str = "",
    key_retention_seconds: int | None = None,
    consistency_delay_seconds: int = 0,
) -> AbsenceRegistration:
    """The absence settings of a platform at the normalised `base_url`, or a `Problem`.

    A lookup template must contain the receipt's key: a URL without it answers
    the same for every receipt, so its 404 or `[]` says nothing about this one.
    """
    if absence_proof not in AbsenceProof.values:
        raise _absence_problem(
            "invalid_absence_proof",
            "absence_proof",
            f"Choose one of: {', '.join(AbsenceProof.values)}.",
        )
    template = (lookup_template or "").strip().lstrip("/")
    if template:
        if len(template) > MAX_LOOKUP_LENGTH:
            raise _absence_problem(
                "invalid_lookup_template",
                "lookup_template",
                f"Give at most {MAX_LOOKUP_LENGTH} characters.",
            )
        try:
            placeholders = lookup_url_placeholders(template)
        except ValueError as exc:
            raise _absence_problem("invalid_lookup_template", "lookup_template", str(exc)) from None
        # Parsed, not searched for: `{{idempotency_key}}` is the literal text, not the key.
        if KEY_NAME not in placeholders:
            raise _absence_problem(
                "lookup_template_without_key",
                "lookup_template",
                f"The lookup must contain {KEY_PLACEHOLDER}: only a lookup of the receipt's "
                "own key can prove that its write never happened.",
            )
        try:
            probe = lookup_url_probe(base_url + template)
        except URLRefused as exc:
            raise _absence_problem("invalid_lookup_template", "lookup_template", str(exc)) from None
        if not probe.is_under(parse_platform_url(base_url)):
            raise _absence_problem(
                "invalid_lookup_template",
                "lookup_template",
                "The lookup must stay under the platform's base URL.",
            )
    for field, value in (
        ("key_retention_seconds", key_retention_seconds),
        ("consistency_delay_seconds", consistency_delay_seconds),
    ):
        if value is None and field == "key_retention_seconds":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise _absence_problem(f"invalid_{field}", field, "Give a whole number of seconds.")
        low = 1 if field == "key_retention_seconds" else 0
        if not low <= value <= MAX_PLATFORM_SECONDS:
            raise _absence_problem(
                f"invalid_{field}",
                field,
                f"Give between {low} and {MAX_PLATFORM_SECONDS} seconds.",
            )
    if absence_proof != AbsenceProof.NONE:
        if not template:
            raise _absence_problem(
                "lookup_template_without_key",
                "lookup_template",
                "A proof of absence needs the lookup by key that gives it, with "
                f"{KEY_PLACEHOLDER}.",
            )
        if key_retention_seconds is None:
            raise _absence_problem(
                "invalid_key_retention_seconds",
                "key_retention_seconds",
                "A proof of absence needs how long the platform remembers a key: past it, "
                "not finding the key proves nothing.",
            )
    return AbsenceRegistration(
        absence_proof=absence_proof,
        lookup_template=template,
        key_retention_seconds=key_retention_seconds,
        consistency_delay_seconds=consistency_delay_seconds,
    )


def platform_register(
    *,
    tenant: Tenant,
    actor: Actor,
    name: str,
    base_url: str,
    allow_private: bool = False,
    absence_proof: str = AbsenceProof.NONE,
    lookup_template: str = "",
    key_retention_seconds: int | None = None,
    consistency_delay_seconds: int = 0,
) -> tuple[Platform, bool]:
    """Register a platform, or return the identical one already registered.

    Returns `(platform, created)`. The same name with another base URL,
    address policy or proof of absence is refused (`409 platform_name_taken`):
    changing where and how existing receipts are settled is not a registration.
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
    absence = absence_registration_checked(
        base_url=normalised,
        absence_proof=absence_proof,
        lookup_template=lookup_template,
        key_retention_seconds=key_retention_seconds,
        consistency_delay_seconds=consistency_delay_seconds,
    )
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
        return _same_platform(existing, normalised, allow_private, absence), False
    try:
        with transaction.atomic():
            platform = Platform.objects.create(
                tenant=tenant,
                name=name,
                base_url=normalised,
                allow_private=allow_private,
                **asdict(absence),
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
                data={
                    "name": name,
                    "base_url": normalised,
                    "allow_private": allow_private,
                    **asdict(absence),
                },
            )
    except IntegrityError:
        # A concurrent registration of the same name won the unique race.
        existing = Platform.objects.filter(tenant=tenant, name=name).first()
        if existing is None:
            raise
        return _same_platform(existing, normalised, allow_private, absence), False
    return platform, True


def _absence_of(platform: Platform) -> AbsenceRegistration:
    return AbsenceRegistration(
        absence_proof=platform.absence_proof,
        lookup_template=platform.lookup_template,
        key_retention_seconds=platform.key_retention_seconds,
        consistency_delay_seconds=platform.consistency_delay_seconds,
    )


def _same_platform(
    existing: Platform, base_url: str, allow_private: bool, absence: AbsenceRegistration
) -> Platform:
    if (existing.base_url, existing.allow_private, _absence_of(existing)) != (
        base_url,
        allow_private,
        absence,
    ):
        raise Problem(
            "platform_name_taken",
            f"A platform named `{existing.name}` is already registered with another base URL, "
            "address policy or proof of absence. Choose another name.",
            status_code=409,
            errors={"name": ["Already registered."]},
        )
    return existing


def platform_absence_proof_set(
    *,
    tenant: Tenant,
    actor: Actor,
    name: str,
    absence_proof: str = AbsenceProof.NONE,
    lookup_template: str = "",
    key_retention_seconds: int | None = None,
    consistency_delay_seconds: int = 0,
) -> Platform:
    """Change how a registered platform proves absence; audited with what it said before.

    Where the platform is (base URL, address policy) stays as registered. Every
    read claimed from now on is judged by the new settings, including reads of
    receipts planned before the change: the platform's word is the one that counts.
    """
    with transaction.atomic():
        platform = Platform.objects.select_for_update().filter(tenant=tenant, name=name).first()
        if platform is None:
            raise Problem(
                PLATFORM_NOT_REGISTERED,
                f"No platform named `{name}` is registered; register it first.",
                status_code=404,
                errors={"platform": ["Not a registered platform."]},
            )
        absence = absence_registration_checked(
            base_url=platform.base_url,
            absence_proof=absence_proof,
            lookup_template=lookup_template,
            key_retention_seconds=key_retention_seconds,
            consistency_delay_seconds=consistency_delay_seconds,
        )
        before = _absence_of(platform)
        for field, value in asdict(absence).items():
            setattr(platform, field, value)
        platform.save(update_fields=list(asdict(absence)))
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="platform.absence_proof_set",
            target_type=PLATFORM_TARGET_TYPE,
            target_id=platform.pk,
            data={"name": name, "before": asdict(before), "after": asdict(absence)},
        )
    return platform


def operation_policy_set(
    *,
    tenant: Tenant,
    actor: Actor,
    platform: str,
    operation: str,
    require_external_id: bool = False,
    evidence_fields: list[str] | tuple[str, ...] = (),
    require_verifying_read: bool = False,
    approval_required: bool = False,
    compensate_on_failure: bool = False,
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
    if not (
        require_external_id
        or fields
        or require_verifying_read
        or approval_required
        or compensate_on_failure
    ):
        raise Problem(
            "policy_requires_nothing",
            "A policy must require something: an external id, evidence fields, a verifying "
            "read, a person's approval or compensation on failure. Without a policy the "
            "agent's report is taken as it comes.",
            errors={"require_external_id": ["Choose at least one requirement."]},
        )
    values = {
        "platform": registered,
        "require_external_id": require_external_id,
        "evidence_fields": fields,
        "require_verifying_read": require_verifying_read,
        "approval_required": approval_required,
        "compensate_on_failure": compensate_on_failure,
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
        "approval_required": policy.approval_required,
        "compensate_on_failure": policy.compensate_on_failure,
    }
