"""Fixtures for receipts, reconciliation and recovery: the fake platform, actors in each
role, receipts walked into any state along the transition table, and real Celery workers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.db import connection

from accounts.actors import Actor
from accounts.models import Role
from memory.receipts.models.platforms import AbsenceProof, Platform
from memory.receipts.models.receipts import (
    RECEIPT_TRANSITIONS,
    Receipt,
    ReceiptState,
    TransitionRole,
)
from memory.receipts.services.platforms import platform_register
from memory.receipts.services.receipts import receipt_create, receipt_transition
from memory.receipts.services.reconciliation import forget_read_threads
from testing.fake_platform import FakePlatform
from tests.memory import fake_dns

# When a move is open to several roles, walk it as the first of these.
ROLE_PREFERENCE = (TransitionRole.AGENT, TransitionRole.WORKER, TransitionRole.EDITOR)


# A public address (documentation ranges are not public, so this is a real one)
# that tests let names resolve to; nothing ever connects to it.
PUBLIC_ADDRESS = "93.184.215.14"
BLOG_BASE_URL = "https://blog.example/api/"


@pytest.fixture(autouse=True)
def dns(settings) -> Iterator[Any]:
    """Platform host names resolve through the fake DNS; unknown names do not resolve."""
    settings.PLATFORM_RESOLVER = "tests.memory.fake_dns.resolve"
    fake_dns.reset()
    yield fake_dns
    fake_dns.reset()


@pytest.fixture
def platform(acme) -> Iterator[FakePlatform]:
    """The fake platform, registered for acme: it listens on loopback, so allow_private."""
    fake = FakePlatform().start()
    fake.registered = register_fake_platform(fake, tenant=acme)
    yield fake
    fake.stop()


def register_fake_platform(fake: FakePlatform, *, tenant: Any, name: str = "fake") -> Platform:
    platform, _ = platform_register(
        tenant=tenant,
        actor=Actor.system("test setup"),
        name=name,
        base_url=fake.url,
        allow_private=True,
    )
    return platform


@pytest.fixture
def blog_platform(acme, globex, dns) -> dict[str, Platform]:
    """`blog` registered at https://blog.example/api/ for acme and globex (never contacted)."""
    dns.answer("blog.example", [PUBLIC_ADDRESS])
    return {
        tenant.slug: platform_register(
            tenant=tenant, actor=Actor.system("test setup"), name="blog", base_url=BLOG_BASE_URL
        )[0]
        for tenant in (acme, globex)
    }


@pytest.fixture
def fast_reconcile(settings):
    """Reads retried at once, short HTTP timeouts: many attempts in little time; read
    threads and platform limits of this test's own (the tests count reads in flight)."""
    forget_read_threads()
    settings.RECONCILE_BACKOFF_BASE_SECONDS = 0
    settings.RECONCILE_BACKOFF_MAX_SECONDS = 0
    settings.RECONCILE_HTTP_TIMEOUT_SECONDS = 1
    settings.RECONCILE_MAX_ATTEMPTS = 5
    return settings


@dataclass(frozen=True)
class Actors:
    agent: Actor
    worker: Actor
    editor: Actor

    def for_role(self, role: str) -> Actor:
        by_role: dict[str, Actor] = {
            TransitionRole.AGENT: self.agent,
            TransitionRole.WORKER: self.worker,
            TransitionRole.EDITOR: self.editor,
        }
        return by_role[role]


@pytest.fixture
def actors(agent, editor) -> Actors:
    return Actors(
        agent=Actor.for_token(agent.token),
        worker=Actor.system("test reconciler"),
        editor=Actor.for_user(editor, Role.EDITOR),
    )


