"""Reconciliation: receipts read one at a time vs in concurrent batches, side by side.

`python -m bench.reconcile [--smoke]` (also run by `python -m bench`): N
`outcome_unknown` receipts (half of them found on the platform, half proven
absent) are reconciled by W worker processes against a local platform that
answers every read after 50 ms. The paths run interleaved in one run:

- per-receipt: `receipts_reconcile`, claim, read and settle one receipt at a
  time, each worker taking its share of the ids (what a chunk task did);
- batch: `receipts_reconcile_batch`, what the Celery task runs now, each
  worker claiming due receipts in one statement per batch and keeping up to
  `RECONCILE_READS_IN_FLIGHT` reads in flight, until nothing is due; measured
  at each setting in IN_FLIGHT.

The bound is N x 50 ms / (W x reads in flight per worker): the time the reads
alone take when every worker keeps all its reads in flight. Every sample
checks that each receipt ended where its read says and that nothing was
written to the platform.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.actors import Actor  # noqa: E402
from accounts.models import Tenant  # noqa: E402
from accounts.services import tenant_create  # noqa: E402
from memory.receipts.models.platforms import AbsenceProof, Platform  # noqa: E402
from memory.receipts.models.receipts import Receipt, ReceiptState  # noqa: E402
from memory.receipts.reconcilers.http import lookup_clients  # noqa: E402
from memory.receipts.reconcilers.urls import parse_platform_url  # noqa: E402
from memory.receipts.services.platforms import platform_register  # noqa: E402
from memory.receipts.services.receipt_reads import receipts_reconcile  # noqa: E402
from memory.receipts.services.reconciliation import receipts_reconcile_batch  # noqa: E402
from testing.fake_platform import FakePlatform  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
READ_DELAY_SECONDS = 0.05
WORKERS = 2
PER_RECEIPT, BATCH = "per-receipt", "batch"


@dataclass(frozen=True)
class Size:
    receipts: int
    samples: int
    # The smoke run in the suite checks that the paths run and settle alike, not their
    # speed: it skips the warm-up round.
    warm_up: bool = True


# Reads in flight per worker for the batch path: the default setting, half and twice it, and
# 10, where the two goals (10x the per-receipt path, 80% of the bound) come closest together.
IN_FLIGHT = (6, 10, 12, 24)
SMOKE = Size(receipts=40, samples=2)
FULL = Size(receipts=400, samples=5)


@dataclass(frozen=True)
class Measured:
    path: str
    # Reads each worker keeps in flight (1 for the per-receipt path).
    reads_in_flight: int
    receipts: int
    seconds: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p95(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[max(0, round(0.95 * len(ordered) + 0.5) - 1)]

    @property
    def bound(self) -> float:
        return self.receipts * READ_DELAY_SECONDS / (WORKERS * self.reads_in_flight)

    @property
    def of_bound(self) -> float:
        return self.bound / self.p50


@dataclass(frozen=True)
class Reconciliation:
    size: Size
    per_receipt: Measured
    batches: list[Measured]

    def speedup(self, batch: Measured) -> float:
        return self.per_receipt.p50 / batch.p50


def _work(
    path: str,
    reads_in_flight: int,
    database: str,
    platform_url: str,
    ids: list[str],
    ready: Event,
    start: Event,
    done: Event,
) -> None:
    """One worker process: warm up as a long-lived worker would be, then reconcile."""
    connection.settings_dict["NAME"] = database
    # A production worker runs with DEBUG off (no query log kept per statement).
    settings.DEBUG = False
    settings.RECONCILE_READS_IN_FLIGHT = reads_in_flight
    settings.RECONCILE_PLATFORM_READS_IN_FLIGHT = reads_in_flight
    worker = Actor.system(f"bench reconciler {os.getpid()}")
    # A long-lived worker has read from the platform before: its client for the host is
    # built and the HTTP stack's modules are loaded (about 0.1 s, once per process).
    base = parse_platform_url(platform_url)
    lookup_clients().for_host(base.scheme, base.host_header).get(platform_url)
    connection.ensure_connection()
    ready.set()
    start.wait()
    if path == PER_RECEIPT:
        receipts_reconcile(receipt_ids=ids, worker=worker)
    else:
        while receipts_reconcile_batch(worker=worker).claimed:
            pass
    # Done counts here: closing the connection pool and the interpreter is not work.
    done.set()
    connections.close_all()


def _seed(tenant: Tenant, platform: Platform, fake: FakePlatform, receipts: int) -> dict[str, str]:
    """`receipts` receipts in outcome_unknown, written directly: the bench measures reads."""
    now = timezone.now()
    expected: dict[str, str] = {}
    rows = []
    for n in range(receipts):
        key = f"bench-{uuid.uuid4().hex}"
        if n % 2 == 0:
            fake.seed(key)
        receipt = Receipt(
            tenant=tenant,
            operation="articles.create",
            target=f"{fake.url}/articles",
            intent={"n": n},
            intent_fingerprint="sha256:bench",
            idempotency_key=key,
            reconciler={
                "adapter": "http",
                "lookup_url": fake.lookup_url(),
                "external_id_field": "id",
                "platform": platform.name,
            },
            platform=platform,
            agent="bench",
            state=ReceiptState.OUTCOME_UNKNOWN,
            submitted_at=now,
            next_reconcile_at=now,
            created_at=now,
            updated_at=now,
        )
        rows.append(receipt)
        expected[str(receipt.pk)] = (
            ReceiptState.SUCCEEDED if n % 2 == 0 else ReceiptState.SAFE_TO_RETRY
        )
    Receipt.objects.bulk_create(rows)
    return expected


def _sample(
    path: str,
    reads_in_flight: int,
    tenant: Tenant,
    platform: Platform,
    fake: FakePlatform,
    receipts: int,
) -> float:
    expected = _seed(tenant, platform, fake, receipts)
    ids = list(expected)
    posts_before = fake.writes_attempted
    # Fresh interpreters: a forked child would share the parent's database
    # connections (and their pool); spawning costs a second, outside the timing.
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    ready = [context.Event() for _ in range(WORKERS)]
    done = [context.Event() for _ in range(WORKERS)]
    database = connection.settings_dict["NAME"]
    workers = [
        context.Process(
            target=_work,
            args=(
                path,
                reads_in_flight,
                database,
                fake.url,
                ids[n::WORKERS],
                ready[n],
                start,
                done[n],
            ),
        )
        for n in range(WORKERS)
    ]
    for process in workers:
        process.start()
    for event in ready:
        if not event.wait(timeout=120):
            raise SystemExit(f"a {path} worker did not start")
    started = time.perf_counter()
    start.set()
    # Waiting on the events (not polling) keeps this process, which also serves the
    # platform, off the CPUs the workers need; a worker that died ends the wait.
    for process, event in zip(workers, done, strict=True):
        while not event.wait(timeout=0.05) and process.is_alive():
            pass
    elapsed = time.perf_counter() - started
    for process in workers:
        process.join()
    if any(process.exitcode for process in workers):
        raise SystemExit(f"a {path} worker failed")
    states = dict(Receipt.objects.filter(pk__in=ids).values_list("pk", "state"))
    wrong = [pk for pk, state in expected.items() if states[uuid.UUID(pk)] != state]
    if wrong or fake.writes_attempted != posts_before:
        raise SystemExit(f"{path}: {len(wrong)} receipts ended in the wrong state")
    return elapsed


def measure(size: Size, in_flight: tuple[int, ...] = IN_FLIGHT) -> Reconciliation:
    """Run the paths interleaved, after one small warm-up of each, on the current database."""
    tenant, _ = tenant_create(slug=f"bench-reconcile-{uuid.uuid4().hex[:6]}")
    fake = FakePlatform().start()
    fake.read_delay = READ_DELAY_SECONDS
    paths = [(PER_RECEIPT, 1), *((BATCH, n) for n in in_flight)]
    try:
        platform, _ = platform_register(
            tenant=tenant,
            actor=Actor.system("bench"),
            name="bench-platform",
            base_url=fake.url,
            allow_private=True,
            absence_proof=AbsenceProof.STATUS_LOOKUP,
            lookup_template="articles?key={idempotency_key}",
            key_retention_seconds=86400,
        )
        for path, reads in paths if size.warm_up else ():
            _sample(path, reads, tenant, platform, fake, WORKERS * 2)
        seconds: dict[tuple[str, int], list[float]] = {key: [] for key in paths}
        for _ in range(size.samples):
            for path, reads in paths:
                seconds[path, reads].append(
                    _sample(path, reads, tenant, platform, fake, size.receipts)
                )
    finally:
        fake.stop()
    measured = [Measured(path, reads, size.receipts, seconds[path, reads]) for path, reads in paths]
    return Reconciliation(size=size, per_receipt=measured[0], batches=measured[1:])


def report(result: Reconciliation) -> str:
    r = result
    delay = f"{READ_DELAY_SECONDS * 1000:.0f} ms"
    lines = [
        "## Reconciliation: concurrent batches vs one receipt at a time",
        "",
        f"{r.size.receipts} `outcome_unknown` receipts (half found, half proven absent), "
        f"{WORKERS} worker processes, a local platform answering each read in {delay}; the "
        "paths interleaved sample by sample after one warm-up each. Bound: receipts x "
        f"{delay} ÷ ({WORKERS} workers x reads in flight per worker). Load average at the end: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs. Written by bench/reconcile.py.",
        "",
        "The platform is the tests' fake platform in the bench's own process: a threaded "
        "HTTP/1.1 server with keep-alive that answers every read concurrently (its 50 ms are "
        "a sleep), so it does not serialise the reads; its CPU (under 1 ms a read) comes out "
        "of the same CPUs as the workers'. Where the rest of the time goes: bench/README.md.",
        "",
        "| path | reads in flight per worker | receipts | samples | p50 s | p95 s | receipts/s "
        "(p50) | bound s | share of the bound | vs per-receipt |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in (r.per_receipt, *r.batches):
        label = (
            "per-receipt (`receipts_reconcile`: claim, read, settle one at a time)"
            if m.path == PER_RECEIPT
            else "batch (`receipts_reconcile_batch`)"
        )
        lines.append(
            f"| {label} | {m.reads_in_flight} | {m.receipts} | {len(m.seconds)} | {m.p50:.3f} | "
            f"{m.p95:.3f} | {m.receipts / m.p50:.0f} | {m.bound:.3f} | {m.of_bound:.1%} | "
            f"{r.speedup(m):.1f}x |"
        )
    lines += [
        "",
        "| goal | reads in flight per worker | measured | met |",
        "|---|---:|---:|---|",
    ]
    for m in r.batches:
        speedup = r.speedup(m)
        lines += [
            f"| batch ≥ 10x the per-receipt path | {m.reads_in_flight} | {speedup:.1f}x | "
            f"{'yes' if speedup >= 10 else 'no'} |",
            f"| batch ≥ 80% of the bound | {m.reads_in_flight} | {m.of_bound:.1%} | "
            f"{'yes' if m.of_bound >= 0.8 else 'no'} |",
        ]
    return "\n".join(lines) + "\n"


def section(argv: list[str]) -> str:
    """Measure at the size `argv` asks for (`--smoke` or full), in its own throwaway database."""
    size = SMOKE if "--smoke" in argv else FULL
    old_name = connection.settings_dict["NAME"]
    # Its own throwaway database, so it can run beside the test suite.
    connection.settings_dict["TEST"]["NAME"] = f"bench_reconcile_{old_name}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        return report(measure(size))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.reconcile",
        description="Print the section; `python -m bench reconcile` also writes it to RESULTS.md.",
    )
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE.receipts} receipts")
    args = parser.parse_args(argv)
    sys.stdout.write(section(["--smoke"] if args.smoke else []))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
