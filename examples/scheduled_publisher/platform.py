"""A fake blog platform on loopback, for the publisher to write to and memdesk to read from.

A real HTTP server in a thread: `POST /api/articles` stores an article under its
`Idempotency-Key` (the same key again returns the stored one), `GET
/api/articles?key=K` answers 200 with its id or 404, which this platform
guarantees proves absence. The driver injects one fault into the next write:
answer only after the caller gave up (timeout), or drop the connection after
storing the article, or before storing it.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Faults the next write can suffer.
STALL_AFTER_COMMIT = "stall_after_commit"
DROP_AFTER_COMMIT = "drop_after_commit"
DROP_BEFORE_COMMIT = "drop_before_commit"


@dataclass(frozen=True)
class Article:
    id: str
    key: str
    slug: str
    digest: str


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A caller that gave up (the timeout fault) leaves a broken pipe behind: expected.
        return


class FakeBlog:
    def __init__(self, host: str = "127.0.0.1", port: int = 0, stall_seconds: float = 3.0) -> None:
        self._lock = threading.Lock()
        self.articles: dict[str, Article] = {}
        self.writes = 0
        self.reads = 0
        self.stall_seconds = stall_seconds
        self._next_fault = ""
        # Reads wait this long: a window for killing the worker that makes one.
        self.read_delay = 0.0
        # Writes answer this much later (still inside the caller's timeout).
        self.write_delay = 0.0
        # A broken lookup: every read answers 404, the articles it holds included.
        self.answers_absent = False
        # Articles taken down again (a compensation), by the key they were written under.
        self.deleted: dict[str, Article] = {}
        # Articles kept for the verifier's controls, never counted as published.
        self.controls: dict[str, Article] = {}
        self._server = _Server((host, port), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address
        return f"http://{host}:{port}/api/"

    def start(self) -> FakeBlog:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def keep_control(self, key: str) -> None:
        """Hold an article under `key` for the platform's known-present verifier control."""
        with self._lock:
            self.controls[key] = Article(id=f"control-{key}", key=key, slug="control", digest="")

    def fail_next_write(self, fault: str) -> None:
        with self._lock:
            self._next_fault = fault

    def duplicate_effects(self) -> int:
        """Articles beyond the first with the same slug and content: the same effect twice."""
        with self._lock:
            counts = Counter((article.slug, article.digest) for article in self.articles.values())
        return sum(n - 1 for n in counts.values())

    def published(self) -> int:
        with self._lock:
            return len(self.articles)

    def article_ids(self) -> dict[str, str]:
        """Each published article's id by the idempotency key it was written under."""
        with self._lock:
            return {key: article.id for key, article in self.articles.items()}

    # -- the server -----------------------------------------------------------------

    def _write(self, key: str, body: dict[str, Any]) -> tuple[Article | None, str]:
        with self._lock:
            fault, self._next_fault = self._next_fault, ""
            self.writes += 1
            if fault == DROP_BEFORE_COMMIT:
                return None, fault
            article = self.articles.get(key)
            if article is None:
                article = Article(
                    id=f"post-{len(self.articles) + 1}",
                    key=key,
                    slug=str(body.get("slug", "")),
                    digest=str(body.get("digest", "")),
                )
                self.articles[key] = article
            return article, fault

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        blog = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            def _drop(self) -> None:
                # A reset, not a clean close: the caller cannot tell what happened.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                key = self.headers.get("Idempotency-Key", "")
                if not key:
                    self._answer(400, {"error": "Idempotency-Key required"})
                    return
                article, fault = blog._write(key, body)
                if fault in (DROP_BEFORE_COMMIT, DROP_AFTER_COMMIT):
                    self._drop()
                    return
                if fault == STALL_AFTER_COMMIT:
                    time.sleep(blog.stall_seconds)
                elif blog.write_delay:
                    time.sleep(blog.write_delay)
                assert article is not None
                self._answer(201, {"id": article.id, "url": f"/posts/{article.slug}"})

            def do_DELETE(self) -> None:
                # Taking an article down: idempotent, the same answer for a second delete.
                key = parse_qs(urlsplit(self.path).query).get("key", [""])[0]
                with blog._lock:
                    article = blog.articles.pop(key, None) or blog.deleted.get(key)
                    if article is not None:
                        blog.deleted[key] = article
                if article is None:
                    self._answer(404, {"error": "no article with this key"})
                else:
                    self._answer(200, {"id": article.id, "deleted": True})

            def do_GET(self) -> None:
                with blog._lock:
                    blog.reads += 1
                if blog.read_delay:
                    time.sleep(blog.read_delay)
                key = parse_qs(urlsplit(self.path).query).get("key", [""])[0]
                with blog._lock:
                    article = blog.articles.get(key) or blog.controls.get(key)
                if article is None or blog.answers_absent:
                    self._answer(404, {"error": "no article with this key"})
                else:
                    self._answer(200, {"id": article.id, "slug": article.slug})

        return Handler
