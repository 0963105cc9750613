"""Receipt governance metrics: receipts by state, reconciliation outcomes, recovery answers."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db.models import Count
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from memory.receipts.models.receipts import (
    RECEIPT_TRANSITIONS,
    Receipt,
    ReceiptState,
    ReceiptTransition,
)
from memory.receipts.selectors.recovery_log import recovery_decision_counts
from memory.receipts.services.recovery import RECOVERY_OUTCOMES

logger = logging.getLogger(__name__)


def collect_receipt_metrics() -> Iterable[Metric]:
    by_state = GaugeMetricFamily("memdesk_receipts", "Receipts by state.", labels=["state"])
    counts = dict(Receipt.objects.values_list("state").annotate(n=Count("id")))
    for state in ReceiptState.values:
        by_state.add_metric([state], counts.get(state, 0))
    yield by_state

    # Transitions are append-only, so counting them gives a true counter.
    outcomes = CounterMetricFamily(
        "memdesk_reconciliation_outcomes",
        "Receipts settled by reconciliation, by outcome.",
        labels=["outcome"],
    )
    settled = dict(
        ReceiptTransition.objects.filter(from_state=ReceiptState.RECONCILING)
        .values_list("to_state")
        .annotate(n=Count("id"))
    )
    for outcome in RECEIPT_TRANSITIONS[ReceiptState.RECONCILING]:
        outcomes.add_metric([outcome], settled.get(outcome, 0))
    yield outcomes

    # The log is append-only, so counting its rows gives a true counter.
    decisions = recovery_decision_counts()
    recovery = CounterMetricFamily(
        "memdesk_recovery_decisions",
        "Recovery answers given, by decision and reason (recovery's log).",
        labels=["decision", "reason"],
    )
    for decision, reason in RECOVERY_OUTCOMES:
        recovery.add_metric([decision, reason], decisions[(decision, reason)])
    yield recovery
