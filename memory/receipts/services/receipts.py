"""The agents' and editors' calls on receipts: plan, report, resolve by hand.

An agent plans a receipt before making the call (`receipt_create`), then
reports what happened (`receipt_transition`); an editor settles a receipt that
reconciliation could not (`receipt_resolve_manual`). Every move goes through
the guarded core in receipt_moves.py.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.fingerprints import fingerprint, identifier_forms
from common.problems import Problem
from common.screen import find_secrets_in_value
from memory.receipts.models.platforms import Platform
from memory.receipts.models.receipts import Receipt, ReceiptKind, ReceiptState
from memory.receipts.policies import agent_success_screened
from memory.receipts.reconcilers import ReconcilerConfigError, reconciler_config_validate
from memory.receipts.reconcilers.http import (
    PLATFORM_NOT_REGISTERED,
    HttpReconciler,
    lookup_url_probe,
)
from memory.receipts.reconcilers.urls import URLRefused, parse_platform_url
from memory.receipts.selectors.platforms import operation_policy_for, platform_for_url, platform_get
from memory.receipts.selectors.receipts import reach, receipt_by_key
from memory.receipts.services.approvals import (
    approval_refused,
    approval_request,
    submit_needs_approval,
)
from memory.receipts.services.receipt_moves import (
    RECEIPT_TARGET_TYPE,
    receipt_locked,
    receipt_move,
    receipt_transition_append,
    reconciliation_enqueue_on_commit,
    transition_role,
)
from memory.receipts.services.runs import run_named

# What an editor may settle a receipt in manual_review as (the table agrees).
MANUAL_VERDICTS = (ReceiptState.SUCCEEDED, ReceiptState.SAFE_TO_RETRY, ReceiptState.REJECTED)


def _refuse_secrets(code: str, values: dict[str, Any]) -> None:
    """Raise before anything is stored: receipts are evidence, never a credential store."""
    errors: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for name, value in values.items():
        findings = find_secrets_in_value(value)
        if findings:
            found = sorted({finding.kind for finding in findings})
            kinds.update(found)
            errors[name] = [f"Looks like a credential ({', '.join(found)})."]
    if errors:
        raise Problem(
            code,
            "The request contains what looks like a credential. memdesk never stores "
            "credentials: fingerprint a sanitised intent and send it again.",
            errors=errors,
            kinds=sorted(kinds),
        )


# -- agents -------------------------------------------------------------------


def receipt_create(
    *,
    tenant: Tenant,
    actor: Actor,
    operation: str,
    target: str,
    intent: Any,
    idempotency_key: str,
    reconciler: dict[str, Any] | None = None,
    run_id: str = "",
    agent: str = "",
    run: UUID | str | None = None,
    policy_version: str = "",
    compensates: UUID | str | None = None,
) -> tuple[Receipt, bool]:
    """Record an intended side effect in `planned`, before the agent makes the call.

    Returns `(receipt, created)`. The same key with the same operation, target
    and intent returns the existing receipt in whatever state it is now, so an
    agent triggered twice learns that the effect is already under way or done.
    The same key for anything else is refused: it would hide a second effect.
    Without a key, the key is derived from the intent's fingerprint, the target
    and the policy version (`derived_idempotency_key`).

    `run` names a registered run (`run_named`); the receipt then carries its
    `run_id` and, unless given, its policy version. `compensates` makes the
    receipt a compensation: the planned undoing of that effect receipt, which it
    inherits its run from (docs/protocol.md, "Compensation").
    """
    _refuse_secrets("secret_in_intent", {"intent": intent})
    _refuse_secrets("secret_in_intent", {"target": target, "reconciler": reconciler or {}})
    _refuse_secrets(
        "secret_detected",
        {
            "operation": operation,
            "idempotency_key": idempotency_key,
            "run_id": run_id,
            "agent": agent,
        },
    )
    try:
        config = reconciler_config_validate(reconciler)
    except ReconcilerConfigError as exc:
        raise Problem(
            "invalid_reconciler",
            "The reconciler block cannot settle this receipt; see `errors`.",
            errors={f"reconciler.{name}": messages for name, messages in exc.errors.items()},
        ) from exc
    _refuse_secrets("secret_detected", {"policy_version": policy_version})
    platform = None
    if config["adapter"] == HttpReconciler.name:
        platform, config = _lookup_platform(tenant=tenant, config=config)
    undone = _compensated(tenant=tenant, actor=actor, receipt_id=compensates)
    if undone is not None and run is None and not run_id:
        run, run_id = undone.registered_run_id, undone.run_id
    registered, run_id = run_named(tenant=tenant, actor=actor, run=run, run_id=run_id)
    if registered is not None and not policy_version:
        policy_version = registered.policy_version
    intent_fingerprint = fingerprint(intent)
    if not idempotency_key:
        idempotency_key = derived_idempotency_key(
            intent_fingerprint=intent_fingerprint, target=target, policy_version=policy_version
        )
    existing = receipt_by_key(tenant=tenant, idempotency_key=idempotency_key)
    if existing is not None:
        return _same_request(existing, actor, operation, target, intent_fingerprint, undone), False
    now = timezone.now()
    try:
        with transaction.atomic():
            receipt = Receipt.objects.create(
                tenant=tenant,
                operation=operation,
                target=target,
                intent=intent,
                intent_fingerprint=intent_fingerprint,
                idempotency_key=idempotency_key,
                reconciler=config,
                platform=platform,
                run_id=run_id,
                registered_run=registered,
                policy_version=policy_version,
                kind=ReceiptKind.COMPENSATION if undone is not None else ReceiptKind.EFFECT,
                compensates=undone,
                agent=agent or actor.label[:100],
                token_id=actor.token_id,
                state=ReceiptState.PLANNED,
                created_at=now,
                updated_at=now,
            )
            # Entering the machine is its first transition, so the timeline
            # starts with who planned the effect.
            receipt_transition_append(receipt, from_state="", actor=actor, at=now, reason="planned")
            policy = operation_policy_for(tenant=tenant, operation=operation)
            if policy is not None and policy.approval_required:
                approval_request(receipt)
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="receipt.created",
                target_type=RECEIPT_TARGET_TYPE,
                target_id=receipt.pk,
                data={
                    "operation": operation,
                    "idempotency_key": idempotency_key,
                    "intent_fingerprint": intent_fingerprint,
                    "adapter": config["adapter"],
                    "kind": receipt.kind,
                    "compensates": str(undone.pk) if undone is not None else None,
                    "run": str(registered.pk) if registered is not None else None,
                },
            )
            if undone is not None:
                # On the effect's own record too: its timeline shows it has an undoing.
                audit_record(
                    tenant=tenant,
                    actor=actor,
                    verb="receipt.compensation_planned",
                    target_type=RECEIPT_TARGET_TYPE,
                    target_id=undone.pk,
                    data={"compensation": str(receipt.pk), "operation": operation},
                )
    except IntegrityError:
        # A concurrent duplicate won the unique (tenant, idempotency_key) race.
        existing = receipt_by_key(tenant=tenant, idempotency_key=idempotency_key)
        if existing is None:
            raise
        return _same_request(existing, actor, operation, target, intent_fingerprint, undone), False
    return receipt, True


def derived_idempotency_key(*, intent_fingerprint: str, target: str, policy_version: str) -> str:
    """The key of an effect the agent named no key for: the same content sent to the
    same target under the same policy is the same effect; a new policy version or a
    changed intent is a new one."""
    digest = fingerprint(
        {"intent": intent_fingerprint, "target": target, "policy_version": policy_version}
    )
    return f"derived:{digest}"


def _compensated(*, tenant: Tenant, actor: Actor, receipt_id: UUID | str | None) -> Receipt | None:
    """The effect receipt a compensation undoes, checked; None for an ordinary receipt."""
    if receipt_id is None:
        return None
    effect = Receipt.objects.filter(reach(actor), tenant=tenant, pk=receipt_id).first()
    if effect is None:
        raise Problem(
            "unknown_effect",
            "A compensation undoes a receipt of yours; no such receipt.",
            errors={"compensates": [f"No receipt {receipt_id}."]},
        )
    if effect.kind == ReceiptKind.COMPENSATION:
        raise Problem(
            "compensation_invalid",
            "A compensation undoes an effect, not another compensation: to undo this one, "
            "name the effect it compensates.",
            errors={"compensates": ["This receipt is itself a compensation."]},
        )
    return effect


def _lookup_platform(*, tenant: Tenant, config: dict[str, Any]) -> tuple[Platform, dict[str, Any]]:
    """The registered platform an http lookup reads from, and the config naming it.

    Agents never choose hosts: the lookup URL must lie under a platform an
    admin registered for this tenant, either spelled out (`lookup_url`) or as
    a `lookup_path` under a named `platform`.
    """
    name = config.get("platform")
    field = "reconciler.lookup_url"
    platform = None
    if name is not None:
        platform = platform_get(tenant=tenant, name=name)
        if platform is None:
            raise Problem(
                PLATFORM_NOT_REGISTERED,
                f"No platform named `{name}` is registered; an admin registers it first.",
                errors={"reconciler.platform": ["Not a registered platform."]},
            )
        if "lookup_path" in config:
            field = "reconciler.lookup_path"
            config = {**config, "lookup_url": platform.base_url + config["lookup_path"].lstrip("/")}
    try:
        probe = lookup_url_probe(config["lookup_url"])
    except URLRefused as exc:
        raise Problem(
            "invalid_reconciler",
            "The reconciler block cannot settle this receipt; see `errors`.",
            errors={field: [str(exc)]},
        ) from None
    if platform is None:
        platform = platform_for_url(tenant=tenant, url=probe)
    elif not probe.is_under(parse_platform_url(platform.base_url)):
        platform = None
    if platform is None:
        raise Problem(
            PLATFORM_NOT_REGISTERED,
            "memdesk reads only from registered platforms: the lookup must start with a "
            "registered platform's base URL (or name `platform` with a `lookup_path`). An "
            "admin registers platforms.",
            errors={field: ["Not under a registered platform's base URL."]},
        )
    return platform, {**config, "platform": platform.name}


def _same_request(
    existing: Receipt,
    actor: Actor,
    operation: str,
    target: str,
    intent_fp: str,
    compensates: Receipt | None = None,
) -> Receipt:
    if not Receipt.objects.filter(reach(actor), pk=existing.pk).exists():
        # Keys are unique in the tenant, so another token's key cannot name a second
        # effect; refuse it as reused, and say nothing of the receipt behind it.
        raise Problem(
            "idempotency_key_reused",
            "This idempotency_key already names another effect. Use a new key for a new effect.",
            status_code=409,
        )
    # A deletion may have replaced the operation or target by its digest; the intent
    # is compared by fingerprint, which a deletion keeps.
    if (
        existing.operation not in identifier_forms(operation)
        or existing.target not in identifier_forms(target)
        or existing.intent_fingerprint != intent_fp
        or existing.compensates_id != (compensates.pk if compensates is not None else None)
    ):
        raise Problem(
            "idempotency_key_reused",
            "This idempotency_key already names a different effect (operation, target, "
            "intent or the effect it compensates differ). Use a new key for a new effect.",
            status_code=409,
            receipt=str(existing.pk),
            intent_fingerprint=existing.intent_fingerprint,
        )
    return existing


def receipt_transition(
    *,
    tenant: Tenant,
    receipt_id: UUID | str,
    actor: Actor,
    to: str,
    external_id: str = "",
    error_code: str = "",
    evidence: dict[str, Any] | None = None,
    reason: str = "",
    lease_seconds: int | None = None,
) -> Receipt:
    """Move a receipt along the state machine as `actor`, or raise `InvalidTransition`.

    `lease_seconds` applies to `submitted`: how long the agent expects the call
    to take before it reports back; past it, the sweep marks the outcome unknown.
    """
    return _transition(
        tenant=tenant,
        receipt_id=receipt_id,
        actor=actor,
        to=to,
        external_id=external_id,
        error_code=error_code,
        evidence=evidence,
        reason=reason,
        lease_seconds=lease_seconds,
    )


def _transition(
    *,
    tenant: Tenant,
    receipt_id: UUID | str,
    actor: Actor,
    to: str,
    external_id: str = "",
    error_code: str = "",
    evidence: dict[str, Any] | None = None,
    reason: str = "",
    lease_seconds: int | None = None,
    verb: str = "receipt.transitioned",
    deciding_review_item: int | None = None,
) -> Receipt:
    _refuse_secrets("secret_in_evidence", {"evidence": evidence or {}})
    _refuse_secrets(
        "secret_detected", {"external_id": external_id, "error_code": error_code, "reason": reason}
    )
    submit_lease = None
    if lease_seconds is not None:
        if to != ReceiptState.SUBMITTED:
            raise Problem(
                "invalid_lease",
                "lease_seconds applies only to the move to `submitted`.",
                errors={"lease_seconds": ["Send it with `to: submitted`."]},
            )
        if not 1 <= lease_seconds <= settings.RECEIPT_SUBMIT_LEASE_MAX_SECONDS:
            raise Problem(
                "invalid_lease",
                "lease_seconds is out of range.",
                errors={
                    "lease_seconds": [
                        f"Between 1 and {settings.RECEIPT_SUBMIT_LEASE_MAX_SECONDS} seconds."
                    ]
                },
            )
        submit_lease = timedelta(seconds=lease_seconds)
    now = timezone.now()
    with transaction.atomic():
        receipt = receipt_locked(tenant=tenant, actor=actor, receipt_id=receipt_id)
        # Under the lock, so the policy judges the receipt as it is when it moves.
        policy = operation_policy_for(tenant=tenant, operation=receipt.operation)
        refusal = None
        if submit_needs_approval(receipt, policy=policy, role=transition_role(actor), to=to):
            if receipt.state == ReceiptState.PLANNED:
                # Planned before its policy asked for approval: it asks now, and the
                # request is kept (committed) though the submit is refused.
                approval_request(receipt)
            refusal = approval_refused(receipt)
        else:
            screened = agent_success_screened(
                policy=policy,
                role=transition_role(actor),
                state=receipt.state,
                to=to,
                recorded_external_id=receipt.external_id,
                external_id=external_id,
                evidence=evidence,
                reason=reason,
            )
            receipt_move(
                receipt,
                to=screened.to,
                actor=actor,
                now=now,
                reason=screened.reason,
                evidence=evidence,
                external_id=external_id,
                error_code=error_code,
                submit_lease=submit_lease,
                verb=verb,
                deciding_review_item=deciding_review_item,
            )
            if screened.to == ReceiptState.OUTCOME_UNKNOWN:
                reconciliation_enqueue_on_commit([receipt.pk])
    if refusal is not None:
        raise refusal
    return receipt


# -- editors ------------------------------------------------------------------


def receipt_resolve_manual(
    *,
    tenant: Tenant,
    receipt_id: UUID | str,
    actor: Actor,
    verdict: str,
    reason: str,
    external_id: str = "",
    evidence: dict[str, Any] | None = None,
    review_item_id: int | None = None,
) -> Receipt:
    """An editor settles a receipt that reconciliation could not: succeeded (with the
    platform's id), safe_to_retry, or rejected. `review_item_id` is the manual_review
    item being decided, if the resolution comes through the queue."""
    if verdict not in MANUAL_VERDICTS:
        raise Problem(
            "invalid_verdict",
            f"`{verdict}` does not settle a receipt.",
            errors={"verdict": [f"Choose one of: {', '.join(MANUAL_VERDICTS)}."]},
            allowed=list(MANUAL_VERDICTS),
        )
    return _transition(
        tenant=tenant,
        receipt_id=receipt_id,
        actor=actor,
        to=verdict,
        external_id=external_id,
        evidence=evidence,
        reason=reason,
        verb="receipt.resolved",
        deciding_review_item=review_item_id,
    )
