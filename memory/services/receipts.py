"""Every write to receipts: create, transition, reconcile, resolve by hand, and the sweeps.

A receipt moves only along `RECEIPT_TRANSITIONS`. Each move locks the row,
checks the table, and appends its `ReceiptTransition` and an audit row in the
same transaction, with the actor; waking a reconciler happens after commit.

Reconciliation work lives in the receipt rows, not in the broker: a worker
claims one receipt at a time with `FOR UPDATE SKIP LOCKED`, takes a lease and
bumps `reconcile_attempts`. The attempt number is the fence: a worker whose
lease lapsed and whose receipt was claimed again finds a different number
when it comes back, and its late result is discarded.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, Tenant
from accounts.services import audit_record
from common.fingerprints import fingerprint
from common.problems import InvalidTransition, Problem, not_found
from common.screen import find_secrets_in_value
from memory.models.platforms import Platform
from memory.models.receipts import (
    ReadOutcome,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
    TransitionRole,
    allowed_receipt_targets,
)
from memory.reconcilers import (
    LookupResult,
    LookupTarget,
    PlatformAccess,
    ReconcilerConfigError,
    reconciler_config_validate,
    reconciler_for,
)
from memory.reconcilers.http import PLATFORM_NOT_REGISTERED, HttpReconciler, lookup_url_probe
from memory.reconcilers.urls import URLRefused, parse_platform_url
from memory.selectors.platforms import platform_for_url, platform_get
from reviews.models import Queue
from reviews.services import review_cancel_for_target, review_open

logger = logging.getLogger(__name__)

RECEIPT_TARGET_TYPE = "receipt"
# What an editor may settle a receipt in manual_review as (the table agrees).
MANUAL_VERDICTS = (ReceiptState.SUCCEEDED, ReceiptState.SAFE_TO_RETRY, ReceiptState.REJECTED)
# Fields a transition may change; saved together so one move is one UPDATE.
_MOVE_FIELDS = [
    "state",
    "external_id",
    "error_code",
    "submitted_at",
    "submit_lease_expires_at",
    "next_reconcile_at",
    "reconcile_lease_expires_at",
    "updated_at",
]


def transition_role(actor: Actor) -> str | None:
    """The state machine's role for `actor`; a person who is not an editor has none."""
    if actor.kind == ActorKind.AGENT:
        return TransitionRole.AGENT
    if actor.kind == ActorKind.SYSTEM:
        return TransitionRole.WORKER
    if actor.is_editor:
        return TransitionRole.EDITOR
    return None


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


def _locked_receipt(*, tenant: Tenant, receipt_id: UUID | str) -> Receipt:
    receipt = (
        Receipt.objects.select_for_update(of=("self",))
        .select_related("tenant")
        .filter(tenant=tenant, pk=receipt_id)
        .first()
    )
    if receipt is None:
        raise not_found("receipt")
    return receipt


def _append_transition(
    receipt: Receipt,
    *,
    from_state: str,
    actor: Actor,
    at: datetime,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
) -> ReceiptTransition:
    return ReceiptTransition.objects.create(
        tenant_id=receipt.tenant_id,
        receipt=receipt,
        from_state=from_state,
        to_state=receipt.state,
        actor_kind=actor.kind,
        actor_id=actor.id,
        actor_label=actor.label[:150],
        reason=reason[:500],
        evidence=evidence or {},
        attempt=receipt.reconcile_attempts,
        at=at,
    )


def _reconcile_on_commit(receipt_ids: list[UUID]) -> None:
    # robust: the state change is committed whatever happens to the broker; if
    # the enqueue fails, the due-receipts sweep finds the work from the rows.
    transaction.on_commit(lambda: reconciliation_enqueue(receipt_ids=receipt_ids), robust=True)


def reconciliation_enqueue(*, receipt_ids: Iterable[UUID | str]) -> int:
    """Wake reconcilers for these receipts, one Celery task per chunk. Returns the chunks sent."""
    ids = [str(receipt_id) for receipt_id in receipt_ids]
    size = max(1, settings.RECONCILE_CHUNK_SIZE)
    chunks = [ids[start : start + size] for start in range(0, len(ids), size)]
    for chunk in chunks:
        # By name: the tasks module imports this one, never the other way round.
        current_app.signature(
            "memory.reconcile_receipts", args=[chunk], queue=settings.RECONCILE_QUEUE
        ).apply_async()
    return len(chunks)


