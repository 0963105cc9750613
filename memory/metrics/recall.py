"""Semantic recall metrics: write-to-embedding lag (claims and ledger events) and the claims
still waiting for a vector."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from memory.models import ClaimEmbedding, EventEmbedding
from memory.services.embeddings import claims_pending_embedding

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
