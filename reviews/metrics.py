from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from reviews.models import OPEN_STATUSES, ReviewItem


def collect_review_metrics() -> Iterable[Metric]:
    depth = GaugeMetricFamily(
        "memdesk_review_queue_depth", "Open review items per queue.", labels=["queue"]
    )
    age = GaugeMetricFamily(
        "memdesk_review_queue_oldest_age_seconds",
        "Age of the oldest open item per queue.",
        labels=["queue"],
    )
    now = timezone.now()
    rows = (
        ReviewItem.objects.filter(status__in=OPEN_STATUSES)
        .values("queue")
        .annotate(n=Count("id"), oldest=Min("created_at"))
    )
    for row in rows:
        depth.add_metric([row["queue"]], row["n"])
        age.add_metric([row["queue"]], (now - row["oldest"]).total_seconds())
    yield depth
    yield age
