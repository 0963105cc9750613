"""Reads behind the dashboard: the governance metrics (docs/reliability.md) over the last days."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Func
from django.utils import timezone

from accounts.models import Tenant
from memory.claims.models import Claim
from memory.claims.reliability import AgentReliability, agent_reliability
from memory.receipts.models import Receipt
from memory.receipts.selectors.recovery_log import RecoveryFigures

DAYS = 14


def _days(tenant: Tenant, sql: str) -> list[tuple[str, int]]:
    """Run a per-day count over the last DAYS days; `sql` sees %(tenant)s and %(start)s."""
    start = (timezone.now() - timedelta(days=DAYS - 1)).date()
    with connection.cursor() as cursor:
        cursor.execute(sql, {"tenant": tenant.pk, "start": start})
        return [(day.strftime("%b %d"), int(n)) for day, n in cursor.fetchall()]


def queue_depth_by_day(*, tenant: Tenant) -> list[tuple[str, int]]:
    return _days(
        tenant,
        """
        SELECT d::date, count(r.id)
        FROM generate_series(%(start)s::date, current_date, interval '1 day') AS d
        LEFT JOIN reviews_reviewitem r
          ON r.tenant_id = %(tenant)s AND r.status <> 'cancelled'
         AND r.created_at < d + interval '1 day'
         AND (r.decided_at IS NULL OR r.decided_at >= d + interval '1 day')
        GROUP BY d ORDER BY d
        """,
    )


def receipts_by_day(*, tenant: Tenant) -> list[tuple[str, int]]:
    return _days(
        tenant,
        """
        SELECT d::date, count(r.id)
        FROM generate_series(%(start)s::date, current_date, interval '1 day') AS d
        LEFT JOIN memory_receipt r
          ON r.tenant_id = %(tenant)s
         AND r.created_at >= d AND r.created_at < d + interval '1 day'
        GROUP BY d ORDER BY d
        """,
    )


def receipts_by_state(*, tenant: Tenant) -> list[tuple[str, int]]:
    rows = (
        Receipt.objects.filter(tenant=tenant)
        .values_list("state")
        .annotate(n=Count("id"))
        .order_by("-n")
    )
    return [(words(state), n) for state, n in rows]


# The dashboard's labels in words: a gate verdict or a recovery decision, and its reason.
DECISION_WORDS = {
    "accepted": "Accepted",
    "merged": "Merged",
    "needs_review": "Sent to review",
    "conflict": "Conflict",
    "superseded_previous": "Replaced an older one",
    "quarantined": "Held back",
    "rejected": "Rejected",
    "fresh": "Start fresh",
    "resume": "Resume",
    "verify_only": "Verify only",
    "no_op": "Nothing to do",
    "escalate": "Escalate",
}
REASON_WORDS = {
    "user_explicit_verified": "the user said so",
    "tool_verified": "a tool verified it",
    "unverified_authority": "source not verified",
    "contradicts_active": "contradicts a memory",
    "instruction_injection": "reads like a command",
    "authority_capped": "authority capped",
    "user_channel_required": "needs the user channel",
    "tool_source_required": "needs a tool source",
    "basis_unverified": "basis not verified",
    "consent_required": "needs consent",
    "no_checkpoint": "no checkpoint",
    "checkpoint_expired": "checkpoint expired",
    "input_changed": "input changed",
    "effect_in_manual_review": "effect in review",
    "effect_unverified": "effect not verified",
    "already_verified": "already verified",
    "next_stage": "next stage to run",
    "retry_budget_exhausted": "out of retries",
    "incomplete_stage": "stage incomplete",
}


def words(code: str) -> str:
    """One code (a receipt state, a rejection reason, an outcome) as a chart label."""
    return REASON_WORDS.get(code) or code.replace("_", " ")


def in_words(decision: str, reason: str) -> str:
    """ "accepted", "user_explicit_verified" → "Accepted · the user said so" (a code memdesk
    has no words for reads as itself, spaced)."""
    what = DECISION_WORDS.get(decision, decision.replace("_", " ").capitalize())
    why = REASON_WORDS.get(reason, reason.replace("_", " "))
    return f"{what} · {why}"


class _Unnest(Func):
    function = "unnest"


def gate_verdicts_by_reason(*, tenant: Tenant) -> list[tuple[str, int]]:
    since = timezone.now() - timedelta(days=DAYS)
    rows = (
        Claim.objects.filter(tenant=tenant, recorded_at__gte=since)
        .annotate(reason=_Unnest("gate_reasons"))
        .values_list("gate_decision", "reason")
        .annotate(n=Count("id"))
        .order_by("-n")[:12]
    )
    return [(in_words(decision, reason), n) for decision, reason, n in rows]


def recovery_decisions(recovery: RecoveryFigures) -> list[tuple[str, int]]:
    counts = recovery.answers_by_outcome
    return sorted(
        ((in_words(decision, reason), n) for (decision, reason), n in counts.items() if n),
        key=lambda pair: -pair[1],
    )


def reliability(*, tenant: Tenant) -> AgentReliability:
    """The agent reliability figures for the tenant, from the same definition /metrics uses."""
    return agent_reliability(tenant=tenant)[tenant.pk]


def dashboard_data(*, tenant: Tenant) -> dict[str, Any]:
    figures = reliability(tenant=tenant)
    return {
        "reliability": figures,
        "queue_depth": queue_depth_by_day(tenant=tenant),
        "receipts_by_day": receipts_by_day(tenant=tenant),
        "receipts_by_state": receipts_by_state(tenant=tenant),
        "gate_verdicts": gate_verdicts_by_reason(tenant=tenant),
        "recovery": recovery_decisions(figures.recovery),
    }