def path_to(state: str) -> list[tuple[str, str]]:
    """The shortest walk from `planned` to `state` as (role, to) steps, read off the table."""
    previous: dict[str, tuple[str, str] | None] = {ReceiptState.PLANNED: None}
    queue = deque([str(ReceiptState.PLANNED)])
    while queue:
        current = queue.popleft()
        for target, roles in RECEIPT_TRANSITIONS.get(current, {}).items():
            if target not in previous:
                mover = next(r for r in ROLE_PREFERENCE if r in roles)
                previous[target] = (current, mover)
                queue.append(target)
    steps: list[tuple[str, str]] = []
    step = previous[state]
    while step is not None:
        source, role = step
        steps.append((role, state))
        state = source
        step = previous[state]
    return list(reversed(steps))


def move_as(receipt: Receipt, role: str, to: str, actors: Actors) -> Receipt:
    extra: dict[str, Any] = {}
    if role == TransitionRole.EDITOR:
        extra["reason"] = "checked on the platform by hand"
        if to == ReceiptState.SUCCEEDED:
            extra["external_id"] = f"ext-{receipt.pk}"
    return receipt_transition(
        tenant=receipt.tenant, receipt_id=receipt.pk, actor=actors.for_role(role), to=to, **extra
    )


@pytest.fixture
def make_receipt(acme, actors) -> Callable[..., Receipt]:
    """A receipt of acme walked into `state` through the services, as its actors would."""

    def make(state: str = ReceiptState.PLANNED, **fields: Any) -> Receipt:
        key = fields.pop("idempotency_key", None) or f"key-{uuid.uuid4().hex}"
        fields.setdefault("operation", "articles.create")
        fields.setdefault("target", "https://blog.example/api/articles")
        fields.setdefault("intent", {"title": "Receipts before calls", "nonce": key})
        receipt, _ = receipt_create(
            tenant=fields.pop("tenant", acme), actor=actors.agent, idempotency_key=key, **fields
        )
        for role, to in path_to(state):
            receipt = move_as(receipt, role, to, actors)
        return receipt

    return make


# The fake platform's lookups by key, as an admin registers them to prove absence.
PROOF_LOOKUPS = {
    AbsenceProof.STATUS_LOOKUP: "articles?key={idempotency_key}",
    AbsenceProof.SEARCH_BY_KEY: "search?key={idempotency_key}",
}


def register_proving_platform(
    fake: FakePlatform,
    *,
    proof: str,
    key_retention_seconds: int = 86400,
    consistency_delay_seconds: int = 0,
    lookup_template: str | None = None,
) -> Platform:
    """The fake platform registered again for its tenant, with a proof of absence."""
    name = f"{fake.registered.name}-{proof}-{key_retention_seconds}-{consistency_delay_seconds}"
    platform, _ = platform_register(
        tenant=fake.registered.tenant,
        actor=Actor.system("test setup"),
        name=name.replace("_", "-"),
        base_url=fake.url,
        allow_private=True,
        absence_proof=proof,
        lookup_template=PROOF_LOOKUPS[AbsenceProof(proof)]
        if lookup_template is None
        else lookup_template,
        key_retention_seconds=key_retention_seconds,
        consistency_delay_seconds=consistency_delay_seconds,
    )
    return platform


