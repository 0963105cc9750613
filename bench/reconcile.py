"""Reconciliation: receipts read one at a time vs in concurrent batches, side by side.

`python -m bench.reconcile [--full]` (also run by `python -m bench`): N
`outcome_unknown` receipts (half of them found on the platform, half proven
absent) are reconciled by W worker processes against a local platform that
answers every read after 50 ms. The two paths run interleaved in one run:

- per-receipt: `receipts_reconcile`, claim, read and settle one receipt at a
  time, each worker taking its share of the ids (what a chunk task did);
- batch: `receipts_reconcile_batch`, each worker claiming up to
  `RECONCILE_READS_IN_FLIGHT` due receipts at once and reading them
  concurrently, until nothing is due.

The bound is N x 50 ms ÷ (W x reads in flight): the time the reads alone
take when every worker keeps all its reads in flight. Every sample checks
that each receipt ended where its read says and that nothing was written to
the platform.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.actors import Actor  # noqa: E402
from accounts.services import tenant_create  # noqa: E402
from memory.models.receipts import Receipt, ReceiptState  # noqa: E402
from memory.reconcilers.http import lookup_client  # noqa: E402
from memory.services.platforms import platform_register  # noqa: E402
from memory.services.receipts import receipts_reconcile  # noqa: E402
from memory.services.reconciliation import receipts_reconcile_batch  # noqa: E402
from tests.memory.fake_platform import FakePlatform  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BEGIN, END = "<!-- bench:reconcile -->", "<!-- /bench:reconcile -->"
READ_DELAY_SECONDS = 0.05
WORKERS = 2
PER_RECEIPT, BATCH = "per-receipt", "batch"


@dataclass(frozen=True)
class Size:
    receipts: int
    samples: int


SMOKE = Size(receipts=40, samples=2)
FULL = Size(receipts=400, samples=5)


@dataclass(frozen=True)
class Measured:
    path: str
    receipts: int
    seconds: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.seconds)

    @property
    def p95(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[max(0, round(0.95 * len(ordered) + 0.5) - 1)]


@dataclass(frozen=True)
class Reconciliation:
    size: Size
    workers: int
    reads_in_flight: int
    platform_reads_in_flight: int
    per_receipt: Measured
    batch: Measured

    @property
    def in_flight(self) -> int:
        return self.workers * min(self.reads_in_flight, self.platform_reads_in_flight)

    @property
    def bound(self) -> float:
        return self.size.receipts * READ_DELAY_SECONDS / self.in_flight

    @property
    def of_bound(self) -> float:
        return self.bound / self.batch.p50

    @property
    def speedup(self) -> float:
        return self.per_receipt.p50 / self.batch.p50


def _work(path: str, database: str, ids: list[str], ready, start, done) -> None:  # type: ignore[no-untyped-def]
    """One worker process: warm up as a long-lived worker would be, then reconcile."""
    connection.settings_dict["NAME"] = database
    worker = Actor.system(f"bench reconciler {os.getpid()}")
    lookup_client()
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


def _seed(tenant, platform, fake: FakePlatform, receipts: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
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
                "absence_proof": "status_404",
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


def _sample(path: str, tenant, platform, fake: FakePlatform, receipts: int) -> float:  # type: ignore[no-untyped-def]
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
            target=_work, args=(path, database, ids[n::WORKERS], ready[n], start, done[n])
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
    while not all(event.is_set() for event in done):
        if any(not p.is_alive() and not d.is_set() for p, d in zip(workers, done, strict=True)):
            break
        time.sleep(0.002)
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


def measure(size: Size) -> Reconciliation:
    """Run both paths interleaved, after one small warm-up of each, on the current database."""
    tenant, _ = tenant_create(slug=f"bench-reconcile-{uuid.uuid4().hex[:6]}")
    fake = FakePlatform().start()
    fake.read_delay = READ_DELAY_SECONDS
    try:
        platform, _ = platform_register(
            tenant=tenant,
            actor=Actor.system("bench"),
            name="bench-platform",
            base_url=fake.url,
            allow_private=True,
        )
        for path in (PER_RECEIPT, BATCH):
            _sample(path, tenant, platform, fake, WORKERS * 2)
        seconds: dict[str, list[float]] = {PER_RECEIPT: [], BATCH: []}
        for _ in range(size.samples):
            for path in (PER_RECEIPT, BATCH):
                seconds[path].append(_sample(path, tenant, platform, fake, size.receipts))
    finally:
        fake.stop()
    return Reconciliation(
        size=size,
        workers=WORKERS,
        reads_in_flight=settings.RECONCILE_READS_IN_FLIGHT,
        platform_reads_in_flight=settings.RECONCILE_PLATFORM_READS_IN_FLIGHT,
        per_receipt=Measured(PER_RECEIPT, size.receipts, seconds[PER_RECEIPT]),
        batch=Measured(BATCH, size.receipts, seconds[BATCH]),
    )


def report(result: Reconciliation) -> str:
    r = result
    rows = [
        (
            "per-receipt (`receipts_reconcile`, one claim, read and settle at a time)",
            r.per_receipt,
        ),
        (f"batch (`receipts_reconcile_batch`, {r.reads_in_flight} reads in flight)", r.batch),
    ]
    lines = [
        BEGIN,
        "## Reconciliation: concurrent batches vs one receipt at a time",
        "",
        f"{r.size.receipts} `outcome_unknown` receipts (half found, half proven absent), "
        f"{r.workers} worker processes, a local platform answering each read in "
        f"{READ_DELAY_SECONDS * 1000:.0f} ms; the two paths interleaved, one warm-up each. "
        f"Bound: {r.size.receipts} x {READ_DELAY_SECONDS * 1000:.0f} ms ÷ {r.in_flight} reads "
        f"in flight ({r.workers} workers x {min(r.reads_in_flight, r.platform_reads_in_flight)}) "
        f"= {r.bound:.3f} s. Written by bench/reconcile.py.",
        "",
        "| path | receipts | samples | p50 s | p95 s | receipts/s (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, m in rows:
        lines.append(
            f"| {label} | {m.receipts} | {len(m.seconds)} | {m.p50:.3f} | {m.p95:.3f} | "
            f"{m.receipts / m.p50:.0f} |"
        )
    lines += [
        "",
        "| goal | measured | met |",
        "|---|---:|---|",
        f"| batch ≥ 10x the per-receipt path | {r.speedup:.1f}x | "
        f"{'yes' if r.speedup >= 10 else 'no'} |",
        f"| batch ≥ 80% of the bound | {r.of_bound:.0%} | {'yes' if r.of_bound >= 0.8 else 'no'} |",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_section(section: str) -> None:
    """Replace this benchmark's section of RESULTS.md, or append it; other sections stay."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"{SMOKE.receipts} receipts, printed only (RESULTS.md keeps the full-size run)",
    )
    args = parser.parse_args(argv)
    size = SMOKE if args.smoke else FULL
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        section = report(measure(size))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    if not args.smoke:
        write_section(section)
    sys.stdout.write(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
