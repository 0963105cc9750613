"""Reads of review queues; every function takes the tenant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Expression,
    F,
    Min,
    QuerySet,
    Value,
)
from django.db.models.fields import DateTimeField
from django.utils import timezone

from accounts.models import ActorKind, Tenant
from common.rows import RowReader, Statement, fetch_together
from reviews.models import OPEN_STATUSES, Decision, ItemStatus, Queue, ReviewItem, SavedFilter


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


class QueueDepth(TypedDict):
    depth: int
    oldest: datetime | None


def queue_depths(*, tenant: Tenant) -> dict[str, QueueDepth]:
    """Exact depth and oldest item per queue: a scan of every open item, for the dashboard."""
    rows = (
        ReviewItem.objects.filter(tenant=tenant, status__in=OPEN_STATUSES)
        .values("queue")
        .annotate(depth=Count("id"), oldest=Min("created_at"))
    )
    return {row["queue"]: {"depth": row["depth"], "oldest": row["oldest"]} for row in rows}


COUNT_CAP = 1000


def depth_label(n: int, cap: int = COUNT_CAP) -> str:
    return f"{cap:,}+" if n > cap else f"{n:,}"


def _depths_statement(tenant: Tenant, cap: int) -> Statement:
    # `status IN (…)` and the ORDER BY repeat the index's predicate and columns
    # so the planner reads the index instead of scanning the table until the
    # LIMIT, which it is otherwise tempted to do. Only the model's own table
    # name is interpolated; every value is a parameter.
    table = connection.ops.quote_name(ReviewItem._meta.db_table)
    statuses = ", ".join(["%s"] * len(OPEN_STATUSES))
    sql = (
        f"SELECT q.queue, (SELECT count(*) FROM (SELECT 1 FROM {table} r "  # noqa: S608
        f"WHERE r.tenant_id = %s AND r.queue = q.queue AND r.status IN ({statuses}) "
        "ORDER BY r.created_at, r.id LIMIT %s) capped) FROM unnest(%s::text[]) AS q(queue)"
    )
    return sql, [tenant.pk, *(str(s) for s in OPEN_STATUSES), cap + 1, list(Queue.values)]


def queue_depths_capped(*, tenant: Tenant, cap: int = COUNT_CAP) -> dict[str, int]:
    """Open items per queue, counting at most cap + 1 in each (one statement).

    An exact count reads every open item, so it grows with the queue; each
    capped count reads at most cap + 1 entries of the `review_open_by_age`
    index, so the badges cost the same for 10 items or a million.
    """
    (rows,) = fetch_together(_depths_statement(tenant, cap))
    return dict(rows)


@dataclass
class QueuePage:
    items: list[ReviewItem]
    next_cursor: str | None
    count_label: str


def count_capped(queryset: QuerySet[ReviewItem], cap: int = COUNT_CAP) -> str:
    """`COUNT(*)` grows with the queue; counting at most cap + 1 rows does not."""
    # Ordered like `review_open_by_age` so the planner walks that index.
    return depth_label(queryset.order_by("created_at", "id")[: cap + 1].count(), cap)


def _negated_priority() -> Any:
    """`priority * -1`, exactly as `review_open_by_priority` indexes it, so PostgreSQL
    matches the two: "highest priority first, then oldest" becomes one ascending row."""
    return F("priority") * -1


class RowAfter(Expression):
    """`(a, b, c) > (x, y, z)` (or `<`): the keyset condition PostgreSQL matches to an index.

    The equivalent `a > x OR (a = x AND b > y) OR …` is evaluated row by row
    after scanning from the start of the queue; a row-value comparison is an
    index condition, so a deep page starts reading at its cursor.
    """

    conditional = True
    output_field = BooleanField()

    def __init__(
        self, columns: Sequence[Any], values: Sequence[Any], *, descending: bool = False
    ) -> None:
        super().__init__()
        self.columns = list(columns)
        self.values = list(values)
        self.operator = "<" if descending else ">"

    def get_source_expressions(self) -> list[Any]:
        return [*self.columns, *self.values]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        n = len(self.columns)
        self.columns, self.values = list(exprs[:n]), list(exprs[n:])

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        sides, params = [], []
        for side in (self.columns, self.values):
            parts = []
            for expression in side:
                sql, part_params = compiler.compile(expression)
                parts.append(sql)
                params.extend(part_params)
            sides.append(f"({', '.join(parts)})")
        return f"{sides[0]} {self.operator} {sides[1]}", params


# Each sort's ORDER BY. Every one is backed by a partial index over open items
# on (tenant, queue, …the same columns): `review_open_by_age` (read backwards
# for "newest") and `review_open_by_priority`, so a page is one index range scan.
SORTS = {
    "age": ["created_at", "id"],
    "newest": ["-created_at", "-id"],
    "priority": [_negated_priority().asc(), "created_at", "id"],
}
SORT_CHOICES = (("age", "oldest first"), ("newest", "newest first"), ("priority", "priority"))
_SMALLINT = range(-32768, 32768)


_BIGINT = 2**63


def _decode_cursor(cursor: str) -> tuple[int, datetime, int] | None:
    """A cursor is `priority|created_at|id` of the last row shown; anything else is ignored."""
    try:
        priority, stamp, item_id = cursor.split("|")
        at = datetime.fromisoformat(stamp)
        position = int(priority), at, int(item_id)
        if timezone.is_naive(at):
            at = at.replace(tzinfo=UTC)
        # Normalising to UTC is what the database will do; near year 1 or 9999
        # it overflows, and that must not happen inside the query.
        at.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    if position[0] not in _SMALLINT or not 0 < position[2] < _BIGINT:
        return None
    return position[0], at, position[2]


def _keyset(sort: str, cursor: tuple[int, datetime, int]) -> RowAfter:
    priority, stamp, item_id = cursor
    stamp_value = Value(stamp, output_field=DateTimeField())
    id_value = Value(item_id)
    if sort == "priority":
        return RowAfter(
            [_negated_priority(), F("created_at"), F("id")],
            [Value(-priority), stamp_value, id_value],
        )
    return RowAfter(
        [F("created_at"), F("id")], [stamp_value, id_value], descending=sort == "newest"
    )


# The unfiltered page (most page loads) in fixed SQL: the ORM query below compiled on
# every page load cost more than running it. Each sort's ORDER BY and keyset condition
# spell the columns exactly as its index holds them (`priority * -1` included), so the
# page is one range scan of that index from the cursor on.
_ITEM = RowReader(ReviewItem, alias="r")
_CLAIMANT = RowReader(get_user_model(), alias="u")
_OPEN = ", ".join(f"'{status}'" for status in OPEN_STATUSES)
_SORT_SQL = {
    "age": ("r.created_at, r.id", "(r.created_at, r.id) > (%s, %s)"),
    "newest": ("r.created_at DESC, r.id DESC", "(r.created_at, r.id) < (%s, %s)"),
    "priority": (
        "(r.priority * -1), r.created_at, r.id",
        "((r.priority * -1), r.created_at, r.id) > (%s, %s, %s)",
    ),
}


def _open_items_statement(
    *, tenant: Tenant, queue: str, sort: str, cursor: tuple[int, datetime, int] | None, limit: int
) -> Statement:
    """Up to `limit` of the queue's open items after `cursor`, their claimants joined in."""
    order, keyset = _SORT_SQL[sort]
    params: list[Any] = [tenant.pk, queue]
    if cursor is not None:
        priority, stamp, item_id = cursor
        params += [-priority, stamp, item_id] if sort == "priority" else [stamp, item_id]
    sql = f"""
        SELECT {_ITEM.columns}, {_CLAIMANT.columns}
        FROM {ReviewItem._meta.db_table} r
        LEFT JOIN {_CLAIMANT.model._meta.db_table} u ON u.id = r.claimed_by_id
        WHERE r.tenant_id = %s AND r.queue = %s AND r.status IN ({_OPEN})
          {f"AND {keyset}" if cursor is not None else ""}
        ORDER BY {order} LIMIT %s
    """  # noqa: S608 - table names, statuses and sorts are constants; values are parameters
    return sql, [*params, limit]


