"""`python -m bench` (`make bench`): erasure, set-based vs row by row; the write screen.

`python -m bench screen` (or `erasure`, `queues`, …: see DATABASE_SECTIONS and
PLAIN_SECTIONS below) runs those sections and leaves the others in
bench/RESULTS.md as they were.

Runs in a throwaway database created next to the configured one (the data it
writes cannot be deleted afterwards: the ledger and the audit log refuse
DELETE), so it never touches real data. Every figure is a ratio against a
baseline measured in the same run on the same machine:

- baseline: a naive erasure, one claim at a time (ORM load + save, one event
  redaction, one tombstone and one audit row per claim), on 1,000 claims;
- memdesk: `deletion_run` (plan, set-based erasure, tombstones, probes) on
  1,000 claims and on 10,000 claims.

The ingest section (bench/ingest.py) times `claims:batch` against
`bulk_create` of the same rows. The screen section (bench/screen.py) needs no
database: detection per attack class, false positives on benign notes, and
screening time per claim.

Results go to stdout and to bench/RESULTS.md.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Hot-memory blocks the benchmark renders and purges stay apart from the real ones.
os.environ["CACHE_KEY_PREFIX"] = "memdesk-bench"
django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.actors import Actor  # noqa: E402
from accounts.models import Tenant  # noqa: E402
from accounts.services import audit_record, tenant_create  # noqa: E402
from bench import (  # noqa: E402
    abstain,
    ingest,
    queues,
    recall,
    screen,
    screen_heldout,
    skill_discovery,
)
from bench import deletion as deletion_bench  # noqa: E402
from bench import reconcile as reconcile_bench  # noqa: E402
from common.startup import freeze_loaded_objects  # noqa: E402
from memory.claims.models import Claim, ClaimStatus, Event, Subject  # noqa: E402
from memory.privacy.models import (  # noqa: E402
    DeletionRequest,
    DeletionScope,
    DeletionStatus,
    Tombstone,
    TombstoneAction,
    TombstoneTarget,
)
from memory.privacy.services.deletion import deletion_request_create, deletion_run  # noqa: E402
from testing.seed import seed_subject  # noqa: E402

# Timed as production runs, with DEBUG off: with it on, every statement is also logged
# in the connection's query log. (`make bench` sets DEBUG=1 only so the settings load
# without production's secrets and hosts.) Static files are served as production serves
# them too: from the list WhiteNoise makes once, not looked up on every request.
settings.DEBUG = False
settings.WHITENOISE_AUTOREFRESH = False
# And with what is loaded kept off the garbage collector, as config/wsgi.py keeps it in
# the server (common/startup.py).
freeze_loaded_objects(with_urlconf=True)

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
WORKER = Actor.system("bench")
BASELINE_CLAIMS = 1_000
LARGE_CLAIMS = 10_000


@dataclass(frozen=True)
class Timing:
    label: str
    claims: int
    seconds: float
    detail: str = ""

    @property
    def ms_per_claim(self) -> float:
        return self.seconds * 1000 / self.claims


def _seed(tenant: Tenant, key: str, claims: int) -> Subject:
    project = Subject.objects.create(tenant=tenant, kind="project", ref=f"{key}-notes")
    return seed_subject(
        tenant=tenant,
        key=f"user:{key}",
        claims=claims,
        marker=f"marker{key.replace('-', '')}",
        derived_subject=project,
        derived=claims // 50,
        traces=claims // 30,
    ).subject


def naive_erase(tenant: Tenant, subject: Subject) -> Timing:
    """What erasure looks like without set-based SQL: every row loaded and saved alone."""
    deletion = DeletionRequest.objects.create(
        tenant=tenant, scope=DeletionScope.SUBJECT, subject=subject
    )
    started = time.perf_counter()
    with transaction.atomic():
        for claim in Claim.objects.filter(tenant=tenant, subject=subject).iterator():
            claim.status = ClaimStatus.ERASED
            claim.value = None
            claim.text = ""
            claim.search_vector = None
            claim.ngrams = []
            claim.updated_at = timezone.now()
            claim.save(
                update_fields=["status", "value", "text", "search_vector", "ngrams", "updated_at"]
            )
            Tombstone.objects.create(
                tenant=tenant,
                deletion=deletion,
                target_type=TombstoneTarget.CLAIM,
                target_id=claim.pk,
                action=TombstoneAction.ERASED,
                digest=claim.value_digest,
            )
            audit_record(
                tenant=tenant,
                actor=WORKER,
                verb="claim.erased",
                target_type="claim",
                target_id=claim.pk,
            )
        for event in Event.objects.filter(tenant=tenant, subject=subject).iterator():
            Event.objects.filter(pk=event.pk).update(
                text="", body={}, source_uri="", redacted_at=timezone.now()
            )
            Tombstone.objects.create(
                tenant=tenant,
                deletion=deletion,
                target_type=TombstoneTarget.EVENT,
                target_id=event.pk,
                action=TombstoneAction.REDACTED,
                digest=event.digest,
            )
    elapsed = time.perf_counter() - started
    claims = Claim.objects.filter(subject=subject, status=ClaimStatus.ERASED).count()
    return Timing("naive, row by row (erase, tombstone, audit row)", claims, elapsed)


def memdesk_erase(tenant: Tenant, subject: Subject, label: str) -> Timing:
    deletion, _ = deletion_request_create(tenant=tenant, actor=WORKER, subject=subject)
    started = time.perf_counter()
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    elapsed = time.perf_counter() - started
    if done is None or done.status != DeletionStatus.COMPLETED or not done.report["clean"]:
        raise SystemExit(f"the deletion did not complete clean: {done and done.report}")
    timings = done.report["timings_ms"]
    artifacts = done.report["artifacts"]
    detail = (
        f"propagate {timings['propagate']:.0f} ms, verify {timings['verify']:.0f} ms "
        f"({len(done.report['probes'])} probes); erased {artifacts['claims']['erased']} claims + "
        f"{artifacts['derived_claims']['erased']} derived, invalidated "
        f"{artifacts['derived_claims']['invalidated']}, redacted "
        f"{artifacts['events']['redacted']} events and "
        f"{artifacts['recall_traces']['redacted']} traces, "
        f"{artifacts['tombstones']['written']} tombstones"
    )
    return Timing(label, artifacts["claims"]["erased"], elapsed, detail)


def _environment() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
    return (
        f"PostgreSQL {server}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    )


def _report(timings: list[Timing], environment: str) -> str:
    baseline = timings[0]
    large = timings[-1]
    lines = [
        "# Benchmark results",
        "",
        f"Run `make bench` (`python -m bench`) on {timezone.now():%Y-%m-%d %H:%M} UTC; "
        f"{environment}. Written by bench/__main__.py; see bench/README.md.",
        "",
        "| erasure | claims | seconds | ms per claim | speed-up per claim vs baseline |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in timings:
        ratio = baseline.ms_per_claim / t.ms_per_claim
        lines.append(
            f"| {t.label} | {t.claims:,} | {t.seconds:.2f} | {t.ms_per_claim:.3f} | {ratio:.1f}x |"
        )
    extrapolated = baseline.ms_per_claim * large.claims / 1000
    lines += [
        "",
        f"The row-by-row baseline would need about {extrapolated:.1f} s for {large.claims:,} "
        f"claims (linear extrapolation) and does less: no lineage, no traces, no hot memory, no "
        f"probes. memdesk erased {large.claims:,} claims in {large.seconds:.2f} s, "
        f"{extrapolated / large.seconds:.1f}x faster, including verification.",
        "",
        *(f"- {t.label}: {t.detail}" for t in timings if t.detail),
        "",
    ]
    return "\n".join(lines)


@contextmanager
def _throwaway_database() -> Iterator[None]:
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def _erasure() -> str:
    tenant, _ = tenant_create(slug="bench", name="Benchmark")
    timings = [
        naive_erase(tenant, _seed(tenant, "naive-1k", BASELINE_CLAIMS)),
        memdesk_erase(tenant, _seed(tenant, "set-1k", BASELINE_CLAIMS), "memdesk deletion_run"),
        memdesk_erase(tenant, _seed(tenant, "set-10k", LARGE_CLAIMS), "memdesk deletion_run"),
    ]
    return _report(timings, _environment())


# Each `## ` section of RESULTS.md, by the name that runs it alone. The erasure
# figures are the file's preamble; the sections that write rows run in the
# throwaway database too.
DATABASE_SECTIONS: dict[str, Callable[[], str]] = {
    "deletion": lambda: deletion_bench.markdown(
        deletion_bench.measure(deletion_bench.size_from(sys.argv))
    ),
    "queues": lambda: queues.section(queues.run(items=queues.items_from_env())),
    "ingest": lambda: ingest.section(ingest.run(ingest.size_from(sys.argv))),
}
# Sections that need no database, or make their own.
PLAIN_SECTIONS: dict[str, Callable[[], str]] = {
    "screen": screen.report,
    "screen-heldout": screen_heldout.report,
    "screen-timing": screen_heldout.timing_report,
    "screen-labels": screen_heldout.labels_report,
    "recall": recall.report,
    "recall-scale": recall.scale_report,
    "skills-discovery": skill_discovery.report,
    "abstain": abstain.report,
    "reconcile": lambda: reconcile_bench.section(sys.argv),
}


def _merge(existing: str, erasure: str | None, sections: list[str]) -> str:
    """Replace the erasure preamble and each `## ` section given; keep the rest as it was."""
    head, *rest = existing.split("\n## ")
    blocks = {block.split("\n", 1)[0]: "## " + block for block in rest}
    for section in sections:
        blocks[section.split("\n", 1)[0].removeprefix("## ")] = section
    parts = [(erasure or head).rstrip("\n"), *(b.rstrip("\n") for b in blocks.values())]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    known = {"erasure", *DATABASE_SECTIONS, *PLAIN_SECTIONS}
    # Flags such as --smoke are read by the sections themselves.
    chosen = {arg for arg in argv if not arg.startswith("--")} or known
    if chosen - known:
        unknown = sorted(chosen - known)
        raise SystemExit(f"unknown section(s) {unknown}; choose from {sorted(known)}")
    erasure = None
    sections = []
    if chosen & {"erasure", *DATABASE_SECTIONS}:
        with _throwaway_database():
            if "erasure" in chosen:
                erasure = _erasure()
            sections += [run() for name, run in DATABASE_SECTIONS.items() if name in chosen]
    sections += [run() for name, run in PLAIN_SECTIONS.items() if name in chosen]
    existing = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    report = _merge(existing, erasure, sections)
    RESULTS.write_text(report)
    sys.stdout.write(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
