"""The queue page at size: keyset pages per sort, capped badges, flat query counts."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.models import ReviewItem
from reviews.selectors import queue_page, queue_workspace, review_items
from testing.seed import seed_queue
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
ROW = re.compile(r'data-item="(\d+)"')
NEXT = re.compile(r'<a href="([^"]*after=[^"]*)"')
EXPECTED_ORDER = {
    "age": lambda i: (i.created_at, i.id),
    "newest": lambda i: (-i.created_at.timestamp(), -i.id),
    "priority": lambda i: (-i.priority, i.created_at, i.id),
}


def _ids(html: str) -> list[int]:
    return [int(i) for i in ROW.findall(html)]


def _next(html: str) -> str | None:
    found = NEXT.search(html)
    return found.group(1).replace("&amp;", "&") if found else None


def _walk(client, url: str | None) -> list[int]:
    """Every item id the console lists, following its "more items" links to the end."""
    seen: list[int] = []
    while url:
        html = client.get(url).content.decode()
        seen += _ids(html)
        url = _next(html)
    return seen


@pytest.mark.parametrize("sort", ["age", "newest", "priority"])
def test_it_walks_each_sort_page_by_page_without_gaps_or_repeats(acme, editor, login, sort):
    # 130 items, two per timestamp and three priorities, so every tie-break is used.
    seed_queue(tenant=acme, items=130)
    # A claimed item stays listed; a decided one does not.
    ReviewItem.objects.filter(pk=ReviewItem.objects.order_by("id")[3].pk).update(
        status="claimed", claimed_by=editor, lease_expires_at="2099-01-01T00:00:00Z"
    )
    ReviewItem.objects.filter(pk=ReviewItem.objects.order_by("id")[4].pk).update(status="decided")
    open_items = ReviewItem.objects.filter(tenant=acme, status__in=["open", "claimed"])
    expected = [i.id for i in sorted(open_items, key=EXPECTED_ORDER[sort])]

    seen = _walk(login(editor), f"/review/candidates/?sort={sort}")

    assert len(expected) == 129
    assert seen == expected


@pytest.mark.parametrize("sort", ["age", "newest", "priority"])
def test_the_unfiltered_page_in_fixed_sql_reads_what_the_filtered_path_reads(
    acme, globex, editor, sort, django_assert_num_queries
):
    seed_queue(tenant=acme, items=130)
    seed_queue(tenant=globex, items=20, start=1_000)
    claimed = ReviewItem.objects.filter(tenant=acme).order_by("id")[3]
    ReviewItem.objects.filter(pk=claimed.pk).update(
        status="claimed", claimed_by=editor, lease_expires_at="2099-01-01T00:00:00Z"
    )
    orm = review_items(tenant=acme)
    after, seen_claimants = None, []
    for _page in range(3):
        with django_assert_num_queries(1):
            fixed = queue_workspace(
                tenant=acme, owner=editor, queue="candidates", sort=sort, after=after, limit=50
            ).page
            claimants = [str(item.claimed_by) for item in fixed.items if item.claimed_by_id]
        expected = queue_page(tenant=acme, queue="candidates", filtered=orm, sort=sort, after=after)
        assert [_columns(i) for i in fixed.items] == [_columns(i) for i in expected.items]
        assert claimants == [str(i.claimed_by) for i in expected.items if i.claimed_by_id]
        assert fixed.next_cursor == expected.next_cursor
        assert all(not item._state.adding for item in fixed.items)
        seen_claimants += claimants
        after = fixed.next_cursor
    assert after is None  # 130 items: three pages of 50, the last one short
    # The claimant is loaded with the row, as select_related would.
    assert seen_claimants == [editor.username]


def _columns(item: ReviewItem) -> list[object]:
    return [getattr(item, f.attname) for f in item._meta.concrete_fields]


def test_it_pages_the_filtered_queue_by_keyset(acme, editor, login):
    seed_queue(tenant=acme, items=400)
    wanted = ReviewItem.objects.filter(tenant=acme, subject_key="user:u7")
    expected = [i.id for i in sorted(wanted, key=EXPECTED_ORDER["priority"])]

    seen = _walk(login(editor), "/review/candidates/?subject=user:u7&sort=priority")

    assert len(expected) == 4 and seen == expected


def _queries(client, url: str, **extra) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **extra)
    assert response.status_code == 200
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize(
    "query",
    [
        "sort=age",
        "sort=newest",
        "sort=priority",
        "subject=user:u1&reason=unverified_authority&older_than=1d&topic=seeded",
        "agent=agent-2&sort=priority",
    ],
)
def test_it_runs_as_many_queries_for_200_items_as_for_5(acme, globex, make_member, login, query):
    small = make_member(acme, "sam")
    large = make_member(globex, "lara")
    seed_queue(tenant=acme, items=5)
    seed_queue(tenant=globex, items=200, start=10_000)
    small_client, large_client = login(small), login(large)

    for extra in ({}, HTMX):
        counts = []
        for client in (small_client, large_client):
            first = _queries(client, f"/review/candidates/?{query}", **extra)
            html = client.get(f"/review/candidates/?{query}").content.decode()
            deeper = _next(html)
            pages = [first]
            if deeper:
                pages.append(_queries(client, deeper, **extra))
            counts.append([len(p) for p in pages])
        # A deeper page costs the same as the first, and neither grows with the queue.
        assert counts[0][0] == counts[1][0], (query, extra, counts)
        assert all(n == counts[1][0] for n in counts[1]), (query, extra, counts)


def test_the_badges_cost_one_query_capped_at_1000(acme, editor, login):
    client = login(editor)
    seed_queue(tenant=acme, items=5)
    ReviewItem.objects.filter(pk=ReviewItem.objects.order_by("id")[0].pk).update(queue="conflicts")
    small = _queries(client, "/review/stale/")
    html = client.get("/review/stale/").content.decode()
    assert 'aria-label="4 open"' in html and 'aria-label="1 open"' in html

    seed_queue(tenant=acme, items=1_200, start=100)
    large = _queries(client, "/review/stale/")
    html = client.get("/review/stale/").content.decode()

    assert len(small) == len(large)
    assert sum("unnest" in sql for sql in large) == 1
    assert 'aria-label="1,000+ open"' in html and ">1,000+</span>" in html
    assert 'aria-label="1 open"' in html
    # The page's own count is capped the same way.
    page = client.get("/review/candidates/").content.decode()
    assert '<span id="queue-count">1,000+</span> open' in page


def test_the_badges_are_swapped_in_out_of_band_and_skipped_when_not_shown(
    acme, editor, login, agent
):
    client = login(editor)
    seed_queue(tenant=acme, items=3)
    verdict = submit(
        agent,
        authority="agent_inferred",
        basis="inference",
        text="Alice probably works at Acme",
        predicate="employer",
        value="Acme",
    )
    item_id = verdict["review_item"]["id"]
    listing = client.get("/review/candidates/?sort=priority", **HTMX).content.decode()
    assert listing.lstrip().startswith('<section id="list"')
    assert "hx-swap-oob" not in listing
    detail = _queries(client, f"/review/candidates/{item_id}/", **HTMX)
    assert not any("unnest" in sql for sql in detail)
    client.get("/review/candidates/")
    workspace = client.post(
        "/review/candidates/bulk",
        {"items": [item_id], "reason_code": "verified"},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
        **HTMX,
    ).content.decode()
    assert "Approved 1 item." in workspace
    assert 'id="queue-nav" hx-swap-oob="true"' in workspace
    assert 'aria-label="3 open"' in workspace


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        ("age", "review_open_by_age"),
        ("newest", "review_open_by_age"),
        ("priority", "review_open_by_priority"),
    ],
)
def test_a_deep_page_starts_at_its_cursor_in_the_index(acme, editor, login, sort, index):
    seed_queue(tenant=acme, items=3_000)
    client = login(editor)
    html = client.get(f"/review/candidates/?sort={sort}").content.decode()
    # The page's statement, among those the page sends together.
    statements = [part for q in _queries(client, _next(html)) for part in q.split(";\n")]
    sql = next(q for q in statements if "ORDER BY" in q and "LIMIT 51" in q)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {sql}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index in plan, plan
    # The cursor is part of the index condition, not a filter applied to rows
    # read from the start of the queue.
    condition = next(line for line in plan.splitlines() if "Index Cond" in line)
    assert "ROW(" in condition and "created_at" in condition, plan


def test_rows_link_to_their_items_with_urls_built_once(acme, editor, login):
    seed_queue(tenant=acme, items=3)
    html = login(editor).get("/review/candidates/").content.decode()
    for item in ReviewItem.objects.filter(tenant=acme):
        assert f'hx-get="{reverse("reviews:item", args=["candidates", item.pk])}"' in html
        assert f'href="{reverse("reviews:queue", args=["candidates"])}?item={item.pk}"' in html


@pytest.mark.parametrize(
    "after",
    [
        "garbage",
        "99999|2026-01-01T00:00:00+00:00|1",
        "1|2026-01-01T00:00:00|x",
        "0|2026-01-01T00:00:00|-5",
        # Well formed but naive: read as UTC, before every seeded item.
        "2|2000-01-01T00:00:00|1",
    ],
)
def test_a_cursor_it_did_not_make_does_not_break_the_page(acme, editor, login, after):
    seed_queue(tenant=acme, items=3)
    response = login(editor).get("/review/candidates/", {"after": after, "sort": "priority"})
    assert response.status_code == 200
    assert len(_ids(response.content.decode())) == 3


def test_the_api_lists_the_same_filtered_items_as_the_console(acme, editor, login, session_api):
    seed_queue(tenant=acme, items=120)
    api = session_api(editor)
    url = "/api/v1/reviews?queue=candidates&subject=user:u3&limit=2"
    listed: list[int] = []
    while url:
        body = api.get(url).json()
        listed += [row["id"] for row in body["results"]]
        url = body["next"]
    console = _walk(login(editor), "/review/candidates/?subject=user:u3")
    # Oldest first in both, across the API's cursor pages.
    assert listed == console and len(console) == 2


def test_an_item_opened_a_moment_ago_reads_just_now(agent, editor, login):
    submit(agent, authority="reported", basis="reported", predicate="p1", value="1")
    html = login(editor).get("/review/candidates/").content.decode()
    row = html[html.index("data-row") :]
    assert "just now" in row[: row.index("</li>")]
    assert "0\xa0minutes" not in html and "0 minutes" not in html
