"""Retention: claims, events and recall traces older than their tenant's period are
forgotten through the deletion pipeline.

A tenant's admins set periods per record (claims, events, recall traces),
kind and sensitivity class (`RetentionPolicy`). A sweep (beat, or `manage.py
retention_sweep`) asks for a deletion of each claim a policy reaches, so the
same workers erase it, propagate along lineage (its source statements in the
ledger, recall traces that returned it, idempotent replies, hot memory) and
verify it with probes; and for the events no live claim cites and the recall
traces past their period, one `records` deletion per subject that redacts
them with their stored replies, tombstones and probes them. Each deletion has
its report, and the sweep's audit row names them all with what it counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import audit_record
from common.problems import Problem, not_found
from memory.claims.models import ClaimKind, Sensitivity, Subject
from memory.claims.services.subjects import subject_resolve
from memory.privacy.models import DeletionCause, DeletionRequest, RetainedRecord, RetentionPolicy
from memory.privacy.selectors.retention import retention_reach
from memory.privacy.services.deletion import (
    deletion_records_create,
    deletion_request_create,
    records_pending_deletion,
)

# Rows asked for per tenant, record and sweep; the next sweep takes the rest.
SWEEP_LIMIT = 500
# An event kind as agents write them (`user_message`, `tool.result`).
_EVENT_KIND = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass
class RetentionSweep:
    tenant: Tenant
    deletions: list[DeletionRequest] = field(default_factory=list)
    # Policy id → rows it reached in this sweep.
    reached: dict[int, int] = field(default_factory=dict)
    # Rows asked for per record: claims, events, recall traces.
    counts: dict[str, int] = field(
        default_factory=lambda: {"claims": 0, "events": 0, "recall_traces": 0}
    )


def _policy_errors(record: str, kind: str, sensitivity: str, days: Any) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    if record not in RetainedRecord.values:
        errors["record"] = [f"One of {', '.join(RetainedRecord.values)}."]
    elif record == RetainedRecord.CLAIM and kind and kind not in ClaimKind.values:
        errors["kind"] = [f"One of {', '.join(ClaimKind.values)}, or empty for every kind."]
    elif record == RetainedRecord.EVENT and kind and not _EVENT_KIND.fullmatch(kind):
        errors["kind"] = ["An event kind (letters, digits, _ . : -), or empty for every kind."]
    elif record == RetainedRecord.RECALL_TRACE and (kind or sensitivity):
        errors["record"] = ["A recall trace has no kind or class: leave both empty."]
    if sensitivity and sensitivity not in Sensitivity.values:
        errors["sensitivity"] = [f"One of {', '.join(Sensitivity.values)}, or empty for any."]
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 36_500:
        errors["days"] = ["A whole number of days from 1 to 36500."]
    return errors


def retention_policy_set(
    *,
    tenant: Tenant,
    actor: Actor,
    kind: str,
    sensitivity: str,
    days: Any,
    record: str = RetainedRecord.CLAIM,
    user: Any = None,
) -> RetentionPolicy:
    """Set the period for one record, kind and class ('' for any); a second call changes it."""
    errors = _policy_errors(record, kind, sensitivity, days)
    if errors:
        raise Problem("validation_error", "The retention period is not valid.", errors=errors)
    with transaction.atomic():
        policy, created = RetentionPolicy.objects.select_for_update().get_or_create(
            tenant=tenant,
            record=record,
            kind=kind,
            sensitivity=sensitivity,
            defaults={"days": days, "updated_by": user},
        )
        before = None if created else policy.days
        if not created:
            policy.days = days
            policy.updated_by = user
            policy.updated_at = timezone.now()
            policy.save(update_fields=["days", "updated_by", "updated_at"])
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="retention.set",
            target_type="retention_policy",
            target_id=policy.pk,
            data={
                "record": record,
                "kind": kind,
                "sensitivity": sensitivity,
                "days": days,
                "before": before,
            },
        )
    return policy


def retention_policy_remove(*, tenant: Tenant, actor: Actor, policy_id: Any) -> None:
    """Keep what the policy reached for good again (no policy, no expiry)."""
    with transaction.atomic():
        policy = (
            RetentionPolicy.objects.select_for_update().filter(tenant=tenant, pk=policy_id).first()
        )
        if policy is None:
            raise not_found("retention policy")
        audit_record(
            tenant=tenant,
            actor=actor,
            verb="retention.removed",
            target_type="retention_policy",
            target_id=policy.pk,
            data={
                "record": policy.record,
                "kind": policy.kind,
                "sensitivity": policy.sensitivity,
                "days": policy.days,
            },
        )
        policy.delete()


def _sweep_claims(
    sweep: RetentionSweep,
    policies: list[RetentionPolicy],
    *,
    actor: Actor,
    now: datetime,
    limit: int,
) -> None:
    seen: set[Any] = set()
    for policy in policies:
        claims = (
            retention_reach(policy, now=now)
            .exclude(pk__in=seen)
            .select_related("subject")
            .order_by("recorded_at", "id")[: max(limit - len(seen), 0)]
        )
        reached = 0
        for claim in claims:
            seen.add(claim.pk)
            reached += 1
            deletion, _ = deletion_request_create(
                tenant=sweep.tenant,
                actor=actor,
                subject=claim.subject,
                claim=claim,
                cause=DeletionCause.RETENTION,
            )
            sweep.deletions.append(deletion)
        sweep.reached[policy.pk] = reached
    sweep.counts["claims"] = len(seen)


def _reached_rows(
    policies: list[RetentionPolicy], *, pending: set[UUID], now: datetime, limit: int
) -> dict[int | str, list[UUID]]:
    """Subject id (or, for a trace of a subject that had no row yet, its key) → ids of the
    rows the policies reach, oldest first, at most `limit` in all; a row several
    policies reach counts for the shortest. Each policy's count goes on `policy.reached`."""
    seen = set(pending)
    by_subject: dict[int | str, list[UUID]] = defaultdict(list)
    taken = 0
    for policy in policies:
        rows = retention_reach(policy, now=now).exclude(pk__in=seen)
        traces = policy.record == RetainedRecord.RECALL_TRACE
        listed = rows.order_by("created_at" if traces else "recorded_at", "id").values_list(
            "id", "subject_id", "subject_key" if traces else "subject_id"
        )
        reached = 0
        for row_id, subject_id, key in listed[: max(limit - taken, 0)]:
            seen.add(row_id)
            by_subject[subject_id if subject_id is not None else str(key)].append(row_id)
            reached += 1
        taken += reached
        policy.reached = reached  # type: ignore[attr-defined]
    return by_subject