def _move(
    receipt: Receipt,
    *,
    to: str,
    actor: Actor,
    now: datetime,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
    external_id: str = "",
    error_code: str = "",
    submit_lease: timedelta | None = None,
    verb: str = "receipt.transitioned",
    deciding_review_item: int | None = None,
) -> ReceiptTransition:
    """Move a locked receipt one step, or raise. The only code that changes `state`."""
    role = transition_role(actor)
    allowed = allowed_receipt_targets(receipt.state, role)
    if to not in allowed:
        who = f"the {role}" if role else "this caller"
        raise InvalidTransition(
            f"A receipt in `{receipt.state}` cannot be moved to `{to}` by {who}.",
            allowed=allowed,
        )
    if role == TransitionRole.EDITOR and not reason.strip():
        raise Problem(
            "reason_required",
            "Settling a receipt by hand needs a reason.",
            errors={"reason": ["Say why."]},
        )
    if role == TransitionRole.EDITOR and to == ReceiptState.SUCCEEDED and not external_id:
        raise Problem(
            "external_id_required",
            "Marking a receipt succeeded by hand needs the platform's id for the effect.",
            errors={"external_id": ["Give the id the outside system assigned."]},
        )
    replaced_external_id = ""
    if external_id and receipt.external_id and external_id != receipt.external_id:
        # Only an editor may correct the id; the old one stays in the audit trail.
        if role == TransitionRole.EDITOR:
            replaced_external_id = receipt.external_id
        else:
            raise Problem(
                "external_id_conflict",
                f"This receipt already records the external id `{receipt.external_id}`.",
                status_code=409,
            )
    from_state = receipt.state
    receipt.state = to
    receipt.updated_at = now
    if external_id:
        receipt.external_id = external_id
    if error_code:
        receipt.error_code = error_code[:100]
    if to == ReceiptState.SUBMITTED:
        receipt.submitted_at = now
        receipt.submit_lease_expires_at = now + (
            submit_lease or timedelta(seconds=settings.RECEIPT_SUBMIT_LEASE_SECONDS)
        )
    elif from_state == ReceiptState.SUBMITTED:
        receipt.submit_lease_expires_at = None
    if to == ReceiptState.OUTCOME_UNKNOWN:
        receipt.next_reconcile_at = now
    elif to != ReceiptState.RECONCILING:
        receipt.next_reconcile_at = None
        receipt.reconcile_lease_expires_at = None
    receipt.save(update_fields=_MOVE_FIELDS)
    transition = _append_transition(
        receipt, from_state=from_state, actor=actor, at=now, reason=reason, evidence=evidence
    )
    audit_record(
        tenant=receipt.tenant,
        actor=actor,
        verb=verb,
        target_type=RECEIPT_TARGET_TYPE,
        target_id=receipt.pk,
        reason=reason,
        data={"from": from_state, "to": to, "transition": transition.pk}
        | ({"replaced_external_id": replaced_external_id} if replaced_external_id else {}),
    )
    if to == ReceiptState.MANUAL_REVIEW:
        review_open(
            tenant=receipt.tenant,
            queue=Queue.MANUAL_REVIEW,
            target_type=RECEIPT_TARGET_TYPE,
            target_id=receipt.pk,
            target_version=receipt.version(),
            topic=receipt.operation,
            agent_label=receipt.agent,
            reason_codes=[reason[:64]] if reason else [],
        )
    elif from_state == ReceiptState.MANUAL_REVIEW and deciding_review_item is None:
        # Settled outside the queue: nobody should decide it a second time there.
        review_cancel_for_target(
            tenant=receipt.tenant,
            target_type=RECEIPT_TARGET_TYPE,
            target_id=receipt.pk,
            queue=Queue.MANUAL_REVIEW,
        )
    return transition


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
) -> tuple[Receipt, bool]:
    """Record an intended side effect in `planned`, before the agent makes the call.

    Returns `(receipt, created)`. The same key with the same operation, target
    and intent returns the existing receipt in whatever state it is now, so an
    agent triggered twice learns that the effect is already under way or done.
    The same key for anything else is refused: it would hide a second effect.
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
    platform = None
    if config["adapter"] == HttpReconciler.name:
        platform, config = _lookup_platform(tenant=tenant, config=config)
    intent_fingerprint = fingerprint(intent)
    existing = Receipt.objects.filter(tenant=tenant, idempotency_key=idempotency_key).first()
    if existing is not None:
        return _same_request(existing, operation, target, intent_fingerprint), False
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
                agent=agent or actor.label[:100],
                token_id=int(actor.id) if actor.kind == ActorKind.AGENT and actor.id else None,
                state=ReceiptState.PLANNED,
                created_at=now,
                updated_at=now,
            )
            # Entering the machine is its first transition, so the timeline
            # starts with who planned the effect.
            _append_transition(receipt, from_state="", actor=actor, at=now, reason="planned")
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
                },
            )
    except IntegrityError:
        # A concurrent duplicate won the unique (tenant, idempotency_key) race.
        existing = Receipt.objects.filter(tenant=tenant, idempotency_key=idempotency_key).first()
        if existing is None:
            raise
        return _same_request(existing, operation, target, intent_fingerprint), False
    return receipt, True


def _lookup_platform(*, tenant: Tenant, config: dict[str, Any]) -> tuple[Platform, dict]:
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


def _same_request(existing: Receipt, operation: str, target: str, intent_fp: str) -> Receipt:
    if (existing.operation, existing.target, existing.intent_fingerprint) != (
        operation,
        target,
        intent_fp,
    ):
        raise Problem(
            "idempotency_key_reused",
            "This idempotency_key already names a different effect (operation, target or "
            "intent differ). Use a new key for a new effect.",
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
        receipt = _locked_receipt(tenant=tenant, receipt_id=receipt_id)
        _move(
            receipt,
            to=to,
            actor=actor,
            now=now,
            reason=reason,
            evidence=evidence,
            external_id=external_id,
            error_code=error_code,
            submit_lease=submit_lease,
            verb=verb,
            deciding_review_item=deciding_review_item,
        )
        if to == ReceiptState.OUTCOME_UNKNOWN:
            _reconcile_on_commit([receipt.pk])
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


# -- reconciliation workers -----------------------------------------------------


@dataclass(frozen=True)
class ReconcileClaim:
    receipt_id: UUID
    attempt: int
    adapter: str
    lookup: LookupTarget


@dataclass
class ReconcilePass:
    """What one pass over a chunk did, for logs and the operator command."""

    claimed: int = 0
    skipped: int = 0
    fenced: int = 0
    # State of each claimed receipt after its read (`reconciling`: read again later).
    states: Counter[str] = field(default_factory=Counter)
    unprocessed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "claimed": self.claimed,
            "skipped": self.skipped,
            "fenced": self.fenced,
            "states": dict(self.states),
            "unprocessed": len(self.unprocessed),
        }


def _claimable(now: datetime) -> Q:
    return Q(state__in=[ReceiptState.OUTCOME_UNKNOWN, ReceiptState.RECONCILING]) & (
        Q(reconcile_lease_expires_at__isnull=True) | Q(reconcile_lease_expires_at__lte=now)
    )


def _due(now: datetime) -> Q:
    return _claimable(now) & (Q(next_reconcile_at__isnull=True) | Q(next_reconcile_at__lte=now))


def reconcile_backoff(attempt: int) -> timedelta:
    """Exponential, capped, with jitter so receipts that failed together spread out."""
    base = settings.RECONCILE_BACKOFF_BASE_SECONDS
    ceiling = min(settings.RECONCILE_BACKOFF_MAX_SECONDS, base * 2 ** max(0, attempt - 1))
    return timedelta(seconds=random.uniform(ceiling / 2, ceiling))


def receipt_reconcile_claim(
    *, receipt_id: UUID | str, worker: Actor, force: bool = False, now: datetime | None = None
) -> ReconcileClaim | None:
    """Take one receipt for one read, or None if it is not due, taken, or settled here.

    `force` ignores the backoff schedule (an operator asking now) but never a
    live lease: two workers never read for the same receipt at once.
    """
    now = now or timezone.now()
    condition = _claimable(now) if force else _due(now)
    with transaction.atomic():
        receipt = (
            Receipt.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant", "platform")
            .filter(condition, pk=receipt_id)
            .first()
        )
        if receipt is None:
            return None
        if receipt.state == ReceiptState.OUTCOME_UNKNOWN:
            _move(
                receipt,
                to=ReceiptState.RECONCILING,
                actor=worker,
                now=now,
                reason="reconciliation_started",
            )
        if receipt.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS:
            # Every attempt was claimed and none settled it: its worker died or
            # its read never finished. A poison receipt stops here.
            _move(
                receipt,
                to=ReceiptState.MANUAL_REVIEW,
                actor=worker,
                now=now,
                reason="attempts_exhausted",
            )
            return None
        receipt.reconcile_attempts += 1
        receipt.reconcile_lease_expires_at = now + timedelta(
            seconds=settings.RECONCILE_LEASE_SECONDS
        )
        receipt.updated_at = now
        receipt.save(
            update_fields=["reconcile_attempts", "reconcile_lease_expires_at", "updated_at"]
        )
    return reconcile_claim_of(receipt)


def reconcile_claim_of(receipt: Receipt) -> ReconcileClaim:
    """What a worker needs to read for a receipt it has just claimed (attempt already counted)."""
    return ReconcileClaim(
        receipt_id=receipt.pk,
        attempt=receipt.reconcile_attempts,
        adapter=receipt.reconciler.get("adapter", ""),
        lookup=LookupTarget(
            receipt_id=receipt.pk,
            operation=receipt.operation,
            target=receipt.target,
            idempotency_key=receipt.idempotency_key,
            external_id=receipt.external_id,
            config=receipt.reconciler,
            attempt=receipt.reconcile_attempts,
            platform=_platform_access(receipt.platform),
        ),
    )


def _platform_access(platform: Platform | None) -> PlatformAccess | None:
    if platform is None:
        return None
    return PlatformAccess(
        name=platform.name, base_url=platform.base_url, allow_private=platform.allow_private
    )


def _past_key_retention(receipt: Receipt, now: datetime) -> bool:
    retention = receipt.reconciler.get("key_retention_seconds")
    started = receipt.submitted_at or receipt.created_at
    return bool(retention) and now > started + timedelta(seconds=retention)


def is_fenced_out(receipt: Receipt | None, claim: ReconcileClaim) -> bool:
    """True, and logged, when the claim's lease lapsed and another attempt owns the receipt."""
    if (
        receipt is not None
        and receipt.state == ReceiptState.RECONCILING
        and receipt.reconcile_attempts == claim.attempt
    ):
        return False
    logger.warning(
        "stale reconciliation result discarded",
        extra={
            "receipt": str(claim.receipt_id),
            "attempt": claim.attempt,
            "current_attempt": receipt.reconcile_attempts if receipt else None,
            "state": receipt.state if receipt else None,
        },
    )
    return True


