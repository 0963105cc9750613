"""Lifecycle governance metrics: deletions by status and completion time, dirty reports,
stale-claim use rate, and when each tenant was last consolidated."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric

from memory.claims.models import Claim, RecallTrace
from memory.privacy.models import ConsolidationRun, DeletionRequest, DeletionStatus

# Seconds from request to completed report.
COMPLETION_BUCKETS = (1, 5, 15, 60, 300, 900, 3600, 21600, 86400)


def _deletion_completion() -> Metric:
    table = DeletionRequest._meta.db_table
    buckets = ", ".join(
        f"count(*) FILTER (WHERE seconds <= {bound})" for bound in COMPLETION_BUCKETS
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {buckets}, count(*), coalesce(sum(seconds), 0) FROM ("  # noqa: S608
            f"SELECT extract(epoch FROM finished_at - created_at) AS seconds FROM {table} "
            "WHERE status = %s) AS finished",
            [DeletionStatus.COMPLETED],
        )
        row = cursor.fetchone()
    histogram = HistogramMetricFamily(
        "memdesk_deletion_completion_seconds",
        "Time from a deletion request to its completed, verified report.",
    )
    counts = [
        (str(float(bound)), int(n)) for bound, n in zip(COMPLETION_BUCKETS, row, strict=False)
    ]
    histogram.add_metric([], buckets=[*counts, ("+Inf", int(row[-2]))], sum_value=float(row[-1]))
    return histogram


def _stale_use() -> Iterable[Metric]:
    window = settings.STALE_USE_WINDOW_SECONDS
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE c.refresh_after <= t.created_at) "  # noqa: S608
            f"FROM {RecallTrace._meta.db_table} t "
            "CROSS JOIN LATERAL unnest(t.chosen) AS chosen(id) "
            f"JOIN {Claim._meta.db_table} c ON c.id = chosen.id "
            "WHERE t.created_at >= now() - make_interval(secs => %s)",
            [window],
        )
        used, stale = cursor.fetchone()
    recalled = GaugeMetricFamily(
        "memdesk_recalled_claims",
        f"Claims returned by recalls in the last {window} s, by whether they were stale.",
        labels=["stale"],
    )
    recalled.add_metric(["false"], used - stale)
    recalled.add_metric(["true"], stale)
    yield recalled
    rate = GaugeMetricFamily(
        "memdesk_stale_claim_use_rate",
        f"Share of claims returned by recalls in the last {window} s that were past "
        "refresh_after (asked for with include_stale).",
    )
    rate.add_metric([], stale / used if used else 0.0)
    yield rate


def collect_lifecycle_metrics() -> Iterable[Metric]:
    by_status = GaugeMetricFamily(
        "memdesk_deletions", "Deletion requests by status.", labels=["status"]
    )
    counts = dict(DeletionRequest.objects.values_list("status").annotate(n=Count("id")))
    for status in DeletionStatus.values:
        by_status.add_metric([status], counts.get(status, 0))
    yield by_status

    dirty = GaugeMetricFamily(
        "memdesk_deletions_dirty",
        "Deletions whose report has a dirty probe: waiting for an editor, or resolved by one.",
    )
    dirty.add_metric(
        [],
        DeletionRequest.objects.filter(
            status__in=[DeletionStatus.COMPLETED, DeletionStatus.NEEDS_REVIEW],
            report__clean=False,
        ).count(),
    )
    yield dirty
    yield _deletion_completion()
    yield from _stale_use()

    last = GaugeMetricFamily(
        "memdesk_consolidation_last_run_timestamp_seconds",
        "When each tenant's memory was last consolidated.",
        labels=["tenant"],
    )
    for tenant_id, finished in ConsolidationRun.objects.values_list("tenant_id").annotate(
        at=Max("finished_at")
    ):
        last.add_metric([str(tenant_id)], finished.timestamp())
    yield last
