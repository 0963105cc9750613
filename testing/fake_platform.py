"""A fake external platform for reconciliation tests: a real HTTP server on loopback.

It runs in a thread of the test process, so Celery workers in other processes
reach it over TCP exactly as they would reach a real platform. It stores
articles by idempotency key, counts every request by method, and misbehaves
on request: commit a write and drop the connection, drop a write before
committing it, fail or stall reads.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from memory.receipts.models import Platform

WRITE_NORMAL = "normal"
# The platform stores the article, then the connection dies before any answer.
WRITE_COMMIT_THEN_DROP = "commit_then_drop"
# The connection dies before the platform stored anything.
WRITE_DROP_BEFORE_COMMIT = "drop_before_commit"


class _Server(ThreadingHTTPServer):
    # Concurrent reconcilers open many connections at once; the default backlog
    # of 5 would drop some and add a SYN retry (a second) to their reads.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A reader that gave up (a timeout under test) closed its end while the answer was
        # being written: that is the test working, not a platform fault worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakePlatform:
    # The tenant's registration of this platform, set by the `platform` fixture.
    registered: Platform

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
    ) -> None:
        self._lock = threading.Lock()
        self.articles: dict[str, dict[str, Any]] = {}
        self.requests: Counter[str] = Counter()
        self.writes_committed = 0
        self.reads_by_key: Counter[str] = Counter()
        self.write_mode = WRITE_NORMAL
        # The next `failing_reads` reads answer `failing_status` (or stall for
        # `stall_seconds` first when that is set).
        self.failing_reads = 0
        self.failing_status = 503
        self.stall_seconds = 0.0
        # Every read waits this long, to widen the window a test kills a worker in.
        self.read_delay = 0.0
        # Reads past this count wait, unanswered, until `release_reads()`: a test that
        # kills a worker then knows a read was still in flight, however slow the machine.
        self._hold_after: int | None = None
        self._release_at_in_flight: int | None = None
        self._released = threading.Event()
        # Keys whose search answers two matches (an ambiguous lookup).
        self.duplicated_keys: set[str] = set()
        # A broken verifier: every lookup answers "absent" (404, or [] for a search),
        # whatever the platform holds.
        self.answers_absent = False
        # Every read answers `302 Location: redirect_to` when set.
        self.redirect_to = ""
        # The `Host` header of every request, to see which name a read was sent for.
        self.hosts: Counter[str] = Counter()
        # Reads for these keys always answer this status, or stall this many seconds.
        self.failing_keys: dict[str, int] = {}
        self.stalled_keys: dict[str, float] = {}
        # Reads being answered now, the most ever at once, and when each began.
        self.in_flight = 0
        self.max_in_flight = 0
        self.read_started: list[float] = []
        # TCP connections accepted: reads over a kept-alive connection share one.
        self.connections = 0
        self._next_id = 1000
        self._server = _Server((host, port), self._handler_class())
        self.scheme = "http"
        if tls is not None:
            self.scheme = "https"
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> FakePlatform:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release_reads()
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address
        return f"{self.scheme}://{host}:{port}"

    def lookup_url(self, path: str = "articles") -> str:
        return f"{self.url}/{path}?key={{idempotency_key}}"

    # -- state ------------------------------------------------------------------

    @property
    def reads(self) -> int:
        return self.requests["GET"]

    @property
    def writes_attempted(self) -> int:
        return sum(count for method, count in self.requests.items() if method != "GET")

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def hold_reads_after(self, count: int, *, until_in_flight: int | None = None) -> None:
        """Leave every read after the `count`-th (since the platform started) unanswered,
        until `release_reads()` or until `until_in_flight` reads are in flight at once (then
        every held read is answered, and no more are held)."""
        with self._lock:
            self._hold_after = count
            self._release_at_in_flight = until_in_flight
            self._released = threading.Event()

    def release_reads(self) -> None:
        """Answer the held reads (to a client that may be gone) and hold no more."""
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        self._hold_after = self._release_at_in_flight = None
        self._released.set()

    def seed(self, key: str, article_id: Any = None, body: dict[str, Any] | None = None) -> str:
        """An article the platform already holds, as if written in an earlier run (with
        `body` as what that write sent)."""
        with self._lock:
            return self._store(key, body or {"seeded": True}, article_id)["id"]

    def _store(self, key: str, body: dict[str, Any], article_id: Any = None) -> dict[str, Any]:
        self._next_id += 1
        article = {"id": article_id or f"art_{self._next_id}", "key": key, **body}
        self.articles[key] = article
        return article

    # -- HTTP -------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as real platforms answer: a client's pooled connection
            # carries many reads, and a thread serves each connection.
            protocol_version = "HTTP/1.1"
            # As real servers do: without TCP_NODELAY the body, written after the
            # headers, waits for the client's delayed ACK (40 ms on Linux) on
            # every read over a kept-alive connection.
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with platform._lock:
                    platform.connections += 1

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _drop(self) -> None:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                key = parse_qs(parts.query).get("key", [""])[0]
                with platform._lock:
                    platform.requests["GET"] += 1
                    platform.reads_by_key[key] += 1
                    platform.hosts[self.headers.get("Host", "")] += 1
                    failing = platform.failing_reads > 0
                    if failing:
                        platform.failing_reads -= 1
                    article = platform.articles.get(key)
                    duplicated = key in platform.duplicated_keys
                    key_status = platform.failing_keys.get(key)
                    key_stall = platform.stalled_keys.get(key, 0.0)
                    platform.in_flight += 1
                    platform.max_in_flight = max(platform.max_in_flight, platform.in_flight)
                    platform.read_started.append(time.monotonic())
                    hold_after = platform._hold_after
                    held = hold_after is not None and platform.requests["GET"] > hold_after
                    released = platform._released
                    release_at = platform._release_at_in_flight
                    if release_at is not None and platform.in_flight >= release_at:
                        platform._release_locked()
                try:
                    if held:
                        released.wait(timeout=60)
                    self._answer_read(parts, article, duplicated, failing, key_status, key_stall)
                finally:
                    with platform._lock:
                        platform.in_flight -= 1

            def _answer_read(
                self,
                parts: Any,
                article: dict[str, Any] | None,
                duplicated: bool,
                failing: bool,
                key_status: int | None,
                key_stall: float,
            ) -> None:
                if platform.read_delay:
                    time.sleep(platform.read_delay)
                if key_stall:
                    time.sleep(key_stall)
                if key_status is not None:
                    self._send(key_status, {"error": "unavailable"})
                    return
                if platform.redirect_to:
                    self.send_response(302)
                    self.send_header("Location", platform.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif platform.answers_absent and parts.path in ("/articles", "/search"):
                    if parts.path == "/articles":
                        self._send(404, {"error": "not found"})
                    else:
                        self._send(200, [])
                elif failing:
                    if platform.stall_seconds:
                        time.sleep(platform.stall_seconds)
                    self._send(platform.failing_status, {"error": "unavailable"})
                elif parts.path == "/articles":
                    if article:
                        self._send(200, article)
                    else:
                        self._send(404, {"error": "not found"})
                elif parts.path == "/search":
                    matches = [article] if article else []
                    if article and duplicated:
                        matches.append({**article, "id": article["id"] + "-dup"})
                    self._send(200, matches)
                else:
                    self._send(404, {"error": "no such route"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                key = self.headers.get("Idempotency-Key", "")
                with platform._lock:
                    platform.requests["POST"] += 1
                    mode = platform.write_mode
                    existing = platform.articles.get(key)
                    article = None
                    if existing is None and mode != WRITE_DROP_BEFORE_COMMIT:
                        article = platform._store(key, body)
                        platform.writes_committed += 1
                if mode in (WRITE_COMMIT_THEN_DROP, WRITE_DROP_BEFORE_COMMIT):
                    self._drop()
                elif existing is not None:
                    self._send(200, existing)
                else:
                    self._send(201, article)

            def _refuse(self) -> None:
                with platform._lock:
                    platform.requests[self.command] += 1
                self._send(405, {"error": "method not allowed"})

            do_PUT = do_PATCH = do_DELETE = _refuse

        return Handler