def _open_items(rows: list[tuple[Any, ...]]) -> list[ReviewItem]:
    items = []
    for row in rows:
        item = _ITEM.build(row)
        item.claimed_by = None if item.claimed_by_id is None else _CLAIMANT.build(row, _ITEM.width)
        items.append(item)
    return items


def _paged(items: list[ReviewItem], limit: int, count_label: str) -> QueuePage:
    """The first `limit` of `items` (read one more than that), and the cursor after them."""
    next_cursor = None
    if len(items) > limit:
        items = items[:limit]
        last = items[-1]
        next_cursor = f"{last.priority}|{last.created_at.isoformat()}|{last.id}"
    return QueuePage(items=items, next_cursor=next_cursor, count_label=count_label)


def queue_page(
    *,
    tenant: Tenant,
    queue: str,
    filtered: QuerySet[ReviewItem],
    sort: str = "age",
    after: str | None = None,
    limit: int = 50,
    depth: int | None = None,
) -> QueuePage:
    """Open items of `filtered` (the FilterSet's queryset) in a queue, in the sort's order,
    `limit` at a time after a keyset cursor.

    Two statements whatever the queue's size or the page's depth: the capped
    count and the page itself (an index range scan starting at the cursor,
    claimants joined in). `depth`, the queue's capped count when the caller
    already has it, saves the first. The unfiltered page is `queue_workspace`'s.
    """
    sort = sort if sort in SORTS else "age"
    cursor = _decode_cursor(after) if after else None
    items = filtered.filter(tenant=tenant, queue=queue, status__in=OPEN_STATUSES)
    count_label = count_capped(items) if depth is None else depth_label(depth)
    if cursor is not None:
        items = items.filter(_keyset(sort, cursor))
    page = list(items.select_related("claimed_by").order_by(*SORTS[sort])[: limit + 1])
    return _paged(page, limit, count_label)