def read_record(
    *,
    receipt: Receipt,
    claim: ReconcileClaim,
    result: LookupResult,
    worker: Actor,
    now: datetime,
) -> ReconciliationRead:
    """The append-only record of one read, unsaved; the batch path bulk-creates them."""
    return ReconciliationRead(
        tenant_id=receipt.tenant_id,
        receipt=receipt,
        attempt=claim.attempt,
        adapter=claim.adapter,
        outcome=result.outcome,
        error_code=result.error_code[:100],
        external_id=result.external_id,
        evidence=result.evidence,
        worker=worker.label[:150],
        at=now,
    )


def defer_after_failed_read(
    *, receipt: Receipt, claim: ReconcileClaim, result: LookupResult, now: datetime
) -> None:
    """A read that settled nothing: release the claim and try again after the backoff."""
    receipt.next_reconcile_at = now + reconcile_backoff(claim.attempt)
    receipt.reconcile_lease_expires_at = None
    receipt.error_code = result.error_code[:100]
    receipt.updated_at = now


def _settlement(receipt: Receipt, result: LookupResult, now: datetime) -> tuple[str | None, str]:
    """Where a read leaves the receipt: a new state and why, or (None, why) to read again."""
    if result.outcome == ReadOutcome.FOUND:
        if receipt.external_id and receipt.external_id != result.external_id:
            return ReceiptState.MANUAL_REVIEW, "external_id_mismatch"
        return ReceiptState.SUCCEEDED, "found"
    if result.outcome == ReadOutcome.NEEDS_PERSON:
        return ReceiptState.MANUAL_REVIEW, result.error_code or "needs_person"
    if _past_key_retention(receipt, now):
        # The platform may have forgotten the key, so not finding it proves nothing.
        return ReceiptState.MANUAL_REVIEW, "key_retention_expired"
    if result.outcome == ReadOutcome.ABSENT:
        return ReceiptState.SAFE_TO_RETRY, "absence_proven"
    if receipt.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS:
        return ReceiptState.MANUAL_REVIEW, "attempts_exhausted"
    return None, result.error_code or "inconclusive"


