"""Prometheus families of the claims domain, computed from the database.

Semantic recall: write-to-embedding lag (claims and ledger events) and the claims
still waiting for a vector.

How reliably agents act, per tenant: the eight figures of `memory.claims.reliability`
(docs/reliability.md), labelled by tenant slug.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import connection
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from memory.claims.models import ClaimEmbedding, EventEmbedding
from memory.claims.reliability import REDUNDANCY_DAYS, agent_reliability
from memory.claims.services.embeddings import claims_pending_embedding
from memory.receipts.models.receipts import RECEIPT_TRANSITIONS, ReceiptState

RECONCILIATION_OUTCOMES = tuple(RECEIPT_TRANSITIONS[ReceiptState.RECONCILING])


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
            "Agents' `succeeded` reports lacking what the operation's evidence policy names "
            "(without a policy: no external id and no evidence).",
            "unverified_completions",
        ),
        (
            "memdesk_agent_unverified_completion_rate",
            "Unverified completions over succeeded receipts.",
            "unverified_completion_rate",
        ),
        (
            "memdesk_agent_claim_uses",
            f"Claim uses agents reported in the last {window} s.",
            "claim_uses",
        ),
        (
            "memdesk_agent_stale_claim_uses",
            f"Claim uses reported in the last {window} s of claims past refresh_after when "
            "recalled.",
            "stale_claim_uses",
        ),
        (
            "memdesk_agent_stale_claim_use_rate",
            "Stale claim uses over reported claim uses in the window.",
            "stale_claim_use_rate",
        ),
        ("memdesk_agent_claim_writes", "Claims written (every gate verdict).", "claim_writes"),
        (
            "memdesk_agent_write_rejection_rate",
            "Claims the gate rejected or quarantined, over claims written.",
            "write_rejection_rate",
        ),
        (
            "memdesk_agent_recovery_answers_judged",
            "Recovery answers with a verdict (an agent's replay or a person's review).",
            "recovery_judged",
        ),
        (
            "memdesk_agent_recovery_answers_correct",
            "Judged recovery answers whose latest verdict agrees with the answer.",
            "recovery_correct",
        ),
        (
            "memdesk_agent_manual_troubleshooting_items",
            "manual_review items a person decided.",
            "troubleshooting_items",
        ),
        (
            "memdesk_agent_manual_troubleshooting_minutes",
            "Minutes from each decided manual_review item's creation to its decision, summed.",
            "troubleshooting_minutes",
        ),
        (
            "memdesk_agent_manual_troubleshooting_open",
            "manual_review items still waiting for a person.",
            "troubleshooting_open",
        ),
        (
            "memdesk_agent_context_returned",
            f"Claims returned in the last {REDUNDANCY_DAYS} days by answers agents reported "
            "uses for.",
            "returned_in_reported",
        ),
        (
            "memdesk_agent_context_unused",
            "Of those, claims no use report names.",
            "unused_in_reported",
        ),
    ]
    optional = [
        (
            "memdesk_agent_recovery_correctness",
            "Judged recovery answers that were right, over judged answers.",
            "recovery_correctness",
        ),
        (
            "memdesk_agent_context_redundancy",
            "Claims handed to agents that their use reports left out, over claims returned "
            "in reported answers.",
            "context_redundancy",
        ),
    ]
    for name, documentation, attribute in simple:
        family = _gauge(name, documentation)
        for tenant in figures:
            family.add_metric([tenant.tenant_slug], getattr(tenant, attribute))
        yield family
    # A share of nothing is not zero: a tenant without a judged answer has no sample.
    for name, documentation, attribute in optional:
        family = _gauge(name, documentation)
        for tenant in figures:
            value = getattr(tenant, attribute)
            if value is not None:
                family.add_metric([tenant.tenant_slug], value)
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
    troubleshooting = _gauge(
        "memdesk_agent_manual_troubleshooting_minutes_per_item",
        "Minutes from a manual_review item's creation to its decision (nearest-rank percentiles).",
        ["quantile"],
    )
    for tenant in figures:
        timed.add_metric([tenant.tenant_slug], tenant.recovery.timed)
        for quantile, value in (
            ("0.5", tenant.recovery_latency_p50),
            ("0.95", tenant.recovery_latency_p95),
        ):
            if value is not None:
                latency.add_metric([tenant.tenant_slug, quantile], value)
        for quantile, value in (
            ("0.5", tenant.troubleshooting_p50_minutes),
            ("0.95", tenant.troubleshooting_p95_minutes),
        ):
            if value is not None:
                troubleshooting.add_metric([tenant.tenant_slug, quantile], value)
    yield latency
    yield timed
    yield troubleshooting


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