def http_reconciler(
    platform: FakePlatform,
    *,
    proven_by: str = "",
    key_retention_seconds: int = 86400,
    consistency_delay_seconds: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A receipt's http reconciler reading the fake platform by key. With `proven_by`, it
    names a registration of the platform that proves absence that way (the receipt's own
    `absence_proof` proves nothing); the lookup is the registered one."""
    if not proven_by:
        return {"adapter": "http", "lookup_url": platform.lookup_url(), **extra}
    registered = register_proving_platform(
        platform,
        proof=proven_by,
        key_retention_seconds=key_retention_seconds,
        consistency_delay_seconds=consistency_delay_seconds,
    )
    return {
        "adapter": "http",
        "platform": registered.name,
        "lookup_url": f"{platform.url}/{registered.lookup_template}",
        **extra,
    }


# -- real Celery workers -------------------------------------------------------------


@dataclass
class WorkerProcess:
    name: str
    process: subprocess.Popen
    log_path: Path
    terminated: bool = False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if " ready." in self.log():
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"worker {self.name} exited:\n{self.log()}")
            time.sleep(0.05)
        raise TimeoutError(f"worker {self.name} not ready:\n{self.log()}")

    def pool_children(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        with contextlib.suppress(OSError):
            return [int(pid) for pid in path.read_text().split()]
        return []

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes: a crash, with no chance to clean up."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def kill_pool_child(self) -> None:
        """SIGKILL only the process running the task; the main process stays up."""
        for pid in self.pool_children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def terminate(self) -> None:
        """Ask the worker for a warm shutdown (SIGTERM) without waiting for it."""
        # Once only: a worker already shutting down is left to finish doing so.
        if self.process.poll() is None and not self.terminated:
            self.terminated = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host = db["HOST"] or ""
    if host.startswith("/"):
        # The embedded PostgreSQL listens on a Unix socket: the host is its directory.
        return f"postgres://{db['USER']}{password}@{quote(host, safe='')}/{db['NAME']}"
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _forget_queue(queue: str) -> None:
    """Remove a test run's queue and its unacknowledged messages from the shared Redis."""
    import redis

    client = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)
    # kombu keeps one list per priority step: the queue name, then name + suffix.
    for key in client.scan_iter(match=f"{queue}*"):
        client.delete(key)
    client.delete(f"_kombu.binding.{queue}")
    # Messages a killed worker never acknowledged wait in kombu's `unacked`
    # hash; left there, they would be restored into the queue much later.
    for tag, raw in client.hgetall("unacked").items():
        with contextlib.suppress(ValueError, IndexError, TypeError):
            if json.loads(raw)[2] == queue:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)


@dataclass
class Workers:
    queue: str
    env: dict[str, str]
    log_dir: Path
    started: list[WorkerProcess]
    queues: set[str]

    def new_queue(self) -> str:
        queue = f"{self.queue}-{len(self.queues)}"
        self.queues.add(queue)
        return queue

    def start(
        self, *, queue: str | None = None, pool: str = "prefork", concurrency: int = 1, **env: str
    ) -> WorkerProcess:
        """A worker on `queue` (the test's own by default) running `concurrency` tasks at
        once; `env` adds to its environment."""
        name = f"w{len(self.started)}-{uuid.uuid4().hex[:6]}"
        log_path = self.log_dir / f"{name}.log"
        command = [
            sys.executable, "-m", "celery", "-A", "config", "worker",
            "--pool", pool, "--concurrency", str(concurrency), "-Q", queue or self.queue,
            "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
            "--loglevel", "INFO",
        ]  # fmt: skip
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                cwd=django_settings.BASE_DIR,
                env={**self.env, **env},
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group, so a kill reaches the pool processes too.
                start_new_session=True,
            )
        worker = WorkerProcess(name=name, process=process, log_path=log_path)
        self.started.append(worker)
        return worker


@pytest.fixture
def celery_workers(transactional_db, settings, tmp_path) -> Iterator[Workers]:
    """Start real Celery worker processes on a queue of this test's own, against the
    test database; short leases come in through the environment, as in production."""
    queue = f"memdesk-test-{uuid.uuid4().hex[:10]}"
    settings.RECONCILE_QUEUE = queue
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": django_settings.REDIS_URL,
        "RECONCILE_QUEUE": queue,
        "RECONCILE_LEASE_SECONDS": "2",
        "RECONCILE_HTTP_TIMEOUT_SECONDS": "1",
        "RECONCILE_BACKOFF_BASE_SECONDS": "0",
        "RECONCILE_BACKOFF_MAX_SECONDS": "0",
        "DATABASE_CONN_MAX_AGE": "0",
    }
    workers = Workers(queue=queue, env=env, log_dir=tmp_path, started=[], queues={queue})
    yield workers
    # Every worker is told to stop before any is waited for: their warm shutdowns overlap.
    for worker in workers.started:
        worker.terminate()
    for worker in workers.started:
        worker.stop()
    for used in workers.queues:
        _forget_queue(used)
