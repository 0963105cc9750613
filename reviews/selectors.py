"""Reads of review queues; every function takes the tenant."""

from __future__ import annotations

from django.db.models import Count, Min, QuerySet

from accounts.models import Tenant
from reviews.models import OPEN_STATUSES, ReviewItem


def review_items(
    *, tenant: Tenant, queue: str | None = None, status: str | None = None
) -> QuerySet[ReviewItem]:
    items = ReviewItem.objects.filter(tenant=tenant).select_related("claimed_by")
    if queue:
        items = items.filter(queue=queue)
    if status:
        items = items.filter(status=status)
    return items


def review_item_get(*, tenant: Tenant, item_id: int) -> ReviewItem | None:
    return review_items(tenant=tenant).filter(pk=item_id).first()


def queue_depths(*, tenant: Tenant) -> dict[str, dict]:
    rows = (
        ReviewItem.objects.filter(tenant=tenant, status__in=OPEN_STATUSES)
        .values("queue")
        .annotate(depth=Count("id"), oldest=Min("created_at"))
    )
    return {row["queue"]: {"depth": row["depth"], "oldest": row["oldest"]} for row in rows}
