"""Prometheus families of the claims domain, computed from the database.

Semantic recall: write-to-embedding lag (claims and ledger events) and the claims
still waiting for a vector.

How reliably agents act, per tenant (docs/reliability.md).

One definition serves `/metrics` (every tenant, labelled by slug) and the
dashboard (the viewer's tenant only), so the two always show the same figures:

- duplicate side effects: succeeded receipts beyond the first for the same
  effect (operation, target and intent fingerprint), over all succeeded ones;
- unverified completions: an agent's `succeeded` with no external id and no
  evidence, over all succeeded receipts;
- recovery-decision latency p50/p95: from trigger to answer, over the tenant's
  most recent decisions (kept in Redis: recovery writes no row);
- stale-as-fact recalls: recalls that returned a claim past `refresh_after`
  without `include_stale`, over all recalls in the stale-use window;
- write rejections by reason: claims the gate rejected or quarantined, per
  reason, over all claims written;
- reconciliation outcomes: where reconciliation's reads settled receipts.

Every figure but the latencies is one set-based query grouped by tenant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from accounts.models import Tenant
from memory.claims.models import Claim, ClaimEmbedding, EventEmbedding, GateDecision, RecallTrace
from memory.claims.services.embeddings import claims_pending_embedding
from memory.receipts.models import Receipt, ReceiptTransition
from memory.receipts.models.receipts import RECEIPT_TRANSITIONS, ReceiptState
from memory.receipts.services.recovery import recovery_latencies

# What the gate refused to store as memory (rather than sent to review).
REJECTING_DECISIONS = (GateDecision.REJECTED, GateDecision.QUARANTINED)
RECONCILIATION_OUTCOMES = tuple(RECEIPT_TRANSITIONS[ReceiptState.RECONCILING])


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
    recalls: int = 0
    stale_as_fact_recalls: int = 0
    claim_writes: int = 0
    rejected_writes: int = 0
    rejections_by_reason: dict[str, int] = field(default_factory=dict)
    reconciliation_outcomes: dict[str, int] = field(default_factory=dict)
    recovery_latencies: list[float] = field(default_factory=list)

    @property
    def duplicate_side_effect_rate(self) -> float:
        return _rate(self.duplicate_side_effects, self.completions)

    @property
    def unverified_completion_rate(self) -> float:
        return _rate(self.unverified_completions, self.completions)

    @property
    def stale_as_fact_rate(self) -> float:
        return _rate(self.stale_as_fact_recalls, self.recalls)

    @property
    def write_rejection_rate(self) -> float:
        return _rate(self.rejected_writes, self.claim_writes)

    def rejection_rate(self, reason: str) -> float:
        return _rate(self.rejections_by_reason.get(reason, 0), self.claim_writes)

    @property
    def recovery_latency_p50(self) -> float | None:
        return percentile(self.recovery_latencies, 0.5)

    @property
    def recovery_latency_p95(self) -> float | None:
        return percentile(self.recovery_latencies, 0.95)


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
    # A succeeded receipt has exactly one transition into `succeeded` (the state is terminal).
    sql = f"""
        SELECT r.tenant_id,
               count(*),
               count(*) - count(DISTINCT (r.operation, r.target, r.intent_fingerprint)),
               count(*) FILTER (
                   WHERE t.actor_kind = 'agent' AND r.external_id = ''
                     AND t.evidence = %s::jsonb
               )
        FROM {Receipt._meta.db_table} r
        JOIN {ReceiptTransition._meta.db_table} t
          ON t.receipt_id = r.id AND t.to_state = %s
        WHERE r.state = %s {{tenant_filter}}
        GROUP BY r.tenant_id
    """  # noqa: S608 - table names and a fixed filter; values are parameters
    params: list[object] = ["{}", ReceiptState.SUCCEEDED, ReceiptState.SUCCEEDED]
    return _grouped(sql, params, tenant=tenant, column="r.tenant_id")


def _recalls(tenant: Tenant | None) -> list[tuple]:
    sql = f"""
        SELECT t.tenant_id,
               count(*),
               count(*) FILTER (
                   WHERE NOT coalesce((t.filters ->> 'include_stale')::boolean, false)
                     AND EXISTS (
                         SELECT 1 FROM unnest(t.chosen) AS chosen(id)
                         JOIN {Claim._meta.db_table} c ON c.id = chosen.id
                         WHERE c.refresh_after <= t.created_at
                     )
               )
        FROM {RecallTrace._meta.db_table} t
        WHERE t.created_at >= now() - make_interval(secs => %s) {{tenant_filter}}
        GROUP BY t.tenant_id
    """  # noqa: S608
    params: list[object] = [settings.STALE_USE_WINDOW_SECONDS]
    return _grouped(sql, params, tenant=tenant, column="t.tenant_id")


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


def agent_reliability(*, tenant: Tenant | None) -> dict[int, AgentReliability]:
    """The agent reliability figures by tenant id: one tenant's, or (None) every tenant's."""
    tenants = [tenant] if tenant is not None else list(Tenant.objects.order_by("slug"))
    figures = {t.pk: AgentReliability(tenant_id=t.pk, tenant_slug=t.slug) for t in tenants}
    for tenant_id, completions, duplicates, unverified in _completions(tenant):
        if tenant_id in figures:
            figures[tenant_id].completions = completions
            figures[tenant_id].duplicate_side_effects = duplicates
            figures[tenant_id].unverified_completions = unverified
    for tenant_id, recalls, stale in _recalls(tenant):
        if tenant_id in figures:
            figures[tenant_id].recalls = recalls
            figures[tenant_id].stale_as_fact_recalls = stale
    for tenant_id, writes, rejected in _writes(tenant):
        if tenant_id in figures:
            figures[tenant_id].claim_writes = writes
            figures[tenant_id].rejected_writes = rejected
    for tenant_id, reason, count in _rejection_reasons(tenant):
        if tenant_id in figures:
            figures[tenant_id].rejections_by_reason[reason] = count
    for tenant_id, outcome, count in _reconciliations(tenant):
        if tenant_id in figures:
            figures[tenant_id].reconciliation_outcomes[outcome] = count
    for tenant_id, latencies in recovery_latencies(tenant_ids=list(figures)).items():
        figures[tenant_id].recovery_latencies = latencies
    return figures


def _gauge(name: str, documentation: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=["tenant", *labels])


def collect_agent_metrics() -> Iterable[Metric]:
    figures = list(agent_reliability(tenant=None).values())
    window = settings.STALE_USE_WINDOW_SECONDS
    simple = [
        ("memdesk_agent_completions", "Receipts in `succeeded`.", "completions"),
        (
            "memdesk_agent_duplicate_side_effects",
            "Succeeded receipts beyond the first for the same operation, target and intent.",
            "duplicate_side_effects",
        ),
        (
            "memdesk_agent_duplicate_side_effect_rate",
            "Duplicate side effects over succeeded receipts.",
            "duplicate_side_effect_rate",
        ),
        (
            "memdesk_agent_unverified_completions",
            "Agents' `succeeded` reports with no external id and no evidence.",
            "unverified_completions",
        ),
        (
            "memdesk_agent_unverified_completion_rate",
            "Unverified completions over succeeded receipts.",
            "unverified_completion_rate",
        ),
        ("memdesk_agent_recalls", f"Recalls in the last {window} s.", "recalls"),
        (
            "memdesk_agent_stale_as_fact_recalls",
            f"Recalls in the last {window} s that returned a claim past refresh_after "
            "without include_stale.",
            "stale_as_fact_recalls",
        ),
        (
            "memdesk_agent_stale_as_fact_rate",
            "Stale-as-fact recalls over recalls in the window.",
            "stale_as_fact_rate",
        ),
        ("memdesk_agent_claim_writes", "Claims written (every gate verdict).", "claim_writes"),
        (
            "memdesk_agent_write_rejection_rate",
            "Claims the gate rejected or quarantined, over claims written.",
            "write_rejection_rate",
        ),
    ]
    for name, documentation, attribute in simple:
        family = _gauge(name, documentation)
        for tenant in figures:
            family.add_metric([tenant.tenant_slug], getattr(tenant, attribute))
        yield family

    by_reason = _gauge(
        "memdesk_agent_write_rejections",
        "Claims the gate rejected or quarantined, by reason (a claim may have several).",
        ["reason"],
    )
    reason_rate = _gauge(
        "memdesk_agent_write_rejection_reason_rate",
        "Claims rejected or quarantined for a reason, over claims written.",
        ["reason"],
    )
    for tenant in figures:
        for reason, count in sorted(tenant.rejections_by_reason.items()):
            by_reason.add_metric([tenant.tenant_slug, reason], count)
            reason_rate.add_metric([tenant.tenant_slug, reason], tenant.rejection_rate(reason))
    yield by_reason
    yield reason_rate

    outcomes = _gauge(
        "memdesk_agent_reconciliation_outcomes",
        "Receipts reconciliation settled, by outcome.",
        ["outcome"],
    )
    for tenant in figures:
        for outcome in RECONCILIATION_OUTCOMES:
            outcomes.add_metric(
                [tenant.tenant_slug, outcome], tenant.reconciliation_outcomes.get(outcome, 0)
            )
    yield outcomes

    latency = _gauge(
        "memdesk_agent_recovery_decision_latency_seconds",
        "Recovery decisions' latency from trigger to answer (nearest-rank percentiles over "
        "the tenant's most recent decisions).",
        ["quantile"],
    )
    timed = _gauge(
        "memdesk_agent_recovery_decisions_timed",
        "Recent recovery decisions the latency percentiles are computed over.",
    )
    for tenant in figures:
        timed.add_metric([tenant.tenant_slug], len(tenant.recovery_latencies))
        for quantile, value in (
            ("0.5", tenant.recovery_latency_p50),
            ("0.95", tenant.recovery_latency_p95),
        ):
            if value is not None:
                latency.add_metric([tenant.tenant_slug, quantile], value)
    yield latency
    yield timed


# Seconds from a claim's commit to its vector.
LAG_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 15, 60, 300, 3600)


def _embedding_lag(table: str, name: str, documentation: str) -> Metric:
    buckets = ", ".join(f"count(*) FILTER (WHERE lag_seconds <= {bound})" for bound in LAG_BUCKETS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {buckets}, count(*), coalesce(sum(lag_seconds), 0) "  # noqa: S608
            f"FROM {table}"
        )
        row = cursor.fetchone()
    histogram = HistogramMetricFamily(name, documentation)
    counts = [(str(float(bound)), int(n)) for bound, n in zip(LAG_BUCKETS, row, strict=False)]
    histogram.add_metric([], buckets=[*counts, ("+Inf", int(row[-2]))], sum_value=float(row[-1]))
    return histogram


def _pending() -> Metric:
    gauge = GaugeMetricFamily(
        "memdesk_recall_claims_pending_embedding",
        "Active claims without a vector of the configured model (capped at 10000).",
    )
    gauge.add_metric([], len(claims_pending_embedding(limit=10_000)))
    return gauge


def collect_recall_metrics() -> Iterable[Metric]:
    yield _embedding_lag(
        ClaimEmbedding._meta.db_table,
        "memdesk_recall_embedding_lag_seconds",
        "Time from a claim's write to its vector (when recall can find it by meaning).",
    )
    yield _embedding_lag(
        EventEmbedding._meta.db_table,
        "memdesk_ledger_embedding_lag_seconds",
        "Time from an event's write to its vector (when ledger search can find it by meaning).",
    )
    yield _pending()
