"""The queue list's rows, built in Python once per page.

The list is the review console's hot loop: up to 50 rows of about twenty
values each. Through the template engine (variable lookups, `date` and
`timesince` filters, `{% url %}` per link) it cost more than the rest of the
page together. Here each row is one f-string: every text value goes through
`html.escape` (what Django's autoescape does, without its lazy-string checks)
and the title through `reveal_html` (escaped too, its hidden characters drawn as
badges), ids are integers, and every link starts from the queue URL the view
reversed once.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from html import escape
from typing import Any, cast

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import TIME_STRINGS, timesince

from common.templatetags.hidden_chars import reveal_html
from common.templatetags.moments import JUST_NOW
from reviews.models import ItemStatus, ReviewItem

register = template.Library()


class _UnitLabels:
    """One unit of `timesince` ("%(num)d day" / "days"), translated once per number.

    Each lazy translation otherwise resolves its language and plural form
    again on every row; a page asks for the same few numbers over and over.
    """

    def __init__(self, lazy: Any) -> None:
        self.lazy = lazy
        self.labels: dict[int, str] = {}

    def __mod__(self, params: dict[str, int]) -> str:
        number = params["num"]
        if number not in self.labels:
            self.labels[number] = self.lazy % params
        return self.labels[number]


def _row(
    item: ReviewItem,
    summary: dict[str, Any],
    *,
    queue_url: str,
    selected_pk: int | None,
    selectable: bool,
    now: datetime,
    zone: tzinfo,
    units: dict[str, _UnitLabels],
) -> str:
    pk = int(item.pk)
    title = reveal_html(str(summary.get("title") or item.topic or item.target_id))
    meta = []
    if status := summary.get("status"):
        meta.append(f'<span class="chip {escape(str(status))}">{escape(str(status))}</span>')
    if item.subject_key:
        meta.append(f'<span class="mono">{escape(item.subject_key)}</span>')
    # A queue's presenter may say its reason codes in words (`reasons`); else the codes.
    reasons = summary.get("reasons") or item.reason_codes
    meta += [f'<span class="chip">{escape(reason)}</span>' for reason in reasons]
    if item.status == ItemStatus.CLAIMED:
        meta.append(f'<span class="chip claimed">held by {escape(str(item.claimed_by))}</span>')
    local = item.created_at.astimezone(zone)  # timezone.localtime, the zone read once
    # timesince only applies `%` to each label, which _UnitLabels answers like a str. Under
    # a minute it says "0 minutes": that moment is "just now" (common/templatetags/moments).
    age = (
        "just now"
        if now - item.created_at < JUST_NOW
        else escape(timesince(item.created_at, now, time_strings=cast(dict[str, str], units)))
    )
    checkbox = (
        f'<input type="checkbox" name="items" value="{pk}" aria-label="select item {pk}">'
        if selectable
        else ""
    )
    return (
        f'<li class="row{" selected" if pk == selected_pk else ""}" data-row data-item="{pk}">'
        f'{checkbox}<a class="row-link" href="{queue_url}?item={pk}" hx-get="{queue_url}{pk}/" '
        f'hx-target="#detail" hx-swap="outerHTML" hx-push-url="{queue_url}?item={pk}">'
        f'<span class="row-title">{title}</span><span class="row-meta">{"".join(meta)}'
        f'<time datetime="{local.isoformat()}" '
        f'title="{local.strftime("%Y-%m-%d %H:%M:%S %Z")}" '
        f'data-age="{int(item.created_at.timestamp())}">{age}'
        "</time></span></a></li>\n"
    )


@register.simple_tag(takes_context=True)
def queue_rows(context: template.Context) -> SafeString:
    """Every `<li>` of the queue list from the view's `rows` (item, presenter summary)."""
    selected = context.get("item")
    policy = context.get("policy")
    options = {
        # A reversed URL of Queue values and digits; escaped once all the same.
        "queue_url": escape(context["queue_url"]),
        "selected_pk": selected.pk if selected else None,
        "selectable": bool(policy and policy.approve_verdict and context.get("can_decide")),
        "now": timezone.now(),
        "zone": timezone.get_current_timezone(),
        "units": {name: _UnitLabels(lazy) for name, lazy in TIME_STRINGS.items()},
    }
    rows = "".join(_row(item, summary, **options) for item, summary in context["rows"])
    # Every value in `rows` was escaped above.
    return mark_safe(rows)  # noqa: S308
