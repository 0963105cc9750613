"""How reliably agents act, per tenant: the eight figures of docs/reliability.md.

One definition serves `/metrics` (every tenant, labelled by slug) and the
dashboard (the viewer's tenant only), so the two always show the same figures.
Every figure is computed in PostgreSQL, each by one statement grouped by tenant:

1. duplicate side effects: succeeded receipts beyond the first for the same
   effect (operation, target and intent fingerprint), over all succeeded ones;
2. recovery correctness: recovery answers whose latest verdict (an agent's
   replay, or a person confirming or overturning it) agrees, over judged answers;
3. unverified completions: an agent's `succeeded` that lacks what its
   operation's evidence policy names (without a policy: no external id and no
   evidence), over all succeeded receipts;
4. stale-claim use: claims agents reported using that were past `refresh_after`
   when recalled, over all reported uses, in the stale-use window;
5. write rejections: claims the gate rejected or quarantined, per reason, over
   all claims written;
6. recovery latency p50/p95: from trigger to answer, over each tenant's most
   recent answers (recovery's log);
7. manual troubleshooting minutes: from a `manual_review` item's creation (a run
   whose effect nobody could settle) to a person's decision;
8. context redundancy: claims handed to agents that their use reports left out,
   over claims returned in reported answers, in the redundancy window.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection

from accounts.models import Tenant
from memory.claims.models import Claim, GateDecision, RecallTrace, RecallUse
from memory.receipts.models import OperationPolicy, Receipt, ReceiptTransition
from memory.receipts.models.receipts import ReceiptState
from memory.receipts.selectors.recovery_log import RecoveryFigures, recovery_figures
from reviews.models import ItemStatus, Queue, ReviewItem

# What the gate refused to store as memory (rather than sent to review).
REJECTING_DECISIONS = (GateDecision.REJECTED, GateDecision.QUARANTINED)
# Context redundancy is read over this many days of reported answers.
REDUNDANCY_DAYS = 14


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile: the smallest value at least `share` of them do not exceed."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class AgentReliability:
    tenant_id: int
    tenant_slug: str
    completions: int = 0
    duplicate_side_effects: int = 0
    unverified_completions: int = 0
    claim_uses: int = 0
    stale_claim_uses: int = 0
    claim_writes: int = 0
    rejected_writes: int = 0
    rejections_by_reason: dict[str, int] = field(default_factory=dict)
    reconciliation_outcomes: dict[str, int] = field(default_factory=dict)
    recovery: RecoveryFigures = field(default_factory=RecoveryFigures)
    troubleshooting_items: int = 0
    troubleshooting_minutes: float = 0.0
    troubleshooting_p50_minutes: float | None = None
    troubleshooting_p95_minutes: float | None = None
    troubleshooting_open: int = 0
    returned_in_reported: int = 0
    unused_in_reported: int = 0

    @property
    def duplicate_side_effect_rate(self) -> float:
        return _rate(self.duplicate_side_effects, self.completions)

    @property
    def unverified_completion_rate(self) -> float:
        return _rate(self.unverified_completions, self.completions)

    @property
    def stale_claim_use_rate(self) -> float:
        return _rate(self.stale_claim_uses, self.claim_uses)

    @property
    def write_rejection_rate(self) -> float:
        return _rate(self.rejected_writes, self.claim_writes)

    def rejection_rate(self, reason: str) -> float:
        return _rate(self.rejections_by_reason.get(reason, 0), self.claim_writes)

    @property
    def recovery_correctness(self) -> float | None:
        return self.recovery.correctness

    @property
    def recovery_judged(self) -> int:
        return self.recovery.judged

    @property
    def recovery_correct(self) -> int:
        return self.recovery.correct

    @property
    def recovery_latency_p50(self) -> float | None:
        return self.recovery.latency_p50

    @property
    def recovery_latency_p95(self) -> float | None:
        return self.recovery.latency_p95

    @property
    def context_redundancy(self) -> float | None:
        if not self.returned_in_reported:
            return None
        return self.unused_in_reported / self.returned_in_reported


def _grouped(sql: str, params: list[Any], *, tenant: Tenant | None, column: str) -> list[tuple]:
    """Run a query grouped by tenant; `{tenant_filter}` narrows it to one tenant when given."""
    if tenant is not None:
        sql, params = sql.replace("{tenant_filter}", f"AND {column} = %s"), [*params, tenant.pk]
    else:
        sql = sql.replace("{tenant_filter}", "")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _completions(tenant: Tenant | None) -> list[tuple]:
    # A succeeded receipt has exactly one transition into `succeeded` (the state is
    # terminal). An agent's report is unverified when it lacks what the operation's
    # policy names, or, with no policy, brings neither an external id nor evidence. A
    # policy asking for a verifying read lets only memdesk's read settle it, so an
    # agent's word under such a policy (settled before the policy existed) is unverified.
    sql = f"""
        SELECT r.tenant_id,
               count(*),
               count(*) - count(DISTINCT (r.operation, r.target, r.intent_fingerprint)),
               count(*) FILTER (
                   WHERE t.actor_kind = 'agent' AND CASE
                       WHEN p.id IS NULL THEN r.external_id = '' AND t.evidence = '{{}}'::jsonb
                       ELSE (p.require_external_id AND r.external_id = '')
                            OR NOT (t.evidence ?& p.evidence_fields::text[])
                            OR p.require_verifying_read
                   END
               )
        FROM {Receipt._meta.db_table} r
        JOIN {ReceiptTransition._meta.db_table} t
          ON t.receipt_id = r.id AND t.to_state = %s
        LEFT JOIN {OperationPolicy._meta.db_table} p
          ON p.tenant_id = r.tenant_id AND p.operation = r.operation
        WHERE r.state = %s {{tenant_filter}}
        GROUP BY r.tenant_id
    """  # noqa: S608 - table names and a fixed filter; values are parameters
    params: list[object] = [ReceiptState.SUCCEEDED, ReceiptState.SUCCEEDED]
    return _grouped(sql, params, tenant=tenant, column="r.tenant_id")


def _claim_uses(tenant: Tenant | None) -> list[tuple]:
    sql = f"""
        SELECT u.tenant_id, count(*), count(*) FILTER (WHERE u.past_refresh)
        FROM {RecallUse._meta.db_table} u
        WHERE u.reported_at >= now() - make_interval(secs => %s) {{tenant_filter}}
        GROUP BY u.tenant_id
    """  # noqa: S608
    params: list[object] = [settings.STALE_USE_WINDOW_SECONDS]
    return _grouped(sql, params, tenant=tenant, column="u.tenant_id")


def _writes(tenant: Tenant | None) -> list[tuple]:
    sql = f"""
        SELECT c.tenant_id, count(*), count(*) FILTER (WHERE c.gate_decision = ANY(%s))
        FROM {Claim._meta.db_table} c WHERE true {{tenant_filter}}
        GROUP BY c.tenant_id
    """  # noqa: S608
    params: list[object] = [list(REJECTING_DECISIONS)]
    return _grouped(sql, params, tenant=tenant, column="c.tenant_id")


def _rejection_reasons(tenant: Tenant | None) -> list[tuple]:
    sql = f"""
        SELECT c.tenant_id, reason, count(*)
        FROM {Claim._meta.db_table} c CROSS JOIN LATERAL unnest(c.gate_reasons) AS reason
        WHERE c.gate_decision = ANY(%s) {{tenant_filter}}
        GROUP BY c.tenant_id, reason
    """  # noqa: S608
    params: list[object] = [list(REJECTING_DECISIONS)]
    return _grouped(sql, params, tenant=tenant, column="c.tenant_id")


def _reconciliations(tenant: Tenant | None) -> list[tuple]:
    sql = f"""
        SELECT t.tenant_id, t.to_state, count(*)
        FROM {ReceiptTransition._meta.db_table} t
        WHERE t.from_state = %s {{tenant_filter}}
        GROUP BY t.tenant_id, t.to_state
    """  # noqa: S608
    params: list[object] = [ReceiptState.RECONCILING]
    return _grouped(sql, params, tenant=tenant, column="t.tenant_id")


def _troubleshooting(tenant: Tenant | None) -> list[tuple]:
    # Nearest rank, as percentile_disc takes it.
    sql = f"""
        SELECT i.tenant_id,
               count(*) FILTER (WHERE i.status = %s),
               coalesce(sum(extract(epoch FROM i.decided_at - i.created_at) / 60)
                        FILTER (WHERE i.status = %s), 0),
               percentile_disc(0.5) WITHIN GROUP (
                   ORDER BY extract(epoch FROM i.decided_at - i.created_at) / 60
               ) FILTER (WHERE i.status = %s),
               percentile_disc(0.95) WITHIN GROUP (
                   ORDER BY extract(epoch FROM i.decided_at - i.created_at) / 60
               ) FILTER (WHERE i.status = %s),
               count(*) FILTER (WHERE i.status = ANY(%s))
        FROM {ReviewItem._meta.db_table} i
        WHERE i.queue = %s {{tenant_filter}}
        GROUP BY i.tenant_id
    """  # noqa: S608
    decided = ItemStatus.DECIDED
    params: list[object] = [
        decided,
        decided,
        decided,
        decided,
        [ItemStatus.OPEN, ItemStatus.CLAIMED],
        Queue.MANUAL_REVIEW,
    ]
    return _grouped(sql, params, tenant=tenant, column="i.tenant_id")


def _redundancy(tenant: Tenant | None) -> list[tuple]:
    # Claims returned by answers an agent reported uses for, and those no report names.
    sql = f"""
        SELECT t.tenant_id, count(*),
               count(*) FILTER (WHERE NOT EXISTS (
                   SELECT 1 FROM {RecallUse._meta.db_table} u
                   WHERE u.tenant_id = t.tenant_id AND u.trace_id = t.id AND u.claim_id = c
               ))
        FROM {RecallTrace._meta.db_table} t, unnest(t.chosen) AS c
        WHERE t.created_at >= now() - make_interval(days => %s)
          AND EXISTS (SELECT 1 FROM {RecallUse._meta.db_table} u
                      WHERE u.tenant_id = t.tenant_id AND u.trace_id = t.id)
          {{tenant_filter}}
        GROUP BY t.tenant_id
    """  # noqa: S608
    params: list[object] = [REDUNDANCY_DAYS]
    return _grouped(sql, params, tenant=tenant, column="t.tenant_id")


def agent_reliability(*, tenant: Tenant | None) -> dict[int, AgentReliability]:
    """The agent reliability figures by tenant id: one tenant's, or (None) every tenant's."""
    tenants = [tenant] if tenant is not None else list(Tenant.objects.order_by("slug"))
    figures = {t.pk: AgentReliability(tenant_id=t.pk, tenant_slug=t.slug) for t in tenants}

    def each(rows: list[tuple]) -> Iterator[tuple]:
        """Each row with its tenant's figures in place of the tenant id (known tenants only)."""
        return ((figures[row[0]], *row[1:]) for row in rows if row[0] in figures)

    for f, completions, duplicates, unverified in each(_completions(tenant)):
        f.completions, f.duplicate_side_effects = completions, duplicates
        f.unverified_completions = unverified
    for f, uses, stale in each(_claim_uses(tenant)):
        f.claim_uses, f.stale_claim_uses = uses, stale
    for f, writes, rejected in each(_writes(tenant)):
        f.claim_writes, f.rejected_writes = writes, rejected
    for f, reason, count in each(_rejection_reasons(tenant)):
        f.rejections_by_reason[reason] = count
    for f, outcome, count in each(_reconciliations(tenant)):
        f.reconciliation_outcomes[outcome] = count
    for f, items, minutes, p50, p95, still_open in each(_troubleshooting(tenant)):
        f.troubleshooting_items, f.troubleshooting_minutes = items, float(minutes)
        f.troubleshooting_p50_minutes = float(p50) if p50 is not None else None
        f.troubleshooting_p95_minutes = float(p95) if p95 is not None else None
        f.troubleshooting_open = still_open
    for f, returned, unused in each(_redundancy(tenant)):
        f.returned_in_reported, f.unused_in_reported = returned, unused
    for tenant_id, recovery in recovery_figures(tenant=tenant).items():
        if tenant_id in figures:
            figures[tenant_id].recovery = recovery
    return figures
