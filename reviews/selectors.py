"""Reads of review queues; every function takes the tenant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Count, Min, Q, QuerySet

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


@dataclass
class QueuePage:
    items: list[ReviewItem]
    next_cursor: str | None
    count_label: str


COUNT_CAP = 1000


def count_capped(queryset: QuerySet[ReviewItem], cap: int = COUNT_CAP) -> str:
    """`COUNT(*)` grows with the queue; counting at most cap + 1 rows does not."""
    n = queryset.order_by()[: cap + 1].count()
    return f"{cap:,}+" if n > cap else f"{n:,}"


_BIGINT = 2**63


def _decode_cursor(cursor: str) -> tuple[int, datetime, int] | None:
    """The keyset position in `after`; anything this page did not hand out is ignored."""
    try:
        priority, stamp, item_id = cursor.split("|")
        position = int(priority), datetime.fromisoformat(stamp), int(item_id)
        when = position[1]
        if when.tzinfo is None:
            raise ValueError("naive timestamp")
        # Normalising to UTC is what the database will do; near year 1 or 9999
        # it overflows, and that must not happen inside the query.
        when.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    if not all(-_BIGINT <= number < _BIGINT for number in (position[0], position[2])):
        return None
    return position


def queue_page(
    *,
    tenant: Tenant,
    queue: str,
    filtered: QuerySet[ReviewItem],
    sort: str = "age",
    after: str | None = None,
    limit: int = 50,
) -> QueuePage:
    """Open items of a queue, oldest (or highest priority) first, with keyset pagination."""
    items = filtered.filter(tenant=tenant, queue=queue, status__in=OPEN_STATUSES)
    count_label = count_capped(items)
    ordering = ["-priority", "created_at", "id"] if sort == "priority" else ["created_at", "id"]
    cursor = _decode_cursor(after) if after else None
    if cursor is not None:
        priority, stamp, item_id = cursor
        if sort == "priority":
            items = items.filter(
                Q(priority__lt=priority)
                | Q(priority=priority, created_at__gt=stamp)
                | Q(priority=priority, created_at=stamp, id__gt=item_id)
            )
        else:
            items = items.filter(Q(created_at__gt=stamp) | Q(created_at=stamp, id__gt=item_id))
    page = list(items.select_related("claimed_by").order_by(*ordering)[: limit + 1])
    next_cursor = None
    if len(page) > limit:
        page = page[:limit]
        last = page[-1]
        next_cursor = f"{last.priority}|{last.created_at.isoformat()}|{last.id}"
    return QueuePage(items=page, next_cursor=next_cursor, count_label=count_label)
