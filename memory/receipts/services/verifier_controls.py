"""Negative controls of a platform's verifier (docs/reconciliation.md, "Verifier controls").

A reconciler that answers "absent" for everything would prove every unknown
outcome absent and mark real effects `safe_to_retry`. So each platform may carry a
key it never saw and a key it holds; beat reads both through the platform's own
registered lookup, as a receipt's read would. A wrong answer (the absent key
found, or the present key reported absent) marks the platform's verifier
unhealthy with when and why; while it is, reconciliation sends every absence it
reads to a person (`verifier_unhealthy`) until a control run passes. A read that
answers neither way (an error, a timeout) leaves the health as it was.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from memory.receipts.models.platforms import AbsenceProof, Platform
from memory.receipts.models.receipts import ReadOutcome
from memory.receipts.reconcilers.base import LookupResult, LookupTarget, PlatformAccess
from memory.receipts.reconcilers.http import HttpReconciler

PLATFORM_TARGET_TYPE = "platform"
# The reason a receipt goes to a person when its platform's verifier is unhealthy.
VERIFIER_UNHEALTHY = "verifier_unhealthy"


@dataclass(frozen=True)
class ControlRun:
    """What one run of a platform's controls showed: `passed`, `failed` or `inconclusive`."""

    platform_id: int
    verdict: str
    reason: str = ""


def _control_answer(platform: Platform, key: str) -> str:
    """`absent`, `present` or `unknown`: how the platform's registered lookup answers `key`."""
    return control_answer(
        PlatformAccess(
            name=platform.name,
            base_url=platform.base_url,
            allow_private=platform.allow_private,
            absence_proof=platform.absence_proof,
            lookup_template=platform.lookup_template,
        ),
        key,
    )


def control_answer(access: PlatformAccess, key: str) -> str:
    """How a platform's registered lookup answers `key`, read without touching the database
    (reconciliation's read threads call it)."""
    result: LookupResult = HttpReconciler().lookup(
        LookupTarget(
            receipt_id=uuid.uuid4(),
            operation="verifier.control",
            target=access.base_url,
            idempotency_key=key,
            external_id="",
            config={
                "adapter": HttpReconciler.name,
                "lookup_url": access.base_url + access.lookup_template,
            },
            attempt=0,
            platform=access,
        )
    )
    if result.outcome == ReadOutcome.ABSENT:
        return "absent"
    # A record under the key, whatever else the read makes of it (a search hit is
    # not this control's intent), is the platform saying "present".
    if result.outcome == ReadOutcome.FOUND or (
        result.evidence.get("status_code") == 200 and result.error_code != "unparseable_response"
    ):
        return "present"
    return "unknown"


def _judge(platform: Platform) -> tuple[str, str]:
    absent_answer = _control_answer(platform, platform.control_absent_key)
    if absent_answer == "present":
        return "failed", "known-absent key answered present"
    present_answer = (
        _control_answer(platform, platform.control_present_key)
        if platform.control_present_key
        else "present"
    )
    if present_answer == "absent":
        return "failed", "known-present key answered absent"
    if absent_answer == "unknown" or present_answer == "unknown":
        return "inconclusive", ""
    return "passed", ""


def platform_controls_check(*, platform_id: int, now: datetime | None = None) -> ControlRun:
    """Read one platform's controls and record its verifier's health. Safe to run twice."""
    platform = Platform.objects.select_related("tenant").filter(pk=platform_id).first()
    if platform is None or not checkable(platform):
        return ControlRun(platform_id=platform_id, verdict="inconclusive")
    # The reads happen outside any transaction: a slow platform holds no lock.
    verdict, reason = _judge(platform)
    now = now or timezone.now()
    with transaction.atomic():
        locked = Platform.objects.select_for_update().select_related("tenant").get(pk=platform_id)
        was_unhealthy = locked.verifier_unhealthy_since is not None
        locked.controls_checked_at = now
        fields = ["controls_checked_at"]
        if verdict == "failed" and not was_unhealthy:
            locked.verifier_unhealthy_since = now
            locked.verifier_unhealthy_reason = reason
            fields += ["verifier_unhealthy_since", "verifier_unhealthy_reason"]
        elif verdict == "passed" and was_unhealthy:
            locked.verifier_unhealthy_since = None
            locked.verifier_unhealthy_reason = ""
            fields += ["verifier_unhealthy_since", "verifier_unhealthy_reason"]
        locked.save(update_fields=fields)
        if len(fields) > 1:
            audit_record(
                tenant=locked.tenant,
                actor=Actor.system("verifier controls"),
                verb="platform.verifier_unhealthy"
                if verdict == "failed"
                else "platform.verifier_healthy",
                target_type=PLATFORM_TARGET_TYPE,
                target_id=locked.pk,
                reason=reason,
                data={"name": locked.name, "verdict": verdict},
            )
    return ControlRun(platform_id=platform_id, verdict=verdict, reason=reason)


def checkable(platform: Platform) -> bool:
    """A platform whose controls can be read: a known-absent key and a lookup proving absence."""
    return bool(
        platform.control_absent_key
        and platform.lookup_template
        and platform.absence_proof != AbsenceProof.NONE
    )


def platforms_controls_check() -> list[ControlRun]:
    """Beat: run the controls of every platform that has them."""
    ids = (
        Platform.objects.exclude(control_absent_key="").order_by("pk").values_list("pk", flat=True)
    )
    return [platform_controls_check(platform_id=platform_id) for platform_id in ids]


def platform_controls_set(
    *,
    tenant: Tenant,
    actor: Actor,
    name: str,
    known_absent_key: str,
    known_present_key: str = "",
) -> Platform:
    """An admin (or an operator's `manage.py set_verifier_controls`) sets a platform's controls
    (audited); its health stays until the next run."""
    if not (actor.is_admin or actor.kind == ActorKind.SYSTEM):
        raise Problem(
            "role_required",
            "Only a signed-in admin may change a platform's verifier controls.",
            status_code=403,
        )
    known_absent_key = known_absent_key.strip()
    known_present_key = known_present_key.strip()
    if known_present_key and known_present_key == known_absent_key:
        raise Problem(
            "controls_identical",
            "The known-absent and known-present keys must differ.",
            errors={"known_present_key": ["Another key than the known-absent one."]},
        )
    with transaction.atomic():
        platform = Platform.objects.select_for_update().filter(tenant=tenant, name=name).first()
        if platform is None:
            raise not_found("platform")
        before = {
            "known_absent_key": platform.control_absent_key,
            "known_present_key": platform.control_present_key,
        }
        platform.control_absent_key = known_absent_key
        platform.control_present_key = known_present_key
        platform.save(update_fields=["control_absent_key", "control_present_key"])
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="platform.controls_set",
            target_type=PLATFORM_TARGET_TYPE,
            target_id=platform.pk,
            data={
                "name": name,
                "before": before,
                "after": {
                    "known_absent_key": known_absent_key,
                    "known_present_key": known_present_key,
                },
            },
        )
    return platform
