"""A live memdesk for the client's tests: pytest-django's live_server and real agent tokens."""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core.signals import request_started

from accounts.services import agent_token_create


@pytest.fixture(autouse=True)
def isolated_cache(settings) -> None:
    """A cache key prefix per test: test databases restart their ids, so a former run's
    cached hot memory or resolved skill would otherwise answer for this run's rows. The
    live server runs in this process and reads the same settings."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"test-clients-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture
def served_paths() -> Iterator[list[str]]:
    """The path of every request the live server receives during the test, in order."""
    paths: list[str] = []

    def record(sender: object, environ: dict[str, str], **kwargs: object) -> None:
        paths.append(environ["PATH_INFO"])

    request_started.connect(record, dispatch_uid="served-paths")
    try:
        yield paths
    finally:
        request_started.disconnect(dispatch_uid="served-paths")


@pytest.fixture
def issue_token(acme) -> Callable[..., str]:
    """The secret of a fresh agent token of acme (every capability unless narrowed), acting
    for `owner` or, when none is named, for nobody."""
    made = 0

    def issue(
        *,
        capabilities: list[str] | None = None,
        max_authority: str = "user_explicit",
        owner: Any = None,
    ) -> str:
        nonlocal made
        made += 1
        return agent_token_create(
            tenant=acme,
            name=f"client-test-{made}",
            capabilities=capabilities,
            max_authority=max_authority,
            owner=owner,
        ).secret

    return issue


@pytest.fixture
def agent_token(issue_token) -> str:
    return issue_token()


class SlowPlatform:
    """An outside platform on loopback that takes every write and answers too late.

    It counts each write as it arrives (the side effect happened), then sleeps
    `delay` seconds before answering, longer than the caller waits.
    """

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.writes = 0
        self._lock = threading.Lock()
        self._release = threading.Event()
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with platform._lock:
                    platform.writes += 1
                platform._release.wait(platform.delay)
                try:
                    self.send_response(201)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"id": "article-1"}')
                except OSError:
                    pass  # the caller gave up long ago

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/articles"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> SlowPlatform:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def slow_platform() -> Iterator[SlowPlatform]:
    with SlowPlatform(delay=5.0) as platform:
        yield platform


def wait_for(predicate: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Poll until `predicate` holds (for work another thread or process finishes)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