def _sweep_records(
    sweep: RetentionSweep,
    events: list[RetentionPolicy],
    traces: list[RetentionPolicy],
    *,
    actor: Actor,
    now: datetime,
    limit: int,
) -> None:
    pending_events, pending_traces = records_pending_deletion(tenant=sweep.tenant)
    reached = {
        "events": _reached_rows(events, pending=pending_events, now=now, limit=limit),
        "traces": _reached_rows(traces, pending=pending_traces, now=now, limit=limit),
    }
    for policy in [*events, *traces]:
        sweep.reached[policy.pk] = policy.reached  # type: ignore[attr-defined]
    subjects = Subject.objects.in_bulk(
        [key for rows in reached.values() for key in rows if isinstance(key, int)]
    )
    per_subject: dict[int, tuple[Subject, dict[str, list[UUID]]]] = {}
    for record, rows in reached.items():
        for key, ids in rows.items():
            # A recall of a subject with no memories yet stored only its key; the
            # deletion needs the subject's row (the key was valid when recall took it).
            subject = (
                subjects[key]
                if isinstance(key, int)
                else subject_resolve(tenant=sweep.tenant, key=key)
            )
            _, named = per_subject.setdefault(subject.pk, (subject, {"events": [], "traces": []}))
            named[record] += ids
    for subject, named in per_subject.values():
        sweep.deletions.append(
            deletion_records_create(
                tenant=sweep.tenant,
                actor=actor,
                subject=subject,
                event_ids=named["events"],
                trace_ids=named["traces"],
                cause=DeletionCause.RETENTION,
            )
        )
        sweep.counts["events"] += len(named["events"])
        sweep.counts["recall_traces"] += len(named["traces"])


def retention_sweep(
    *, tenant: Tenant, actor: Actor, now: datetime | None = None, limit: int = SWEEP_LIMIT
) -> RetentionSweep:
    """Ask for the deletion of every claim, event and recall trace of `tenant` past a
    period (up to `limit` of each)."""
    now = now or timezone.now()
    sweep = RetentionSweep(tenant=tenant)
    with transaction.atomic():
        policies = list(RetentionPolicy.objects.filter(tenant=tenant).order_by("days", "pk"))
        if not policies:
            return sweep
        by_record: dict[str, list[RetentionPolicy]] = defaultdict(list)
        for policy in policies:
            by_record[policy.record].append(policy)
        _sweep_claims(sweep, by_record[RetainedRecord.CLAIM], actor=actor, now=now, limit=limit)
        _sweep_records(
            sweep,
            by_record[RetainedRecord.EVENT],
            by_record[RetainedRecord.RECALL_TRACE],
            actor=actor,
            now=now,
            limit=limit,
        )
        if sweep.deletions:
            audit_record(
                tenant=tenant,
                actor=actor,
                verb="retention.swept",
                target_type="tenant",
                target_id=tenant.pk,
                data={
                    "deletions": [str(d.pk) for d in sweep.deletions],
                    "reached": {str(pk): n for pk, n in sweep.reached.items()},
                    "counts": sweep.counts,
                },
            )
    return sweep


def retention_sweep_all(*, actor: Actor, now: datetime | None = None) -> list[RetentionSweep]:
    """One sweep per tenant that has a retention policy."""
    tenant_ids = RetentionPolicy.objects.values_list("tenant_id", flat=True).distinct()
    return [
        retention_sweep(tenant=tenant, actor=actor, now=now)
        for tenant in Tenant.objects.filter(pk__in=tenant_ids).order_by("pk")
    ]