def receipt_reconcile_settle(
    *, claim: ReconcileClaim, result: LookupResult, worker: Actor, now: datetime | None = None
) -> Receipt | None:
    """Record a read and move the receipt accordingly; None if the claim was fenced off."""
    now = now or timezone.now()
    with transaction.atomic():
        receipt = (
            Receipt.objects.select_for_update(of=("self",))
            .select_related("tenant")
            .filter(pk=claim.receipt_id)
            .first()
        )
        if is_fenced_out(receipt, claim):
            return None
        read_record(receipt=receipt, claim=claim, result=result, worker=worker, now=now).save()
        to, reason = _settlement(receipt, result, now)
        if to is None:
            defer_after_failed_read(receipt=receipt, claim=claim, result=result, now=now)
            receipt.save(
                update_fields=[
                    "next_reconcile_at",
                    "reconcile_lease_expires_at",
                    "error_code",
                    "updated_at",
                ]
            )
            return receipt
        _move(
            receipt,
            to=to,
            actor=worker,
            now=now,
            reason=reason,
            evidence=result.evidence,
            external_id=result.external_id if to == ReceiptState.SUCCEEDED else "",
            error_code=result.error_code,
        )
    return receipt


def _read(claim: ReconcileClaim) -> LookupResult:
    try:
        return reconciler_for(claim.adapter).lookup(claim.lookup)
    except Exception as exc:
        # An adapter bug costs this receipt one attempt, not the rest of the chunk.
        logger.exception("reconciler failed", extra={"receipt": str(claim.receipt_id)})
        return LookupResult(
            ReadOutcome.UNDETERMINED,
            error_code="reconciler_error",
            evidence={
                "adapter": claim.adapter,
                "attempt": claim.attempt,
                "error": type(exc).__name__,
            },
        )


