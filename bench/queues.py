"""The review queue page against the Django admin changelist on the same rows.

`python -m bench.queues [--items N] [--samples S]` (or `BENCH_QUEUE_ITEMS=N`)
runs this section alone in a throwaway database and writes it into
bench/RESULTS.md, keeping the other sections; `python -m bench` runs it with
the rest. The default size (20,000 open items) is the smoke size the tests run;
the issue's figures use `--items 500000`.

One tenant's `candidates` queue holds every row (all open, in pairs sharing a
timestamp so the keyset's id tie-break is exercised). Five pages are measured,
interleaved in a shuffled order each round after a warm-up, through the full
middleware stack with DEBUG off:

- memdesk page 1 and memdesk at row ~80% (a keyset `?after=` cursor);
- the admin changelist page 1 and the admin page showing the same rows
  (`?p=`, i.e. OFFSET), filtered to the same tenant, queue and status;
- for reference, the memdesk page of an empty queue (its fixed cost).

Before timing, the deep pages of both are checked to list the same item ids.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import django
from django.apps import apps

if not apps.ready:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CACHE_KEY_PREFIX", "memdesk-bench")
    django.setup()

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Role
from accounts.services import member_create, tenant_create
from reviews.models import Queue, ReviewItem
from testing.seed import seed_queue

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Review queue page vs the Django admin changelist"
SMOKE_ITEMS = 20_000
PAGE = 50
GOAL_PAGE1 = 10.0  # admin ÷ memdesk on page 1, at least
GOAL_DEEP = 30.0  # admin OFFSET ÷ memdesk keyset at row ~80%, at least
GOAL_DEEP_VS_PAGE1 = 2.0  # memdesk deep ÷ memdesk page 1, at most


@dataclass(frozen=True)
class Series:
    label: str
    url: str
    seconds: list[float]
    queries: int

    @property
    def p50(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p95(self) -> float:
        if len(self.seconds) < 2:
            return self.p50
        return statistics.quantiles(self.seconds, n=20, method="inclusive")[18] * 1000


@dataclass(frozen=True)
class QueueBench:
    items: int
    deep_row: int
    samples: int
    memdesk_page1: Series
    admin_page1: Series
    memdesk_deep: Series
    admin_deep: Series
    memdesk_empty: Series
    environment: str = ""

    @property
    def page1_ratio(self) -> float:
        return self.admin_page1.p50 / self.memdesk_page1.p50

    @property
    def deep_ratio(self) -> float:
        return self.admin_deep.p50 / self.memdesk_deep.p50

    @property
    def deep_vs_page1(self) -> float:
        return self.memdesk_deep.p50 / self.memdesk_page1.p50


_MEMDESK_ROW = re.compile(r'data-item="(\d+)"')
_ADMIN_ROW = re.compile(r"/admin/reviews/reviewitem/(\d+)/change/")


def _ids(pattern: re.Pattern[str], html: str) -> list[int]:
    return list(dict.fromkeys(int(i) for i in pattern.findall(html)))


def _get(client: Client, url: str) -> str:
    response = client.get(url, secure=True)
    if response.status_code != 200:
        raise SystemExit(f"GET {url} answered {response.status_code}")
    return response.content.decode()


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        _get(client, url)
    return len(captured)


def run(*, items: int = SMOKE_ITEMS, samples: int = 20, warmup: int = 3) -> QueueBench:
    """Seed a fresh tenant's queue with `items` open items and time the five pages."""
    environment = _environment()
    tenant, _ = tenant_create(slug=f"bench-queues-{items}", name="Queue benchmark")
    user = member_create(
        tenant=tenant, username=f"bench-reviewer-{items}", password=None, role=Role.ADMIN
    ).user
    # The admin changelist needs a superuser; the console needs the membership.
    get_user_model().objects.filter(pk=user.pk).update(is_staff=True, is_superuser=True)
    user.refresh_from_db()
    seed_queue(tenant=tenant, items=items)
    client = Client()
    client.force_login(user)

    queue = Queue.CANDIDATES
    # The deep page starts at row ~80%, on a page boundary so the admin's
    # `?p=` page shows exactly the same rows.
    deep_page = int(items * 0.8) // PAGE + 1
    deep_row = (deep_page - 1) * PAGE
    before = (
        ReviewItem.objects.filter(tenant=tenant, queue=queue)
        .order_by("created_at", "id")
        .values_list("priority", "created_at", "id")[deep_row - 1]
    )
    cursor = f"{before[0]}|{before[1].isoformat()}|{before[2]}"
    admin = (
        f"/admin/reviews/reviewitem/?tenant__id__exact={tenant.pk}"
        f"&queue__exact={queue}&status__exact=open"
    )
    urls = {
        "memdesk_page1": f"/review/{queue}/",
        "admin_page1": admin,
        "memdesk_deep": f"/review/{queue}/?{urlencode({'after': cursor})}",
        "admin_deep": f"{admin}&p={deep_page}",
        # The same page over an empty queue: what the page costs before any row.
        "memdesk_empty": f"/review/{Queue.STALE}/",
    }
    with override_settings(DEBUG=False):
        memdesk_ids = _ids(_MEMDESK_ROW, _get(client, urls["memdesk_deep"]))
        admin_ids = _ids(_ADMIN_ROW, _get(client, urls["admin_deep"]))
        if len(memdesk_ids) != PAGE or memdesk_ids != admin_ids:
            raise SystemExit(f"the deep pages differ: {memdesk_ids[:3]}… vs {admin_ids[:3]}…")
        queries = {key: _queries(client, url) for key, url in urls.items()}
        timings: dict[str, list[float]] = {key: [] for key in urls}
        order = list(urls)
        for round_ in range(warmup + samples):
            random.shuffle(order)
            for key in order:
                started = time.perf_counter()
                _get(client, urls[key])
                if round_ >= warmup:
                    timings[key].append(time.perf_counter() - started)
    labels = {
        "memdesk_page1": "memdesk queue page, page 1",
        "admin_page1": "admin changelist, page 1",
        "memdesk_deep": f"memdesk queue page at row {deep_row:,} (keyset)",
        "admin_deep": f"admin changelist page {deep_page:,} (OFFSET {deep_row:,})",
        "memdesk_empty": "memdesk queue page, empty queue (the page without rows)",
    }
    series = {key: Series(labels[key], urls[key], timings[key], queries[key]) for key in urls}
    return QueueBench(
        items=items, deep_row=deep_row, samples=samples, environment=environment, **series
    )


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def _environment() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0].split()[0]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"PostgreSQL {server}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load:.1f} when it started"
    )


