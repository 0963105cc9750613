"""Set-based seeding shared by the benchmark and the tests.

Thousands of claims written with a few INSERT … SELECT statements, shaped
like what the write gate stores (full-text vector, character n-grams, an
event source each): going through the gate one claim at a time would
measure the gate, not the erasure.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from accounts.models import Tenant
from memory.claims.models import Claim, ClaimSource, Event, RecallTrace, Subject
from reviews.models import Queue, ReviewItem

# Character trigrams of each word, like memory.claims.search.ngrams does for Latin text.
_NGRAMS_SQL = (
    "ARRAY(SELECT DISTINCT substr(w, i, 3) FROM regexp_split_to_table(lower({text}), "
    "'[^a-z0-9]+') AS w, generate_series(1, greatest(length(w) - 2, 1)) AS i "
    "WHERE w <> '')::varchar[]"
)


@dataclass(frozen=True)
class Seeded:
    subject: Subject
    claims: int
    events: int
    derived: int
    traces: int
    review_items: int = 0


def seed_subject(
    *,
    tenant: Tenant,
    key: str,
    claims: int,
    marker: str,
    events: int | None = None,
    derived_subject: Subject | None = None,
    derived: int = 0,
    traces: int = 0,
    review_items: int = 0,
) -> Seeded:
    """Give `key` `claims` active claims, each citing one of `events` ledger events and
    mentioning `marker`; optionally `derived` claims about `derived_subject` built on them,
    `traces` recall traces that chose some of them, and open candidate review items for
    `review_items` of them."""
    kind, _, ref = key.partition(":")
    subject, _ = Subject.objects.get_or_create(tenant=tenant, kind=kind, ref=ref)
    events = events or max(1, claims // 10)
    claim_table = Claim._meta.db_table
    text = f"'Fact ' || g || ' about {marker}: order ' || (g * 7919 %% 100000) || ' ships'"
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {Event._meta.db_table} (id, tenant_id, subject_id, run_id, agent, kind,
                text, body, source_uri, observed_at, recorded_at, digest, sensitivity, echo_of)
            SELECT gen_random_uuid(), %s, %s, 'seed-' || g, 'bench', 'user_statement',
                'I said fact ' || g || ' about {marker}', '{{}}'::jsonb, 'chat://seed/' || g,
                now(), now(), 'sha256:' || md5(%s || g), 'normal', '{{}}'
            FROM generate_series(1, %s) AS g
            """,
            [tenant.pk, subject.pk, key, events],
        )
        cursor.execute(
            f"""
            INSERT INTO {claim_table} (id, tenant_id, subject_id, kind, predicate, scope,
                scope_key, scope_size, value, text, authority, basis, available_at, recorded_at,
                status, revision, conflicts_with, gate_decision, gate_reasons, agent,
                value_digest, search_vector, ngrams, use_count, updated_at)
            SELECT gen_random_uuid(), %s, %s, 'fact', 'seed_fact_' || g, '{{}}'::jsonb, '{{}}',
                0, to_jsonb('value ' || g), {text}, 'user_explicit', 'verified', now(), now(),
                'active', 1, '{{}}', 'accepted', '{{user_explicit_verified}}', 'bench',
                'sha256:' || md5(%s || g), to_tsvector('english', {text}),
                {_NGRAMS_SQL.format(text=text)}, 0, now()
            FROM generate_series(1, %s) AS g
            """,
            [tenant.pk, subject.pk, key, claims],
        )
        # Fresh statistics for the joins below: planned with the tables' old ones (empty,
        # in a new test database), each claim looks for its event by scanning all of them.
        cursor.execute(f"ANALYZE {Event._meta.db_table}, {claim_table}")
        cursor.execute(
            f"""
            INSERT INTO {ClaimSource._meta.db_table} (tenant_id, claim_id, event_id, uri,
                observed_at, digest, added_at)
            SELECT c.tenant_id, c.id, e.id, '', e.observed_at, e.digest, now()
            FROM {claim_table} c JOIN {Event._meta.db_table} e
              ON e.tenant_id = c.tenant_id AND e.subject_id = c.subject_id
             AND e.run_id = 'seed-' || (substr(c.predicate, 11)::int %% %s + 1)
            WHERE c.tenant_id = %s AND c.subject_id = %s
            """,
            [events, tenant.pk, subject.pk],
        )
        if derived and derived_subject is not None:
            derived_text = (
                f"'Project note ' || g || CASE WHEN g %% 2 = 0 THEN ' repeats {marker}' "
                "ELSE ' builds on it' END"
            )
            cursor.execute(
                f"""
                INSERT INTO {claim_table} (id, tenant_id, subject_id, kind, predicate, scope,
                    scope_key, scope_size, value, text, authority, basis, available_at,
                    recorded_at, status, revision, conflicts_with, gate_decision, gate_reasons,
                    agent, value_digest, search_vector, ngrams, use_count, updated_at)
                SELECT gen_random_uuid(), %s, %s, 'summary', 'seed_note_' || g, '{{}}'::jsonb,
                    '{{}}', 0, NULL, {derived_text}, 'tool_verified', 'verified', now(), now(),
                    'active', 1, '{{}}', 'accepted', '{{tool_verified}}', 'bench',
                    'sha256:' || md5('note' || g), to_tsvector('english', {derived_text}),
                    {_NGRAMS_SQL.format(text=derived_text)}, 0, now()
                FROM generate_series(1, %s) AS g
                """,
                [tenant.pk, derived_subject.pk, derived],
            )
            lineage = Claim.derived_from.through._meta.db_table
            cursor.execute(
                f"""
                INSERT INTO {lineage} (from_claim_id, to_claim_id)
                SELECT d.id, c.id FROM {claim_table} d JOIN {claim_table} c
                  ON c.tenant_id = d.tenant_id AND c.subject_id = %s
                 AND c.predicate = 'seed_fact_' || substr(d.predicate, 11)
                WHERE d.tenant_id = %s AND d.subject_id = %s
                """,
                [subject.pk, tenant.pk, derived_subject.pk],
            )
        if traces:
            cursor.execute(
                f"""
                INSERT INTO {RecallTrace._meta.db_table} (id, tenant_id, subject_id, subject_key,
                    query, filters, excluded, chosen, used_chars, duration_ms, created_at)
                SELECT gen_random_uuid(), %s, %s, %s, 'what about {marker} ' || g,
                    '{{"scope": {{}}}}'::jsonb, '{{}}'::jsonb,
                    ARRAY(SELECT id FROM {claim_table} WHERE tenant_id = %s AND subject_id = %s
                          AND predicate = 'seed_fact_' || g), 0, 1.0, now()
                FROM generate_series(1, %s) AS g
                """,
                [tenant.pk, subject.pk, key, tenant.pk, subject.pk, traces],
            )
        if review_items:
            cursor.execute(
                f"""
                INSERT INTO {ReviewItem._meta.db_table} (tenant_id, queue, target_type, target_id,
                    target_version, status, priority, subject_key, topic, agent_label,
                    reason_codes, created_at)
                SELECT c.tenant_id, 'candidates', 'claim', c.id::text, '1', 'open', 0, %s,
                    c.predicate, 'bench', '{{needs_review}}', now()
                FROM {claim_table} c
                WHERE c.tenant_id = %s AND c.subject_id = %s
                  AND substr(c.predicate, 11)::int <= %s
                """,
                [key, tenant.pk, subject.pk, review_items],
            )
    return Seeded(
        subject=subject,
        claims=claims,
        events=events,
        derived=derived,
        traces=traces,
        review_items=review_items,
    )