def receipts_reconcile(
    *,
    receipt_ids: Iterable[UUID | str],
    worker: Actor,
    deadline: float | None = None,
    force: bool = False,
) -> ReconcilePass:
    """Claim, read and settle each receipt in turn (one claim at a time, so a lease only
    has to outlast one read). Stops at `deadline` (time.monotonic()) and reports the ids
    it did not reach."""
    report = ReconcilePass()
    ids = [str(receipt_id) for receipt_id in receipt_ids]
    for index, receipt_id in enumerate(ids):
        if deadline is not None and time.monotonic() >= deadline:
            report.unprocessed = ids[index:]
            break
        claim = receipt_reconcile_claim(receipt_id=receipt_id, worker=worker, force=force)
        if claim is None:
            report.skipped += 1
            continue
        report.claimed += 1
        settled = receipt_reconcile_settle(claim=claim, result=_read(claim), worker=worker)
        if settled is None:
            report.fenced += 1
        else:
            report.states[settled.state] += 1
    return report


# -- sweeps ---------------------------------------------------------------------


def receipts_expire_submit_leases(
    *, now: datetime | None = None, limit: int = 500, enqueue: bool = True
) -> list[UUID]:
    """Mark `outcome_unknown` every submitted receipt whose agent never reported back."""
    now = now or timezone.now()
    sweeper = Actor.system("submit-lease sweep")
    with transaction.atomic():
        expired = list(
            Receipt.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant")
            .filter(state=ReceiptState.SUBMITTED, submit_lease_expires_at__lte=now)
            .order_by("submit_lease_expires_at")[:limit]
        )
        for receipt in expired:
            _move(
                receipt,
                to=ReceiptState.OUTCOME_UNKNOWN,
                actor=sweeper,
                now=now,
                reason="submit_lease_expired",
            )
        ids = [receipt.pk for receipt in expired]
        if ids and enqueue:
            _reconcile_on_commit(ids)
    return ids


def receipts_due_ids(*, now: datetime | None = None, limit: int | None = None) -> list[UUID]:
    """Receipts of every tenant whose next read is due and unclaimed, oldest first.

    The workers serve all tenants, so this is deliberately not tenant-scoped;
    it returns ids only, and each claim re-checks everything under a lock.
    """
    now = now or timezone.now()
    limit = limit or settings.RECONCILE_CHUNK_SIZE * 20
    return list(
        Receipt.objects.filter(_due(now))
        .order_by("next_reconcile_at")
        .values_list("pk", flat=True)[:limit]
    )


def receipts_dispatch_due(*, now: datetime | None = None, limit: int | None = None) -> int:
    """Enqueue chunks for every due receipt. Returns how many receipts were dispatched.

    A receipt may already have a message waiting (its on-commit wake-up); the
    duplicate costs one skipped claim, which is cheaper than tracking messages.
    """
    ids = receipts_due_ids(now=now, limit=limit)
    if ids:
        reconciliation_enqueue(receipt_ids=ids)
    return len(ids)