def section(result: QueueBench) -> str:
    rows = [
        result.memdesk_page1,
        result.admin_page1,
        result.memdesk_deep,
        result.admin_deep,
        result.memdesk_empty,
    ]
    lines = [
        HEADING,
        "",
        f"Run on {timezone.now():%Y-%m-%d %H:%M} UTC, {result.environment}. "
        f"{result.items:,} open items in one queue; {result.samples} interleaved samples per "
        f"page after a warm-up, DEBUG off, through the full middleware stack (bench/queues.py).",
        "",
        "| page | p50 ms | p95 ms | samples | SQL queries |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {s.label} | {s.p50:.1f} | {s.p95:.1f} | {len(s.seconds)} | {s.queries} |"
            for s in rows
        ),
        "",
        "| goal | measured | met |",
        "|---|---:|---|",
        f"| page 1: ≥ {GOAL_PAGE1:.0f}x faster than the admin | {result.page1_ratio:.1f}x | "
        f"{_met(result.page1_ratio >= GOAL_PAGE1)} |",
        f"| row {result.deep_row:,}: ≥ {GOAL_DEEP:.0f}x faster than the admin's OFFSET | "
        f"{result.deep_ratio:.1f}x | {_met(result.deep_ratio >= GOAL_DEEP)} |",
        f"| row {result.deep_row:,}: ≤ {GOAL_DEEP_VS_PAGE1:.0f}x page 1 | "
        f"{result.deep_vs_page1:.2f}x | {_met(result.deep_vs_page1 <= GOAL_DEEP_VS_PAGE1)} |",
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, path: Path = RESULTS) -> None:
    """Put this section into RESULTS.md in place of its previous run, keeping the others."""
    current = path.read_text() if path.exists() else "# Benchmark results\n"
    start = current.find(HEADING)
    if start == -1:
        updated = current.rstrip("\n") + "\n\n" + text
    else:
        end = current.find("\n## ", start + len(HEADING))
        rest = current[end + 1 :] if end != -1 else ""
        updated = current[:start] + text + ("\n" + rest if rest else "")
    path.write_text(updated)


def items_from_env() -> int:
    return int(os.environ.get("BENCH_QUEUE_ITEMS") or SMOKE_ITEMS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.queues", description=__doc__)
    parser.add_argument("--items", type=int, default=items_from_env())
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args(argv)
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        text = section(run(items=args.items, samples=args.samples))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    write_section(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