def seed_queue(
    *, tenant: Tenant, items: int, queue: str = Queue.CANDIDATES, start: int = 0
) -> None:
    """`items` open review items in one INSERT … SELECT, two per timestamp, priorities 0-2.

    Targets are claim ids (UUIDs) of no claim, derived from n = `start`, … so
    calls with disjoint ranges add to the same queue without hitting the
    one-open-item-per-target rule.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {ReviewItem._meta.db_table} (tenant_id, queue, target_type, target_id,
                target_version, status, priority, subject_key, topic, agent_label, reason_codes,
                created_at)
            SELECT %s, %s, 'claim', md5('seed-' || g)::uuid::text, '', 'open', g %% 3,
                'user:u' || (g %% 100),
                'seeded item ' || g, 'agent-' || (g %% 5), ARRAY['unverified_authority'],
                now() - interval '30 days' + (g / 2) * interval '1 second'
            FROM generate_series(%s, %s) AS g
            """,
            [tenant.pk, queue, start, start + items - 1],
        )
        # Fresh statistics (and, outside a transaction, a visibility map for
        # index-only scans), as a long-lived table would have.
        cursor.execute(
            f"{'ANALYZE' if connection.in_atomic_block else 'VACUUM ANALYZE'} "
            f"{ReviewItem._meta.db_table}"
        )
