"""Concurrent load cannot exhaust PostgreSQL: each process borrows from a bounded pool."""

from __future__ import annotations

import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.db import connection


def _get(url: str) -> tuple[int, dict]:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, json.loads(response.read())


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.common.probe_urls")
def test_concurrent_requests_leave_the_connection_count_bounded(live_server):
    bound = connection.settings_dict["OPTIONS"]["pool"]["max_size"]
    assert connection.settings_dict["CONN_MAX_AGE"] == 0
    database = connection.settings_dict["NAME"]
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    peak, done = 0, threading.Event()

    def watch() -> None:
        # A connection of its own, outside the pool, so it does not count itself.
        nonlocal peak
        with psycopg.connect(**{**params, "dbname": database}, autocommit=True) as watcher:
            while not done.is_set():
                row = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    [database],
                ).fetchone()
                assert row is not None
                (count,) = row
                peak = max(peak, count)
                done.wait(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    requests = 3 * bound + 6
    try:
        with ThreadPoolExecutor(max_workers=requests) as pool:
            slow = [
                pool.submit(_get, f"{live_server.url}/_test/slow-query")
                for _ in range(requests - 6)
            ]
            health = [pool.submit(_get, f"{live_server.url}/healthz") for _ in range(6)]
            slow_answers = [future.result() for future in slow]
            health_answers = [future.result() for future in health]
    finally:
        done.set()
        watcher.join()
    assert {status for status, _ in slow_answers} == {200}
    assert [body["status"] for _, body in health_answers] == ["ok"] * 6
    # The requests really overlapped (several backends at once), yet never more
    # than the pool allows, however many requests were in flight.
    assert 2 <= peak <= bound
    assert len({body["pid"] for _, body in slow_answers}) <= bound