_SAVED = RowReader(SavedFilter, alias="f")
_SAVED_FILTERS = f"""
    SELECT {_SAVED.columns} FROM {SavedFilter._meta.db_table} f
    WHERE f.tenant_id = %s AND f.owner_id = %s AND f.queue = %s ORDER BY f.name
"""  # noqa: S608 - the table name is a constant; every value is a parameter


@dataclass
class QueueWorkspace:
    """What the unfiltered queue page reads besides the open item."""

    depths: dict[str, int]  # capped, by queue: the navigation's badges and the page's count
    page: QueuePage
    saved_filters: list[SavedFilter]
    decided_recently: bool  # whether the person has a decision an undo may still take back


def queue_workspace(
    *, tenant: Tenant, owner: Any, queue: str, sort: str, after: str | None, limit: int
) -> QueueWorkspace:
    """The unfiltered queue page's reads, sent together in one round trip: the capped
    depths, the page (the same rows in the same order as `queue_page`, in fixed SQL: the
    ORM query compiled on every page load cost more than running it), the person's saved
    filters, and whether they decided anything inside the undo window."""
    sort = sort if sort in SORTS else "age"
    cursor = _decode_cursor(after) if after else None
    depths, rows, saved, decided = fetch_together(
        _depths_statement(tenant, COUNT_CAP),
        _open_items_statement(
            tenant=tenant, queue=queue, sort=sort, cursor=cursor, limit=limit + 1
        ),
        (_SAVED_FILTERS, [tenant.pk, owner.pk, queue]),
        _decided_since_statement(tenant=tenant, actor_id=str(owner.pk), since=_undo_since()),
    )
    by_queue = dict(depths)
    return QueueWorkspace(
        depths=by_queue,
        page=_paged(_open_items(rows), limit, depth_label(by_queue.get(queue, 0))),
        saved_filters=[_SAVED.build(row) for row in saved],
        decided_recently=bool(decided[0][0]),
    )


def saved_filters(*, tenant: Tenant, owner: Any, queue: str) -> list[SavedFilter]:
    """The person's saved views of a queue, by name."""
    return _SAVED.all(_SAVED_FILTERS, [tenant.pk, owner.pk, queue])


def undo_deadline(*, decision: Decision) -> datetime:
    """When the window to take `decision` back closes (`REVIEW_UNDO_SECONDS` after it)."""
    return decision.at + timedelta(seconds=settings.REVIEW_UNDO_SECONDS)


def decision_undo_until(*, decision: Decision) -> datetime | None:
    """Until when `decision` may still be undone; None if it cannot be (any more). The
    service checks again, with the target's state, when an undo is asked for."""
    if not decision.undo_state or decision.scrubbed_at is not None:
        return None
    if hasattr(decision, "undo"):
        return None
    until = undo_deadline(decision=decision)
    return until if until > timezone.now() else None


def undoable_decisions(
    *, tenant: Tenant, actor_id: str, queue: str, ids: Sequence[int] | None = None
) -> list[Decision]:
    """The person's decisions in `queue` still inside their undo window (the latest first):
    those named by `ids`, or else the latest one, which the console offers to undo."""
    since = _undo_since()
    if ids is None and not _decided_since(tenant=tenant, actor_id=actor_id, since=since):
        return []
    decisions = (
        Decision.objects.filter(
            tenant=tenant,
            item__queue=queue,
            item__status=ItemStatus.DECIDED,
            actor_kind=ActorKind.USER,
            actor_id=actor_id,
            at__gt=since,
            undo__isnull=True,
            scrubbed_at__isnull=True,
        )
        .exclude(undo_state={})
        .select_related("item")
        .order_by("-at", "-pk")
    )
    if ids is not None:
        return list(decisions.filter(pk__in=ids))
    return list(decisions[:1])


def _undo_since() -> datetime:
    """Decisions after this may still be undone (`REVIEW_UNDO_SECONDS`)."""
    return timezone.now() - timedelta(seconds=settings.REVIEW_UNDO_SECONDS)


def _decided_since_statement(*, tenant: Tenant, actor_id: str, since: datetime) -> Statement:
    # The table name is the model's own; every value is a parameter.
    sql = (
        f"SELECT EXISTS (SELECT 1 FROM {Decision._meta.db_table} WHERE tenant_id = %s"  # noqa: S608
        " AND actor_kind = %s AND actor_id = %s AND at > %s)"
    )
    return sql, [tenant.pk, ActorKind.USER.value, actor_id, since]


def _decided_since(*, tenant: Tenant, actor_id: str, since: datetime) -> bool:
    """Whether the person decided anything after `since`: one probe of the newest entry of
    `decision_by_actor_recent`, in fixed SQL. Every queue page asks, and almost always
    the answer is no; the ORM's query for the offer itself costs a millisecond of CPU."""
    (rows,) = fetch_together(
        _decided_since_statement(tenant=tenant, actor_id=actor_id, since=since)
    )
    return bool(rows[0][0])
