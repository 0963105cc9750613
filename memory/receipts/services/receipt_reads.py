"""A reconciliation worker's read of one receipt: claim it, read the outside system, settle.

Reconciliation work lives in the receipt rows, not in the broker: a worker
claims one receipt at a time with `FOR UPDATE SKIP LOCKED`, takes a lease and
bumps `reconcile_attempts`. The attempt number is the fence: a worker whose
lease lapsed and whose receipt was claimed again finds a different number
when it comes back, and its late result is discarded. The batch path
(reconciliation.py) shares the claim, fence and settlement rules defined here.
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

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.actors import Actor
from memory.receipts.models.platforms import Platform
from memory.receipts.models.receipts import ReadOutcome, Receipt, ReceiptState, ReconciliationRead
from memory.receipts.reconcilers import LookupResult, LookupTarget, PlatformAccess, reconciler_for
from memory.receipts.services.receipt_moves import receipt_move
from memory.receipts.services.verifier_controls import VERIFIER_UNHEALTHY, control_answer

logger = logging.getLogger(__name__)

# Why a proven absence was not believed yet: it came within the platform's consistency delay.
ABSENCE_TOO_EARLY = "absence_within_consistency_delay"


@dataclass(frozen=True)
class ReconcileClaim:
    receipt_id: UUID
    attempt: int
    adapter: str
    lookup: LookupTarget
    # The platform's known-present control key: checked whenever a read says "absent".
    present_control: str = ""


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


def receipts_claimable(now: datetime) -> Q:
    return Q(state__in=[ReceiptState.OUTCOME_UNKNOWN, ReceiptState.RECONCILING]) & (
        Q(reconcile_lease_expires_at__isnull=True) | Q(reconcile_lease_expires_at__lte=now)
    )


def receipts_due(now: datetime) -> Q:
    return receipts_claimable(now) & (
        Q(next_reconcile_at__isnull=True) | Q(next_reconcile_at__lte=now)
    )


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
    condition = receipts_claimable(now) if force else receipts_due(now)
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
            receipt_move(
                receipt,
                to=ReceiptState.RECONCILING,
                actor=worker,
                now=now,
                reason="reconciliation_started",
            )
        if receipt.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS:
            # Every attempt was claimed and none settled it: its worker died or
            # its read never finished. A poison receipt stops here.
            receipt_move(
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
            intent=receipt.intent,
            intent_fingerprint=receipt.intent_fingerprint,
        ),
        present_control=receipt.platform.control_present_key if receipt.platform else "",
    )


def _platform_access(platform: Platform | None) -> PlatformAccess | None:
    if platform is None:
        return None
    return PlatformAccess(
        name=platform.name,
        base_url=platform.base_url,
        allow_private=platform.allow_private,
        absence_proof=platform.absence_proof,
        lookup_template=platform.lookup_template,
    )


# The platform's registration decides both windows, never the receipt's own
# `key_retention_seconds`: an agent cannot widen what counts as proof.
def _past_key_retention(receipt: Receipt, now: datetime) -> bool:
    platform = receipt.platform
    if platform is None or not platform.key_retention_seconds:
        return False
    started = receipt.submitted_at or receipt.created_at
    return now > started + timedelta(seconds=platform.key_retention_seconds)


def absence_trusted_from(receipt: Receipt) -> datetime:
    """When a negative answer may be believed: the platform's consistency delay after the
    agent said it was about to call (before it, the write may not show up yet)."""
    delay = receipt.platform.consistency_delay_seconds if receipt.platform else 0
    return (receipt.submitted_at or receipt.created_at) + timedelta(seconds=delay)


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
    *, receipt: Receipt, claim: ReconcileClaim, result: LookupResult, reason: str, now: datetime
) -> None:
    """A read that settled nothing: release the claim and try again after the backoff, or,
    for an absence too early to trust, once the platform's consistency delay has passed.

    The next read is a time in the row, so the due-receipt sweep finds it
    again whatever happens to the worker or the broker meanwhile.
    """
    retry_at = now + reconcile_backoff(claim.attempt)
    if result.outcome == ReadOutcome.ABSENT:
        retry_at = max(retry_at, absence_trusted_from(receipt))
    receipt.next_reconcile_at = retry_at
    receipt.reconcile_lease_expires_at = None
    receipt.error_code = (result.error_code or reason)[:100]
    receipt.updated_at = now


def receipt_settlement(
    receipt: Receipt, result: LookupResult, now: datetime
) -> tuple[str | None, str]:
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
    if result.outcome == ReadOutcome.ABSENT and now >= absence_trusted_from(receipt):
        if receipt.platform is not None and receipt.platform.verifier_unhealthy_since:
            # Its verifier failed its controls: an "absent" from it proves nothing.
            return ReceiptState.MANUAL_REVIEW, VERIFIER_UNHEALTHY
        return ReceiptState.SAFE_TO_RETRY, "absence_proven"
    if receipt.reconcile_attempts >= settings.RECONCILE_MAX_ATTEMPTS:
        return ReceiptState.MANUAL_REVIEW, "attempts_exhausted"
    if result.outcome == ReadOutcome.ABSENT:
        # The platform may not show the write yet: read again once the delay has passed.
        return None, ABSENCE_TOO_EARLY
    return None, result.error_code or "inconclusive"


def receipt_reconcile_settle(
    *, claim: ReconcileClaim, result: LookupResult, worker: Actor, now: datetime | None = None
) -> Receipt | None:
    """Record a read and move the receipt accordingly; None if the claim was fenced off."""
    now = now or timezone.now()
    with transaction.atomic():
        receipt = (
            Receipt.objects.select_for_update(of=("self",))
            .select_related("tenant", "platform")
            .filter(pk=claim.receipt_id)
            .first()
        )
        # A missing receipt is fenced out; the second test says so to mypy.
        if is_fenced_out(receipt, claim) or receipt is None:
            return None
        read_record(receipt=receipt, claim=claim, result=result, worker=worker, now=now).save()
        to, reason = receipt_settlement(receipt, result, now)
        if to is None:
            defer_after_failed_read(
                receipt=receipt, claim=claim, result=result, reason=reason, now=now
            )
            receipt.save(
                update_fields=[
                    "next_reconcile_at",
                    "reconcile_lease_expires_at",
                    "error_code",
                    "updated_at",
                ]
            )
            return receipt
        receipt_move(
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


def receipt_read(claim: ReconcileClaim) -> LookupResult:
    try:
        result = reconciler_for(claim.adapter).lookup(claim.lookup)
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
    return _verifier_checked(claim, result)


def _verifier_checked(claim: ReconcileClaim, result: LookupResult) -> LookupResult:
    """An absence is believed only from a verifier that still finds what it holds.

    Beat checks each platform's controls on a schedule, but a verifier can break
    between two runs: so before an "absent" can make a receipt `safe_to_retry`, the
    same lookup reads the platform's known-present key (docs/reconciliation.md,
    "Verifier controls"). Not found, the absence goes to a person; unanswered, it is
    read again later. A platform without a present key is judged by beat alone.
    """
    platform = claim.lookup.platform
    if result.outcome != ReadOutcome.ABSENT or not claim.present_control or platform is None:
        return result
    answer = control_answer(platform, claim.present_control)
    if answer == "present":
        return result
    evidence = {**result.evidence, "present_control": answer}
    if answer == "absent":
        return LookupResult(
            ReadOutcome.NEEDS_PERSON, error_code=VERIFIER_UNHEALTHY, evidence=evidence
        )
    return LookupResult(
        ReadOutcome.UNDETERMINED, error_code="present_control_unanswered", evidence=evidence
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
        settled = receipt_reconcile_settle(claim=claim, result=receipt_read(claim), worker=worker)
        if settled is None:
            report.fenced += 1
        else:
            report.states[settled.state] += 1
    return report
