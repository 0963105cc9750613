"""Deleting everything about a subject: memdesk's path vs a hand-written set-based floor.

Each repetition seeds two fresh subjects of the same shape in a fresh tenant
(claims, one event per ten claims, derived project notes, recall traces and
open review items) and deletes one each way, alternating which goes first:

- memdesk: `deletion_request_create` then `deletion_run`, what the API and the
  lifecycle worker call, timed from the request to `completed` (plan, erasure,
  tombstones, hot-memory purge, every probe and the report);
- floor: the same rows changed by hand-written SQL, one statement per table
  keyed on the subject, in one transaction: claims and the notes derived from
  them erased, uri sources deleted, events and traces redacted, review items
  cancelled, tombstones inserted. No planning, no audit, no probes: the least
  any erasure of these rows costs. (Rows are wiped, not deleted: the ledger
  and the audit log refuse DELETE, and tombstones must point at something.)

`make bench` runs it at full size with the others (`python -m bench --smoke`
at the smoke size); `tests/memory/test_deletion_bench.py` runs the smoke size.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from django.db import connection, transaction

from accounts.actors import Actor
from accounts.models import Tenant
from accounts.services import tenant_create
from memory.claims.models import Claim, ClaimSource, Event, RecallTrace, Subject
from memory.privacy.models import DeletionRequest, DeletionScope, DeletionStatus, Tombstone
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from reviews.models import ReviewItem
from testing.seed import Seeded, seed_subject

WORKER = Actor.system("bench")
GOAL_RATIO = 3.0
# Review items per claim, as in the measured workload (1,680 for 10,000 claims).
REVIEW_ITEMS_PER_CLAIM = 0.168


@dataclass(frozen=True)
class Size:
    name: str
    claims: int
    repetitions: int


SMOKE = Size("smoke", claims=300, repetitions=2)
FULL = Size("full", claims=10_000, repetitions=7)


@dataclass
class Section:
    size: Size
    memdesk: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    detail: str = ""
    # memdesk's own split of each sample: (propagate, verify) milliseconds.
    phases: list[tuple[float, float]] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return p(self.memdesk, 50) / p(self.floor, 50)


def p(samples: list[float], percentile: int) -> float:
    """Nearest-rank percentile (with few samples p95 is the slowest)."""
    ordered = sorted(samples)
    rank = max(1, -(-percentile * len(ordered) // 100))
    return ordered[rank - 1]


def _seed(tenant: Tenant, key: str, claims: int) -> tuple[Seeded, Subject]:
    project = Subject.objects.create(tenant=tenant, kind="project", ref=f"{key}-notes")
    seeded = seed_subject(
        tenant=tenant,
        key=f"user:{key}",
        claims=claims,
        marker=f"marker{key.replace('-', '')}",
        derived_subject=project,
        derived=claims // 50,
        traces=claims // 30,
        review_items=round(claims * REVIEW_ITEMS_PER_CLAIM),
    )
    return seeded, project


def memdesk_delete(tenant: Tenant, subject: Subject) -> tuple[float, DeletionRequest]:
    started = time.perf_counter()
    deletion, _ = deletion_request_create(tenant=tenant, actor=WORKER, subject=subject)
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    elapsed = time.perf_counter() - started
    if done is None or done.status != DeletionStatus.COMPLETED or not done.report["clean"]:
        raise SystemExit(f"the deletion did not complete clean: {done and done.report}")
    return elapsed, done


_FLOOR_SQL = [
    # Claims of the subject, then the notes derived from them.
    f"""UPDATE {Claim._meta.db_table} SET status = 'erased', value = NULL, text = '',
        search_vector = NULL, ngrams = '{{}}', updated_at = now()
        WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s AND status <> 'erased'""",
    f"""UPDATE {Claim._meta.db_table} SET status = 'erased', value = NULL, text = '',
        search_vector = NULL, ngrams = '{{}}', updated_at = now()
        WHERE tenant_id = %(tenant)s AND status <> 'erased' AND id IN (
            SELECT l.from_claim_id FROM {Claim.derived_from.through._meta.db_table} l
            JOIN {Claim._meta.db_table} c ON c.id = l.to_claim_id
            WHERE c.tenant_id = %(tenant)s AND c.subject_id = %(subject)s)""",
    f"""DELETE FROM {ClaimSource._meta.db_table} WHERE tenant_id = %(tenant)s
        AND event_id IS NULL AND claim_id IN (SELECT id FROM {Claim._meta.db_table}
            WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s)""",
    f"""UPDATE {Event._meta.db_table} SET text = '', body = '{{}}'::jsonb, source_uri = '',
        redacted_at = now()
        WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s AND redacted_at IS NULL""",
    f"""UPDATE {RecallTrace._meta.db_table} SET query = '', filters = '{{}}'::jsonb,
        redacted_at = now()
        WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s AND redacted_at IS NULL""",
    f"""UPDATE {ReviewItem._meta.db_table} SET status = 'cancelled', lease_expires_at = NULL,
        claimed_by_id = NULL
        WHERE tenant_id = %(tenant)s AND target_type = 'claim' AND status IN ('open', 'claimed')
          AND target_id = ANY(ARRAY(SELECT id::text FROM {Claim._meta.db_table}
            WHERE tenant_id = %(tenant)s AND subject_id IN (%(subject)s, %(project)s)))""",
    f"""INSERT INTO {Tombstone._meta.db_table} (tenant_id, deletion_id, target_type, target_id,
            action, digest, created_at)
        SELECT tenant_id, %(deletion)s, 'claim', id, 'erased', value_digest, now()
        FROM {Claim._meta.db_table}
        WHERE tenant_id = %(tenant)s AND subject_id IN (%(subject)s, %(project)s)
        UNION ALL
        SELECT tenant_id, %(deletion)s, 'event', id, 'redacted', digest, now()
        FROM {Event._meta.db_table} WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s
        UNION ALL
        SELECT tenant_id, %(deletion)s, 'recall_trace', id, 'redacted', '', now()
        FROM {RecallTrace._meta.db_table}
        WHERE tenant_id = %(tenant)s AND subject_id = %(subject)s""",
]


_ANALYZE = "ANALYZE " + ", ".join(
    model._meta.db_table
    for model in (Claim, Claim.derived_from.through, ClaimSource, Event, RecallTrace, ReviewItem)
)


def _settle() -> None:
    """Do what autovacuum does on a live database after a bulk insert: gather statistics
    and move the GIN indexes' pending entries into the index proper. Neither path should
    pay for a plan built blind or scan thousands of pending entries per lookup."""
    with connection.cursor() as cursor:
        cursor.execute(_ANALYZE)
        cursor.execute(
            "SELECT gin_clean_pending_list(indexrelid::regclass) FROM pg_index "
            "JOIN pg_class i ON i.oid = indexrelid JOIN pg_am a ON a.oid = i.relam "
            "WHERE a.amname = 'gin' AND indrelid = %s::regclass",
            [Claim._meta.db_table],
        )


def floor_delete(
    tenant: Tenant, subject: Subject, project: Subject
) -> tuple[float, dict[str, int]]:
    # Tombstones need a request to belong to; it is written before the clock starts.
    deletion = DeletionRequest.objects.create(
        id=uuid.uuid4(),
        tenant=tenant,
        scope=DeletionScope.SUBJECT,
        subject=subject,
        status=DeletionStatus.COMPLETED,
    )
    params: dict[str, int | uuid.UUID] = {
        "tenant": tenant.pk,
        "subject": subject.pk,
        "project": project.pk,
        "deletion": deletion.pk,
    }
    counts = []
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        for sql in _FLOOR_SQL:
            cursor.execute(sql, params)
            counts.append(cursor.rowcount)
    elapsed = time.perf_counter() - started
    names = ["claims", "derived", "uri_sources", "events", "traces", "review_items", "tombstones"]
    return elapsed, dict(zip(names, counts, strict=True))


def measure(size: Size) -> Section:
    """Interleaved repetitions on fresh data, after one small warm-up of each path."""
    section = Section(size)
    for repetition in range(-1, size.repetitions):
        warm_up = repetition < 0
        claims = min(size.claims, SMOKE.claims) if warm_up else size.claims
        tenant, _ = tenant_create(slug=f"bench-del-{uuid.uuid4().hex[:12]}", name="Bench")
        ours, _ = _seed(tenant, f"ours-{repetition + 1}", claims)
        theirs, project = _seed(tenant, f"floor-{repetition + 1}", claims)
        _settle()
        runs = ["memdesk", "floor"] if repetition % 2 == 0 else ["floor", "memdesk"]
        for which in runs:
            if which == "memdesk":
                seconds, done = memdesk_delete(tenant, ours.subject)
                artifacts = done.report["artifacts"]
                if not warm_up:
                    section.memdesk.append(seconds)
                    timings = done.report["timings_ms"]
                    section.phases.append((timings["propagate"], timings["verify"]))
                    section.detail = (
                        f"erased {artifacts['claims']['erased']:,} claims + "
                        f"{artifacts['derived_claims']['erased']:,} derived, redacted "
                        f"{artifacts['events']['redacted']:,} events and "
                        f"{artifacts['recall_traces']['redacted']:,} traces, cancelled "
                        f"{artifacts['review_items']['cancelled']:,} review items, wrote "
                        f"{artifacts['tombstones']['written']:,} tombstones, "
                        f"{len(done.report['probes'])} probes clean"
                    )
            else:
                seconds, rows = floor_delete(tenant, theirs.subject, project)
                if not warm_up:
                    section.floor.append(seconds)
                    section.rows = rows
    return section


def markdown(section: Section) -> str:
    verdict = "meets" if section.ratio <= GOAL_RATIO else "misses"
    memdesk, floor = section.memdesk, section.floor
    rows = ", ".join(f"{name} {count:,}" for name, count in section.rows.items())
    return "\n".join(
        [
            "## Deletion: one subject through memdesk vs the set-based SQL floor",
            "",
            f"{section.size.claims:,} claims per subject ({section.size.name} size), "
            f"{len(memdesk)} interleaved repetitions on freshly seeded data after one warm-up; "
            "written by bench/deletion.py.",
            "",
            "| path | samples | p50 s | p95 s | ratio vs floor (p50) | goal |",
            "|---|---:|---:|---:|---:|---|",
            f"| memdesk: request → `completed` (plan, erasure, probes, report) | {len(memdesk)} "
            f"| {p(memdesk, 50):.3f} | {p(memdesk, 95):.3f} | {section.ratio:.1f}x "
            f"| ≤ {GOAL_RATIO:.0f}x: {verdict} |",
            f"| floor: hand-written set-based SQL, one statement per table | {len(floor)} "
            f"| {p(floor, 50):.3f} | {p(floor, 95):.3f} | 1.0x | |",
            "",
            f"- memdesk: {section.detail}; p50 of its phases: propagate "
            f"{p([a for a, _ in section.phases], 50):.0f} ms, verify (probes) "
            f"{p([b for _, b in section.phases], 50):.0f} ms.",
            f"- floor rows: {rows}.",
            "",
        ]
    )


def size_from(argv: list[str]) -> Size:
    return SMOKE if "--smoke" in argv else FULL
