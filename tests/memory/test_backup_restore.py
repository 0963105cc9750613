"""A backup restored from before a deletion brings the content back; tombstones erase it again.

The restore is done the way a DBA restores a dump into live tables: with
`session_replication_role = replica`, so the ledger's append-only triggers and
the foreign-key triggers stay out of the way, exactly as `pg_restore
--disable-triggers` does. The tombstone ledger and the deletion requests are
kept: they hold ids and digests only, and are what makes the deletion
reapplicable.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from accounts.actors import Actor
from accounts.models import Tenant
from common.models import IdempotencyRecord
from memory.models import Claim, ClaimSource, DeletionRequest, Event, RecallTrace, Subject
from memory.selectors.probes import deletion_probes
from memory.services.consolidation import consolidation_run
from memory.services.deletion import deletion_request_create, deletion_run
from reviews.models import ReviewItem
from tests.dump import tables_containing
from tests.memory.helpers import recall
from tests.memory.test_deletion import CANARY, plant_canary, redis_values_containing

pytestmark = pytest.mark.django_db

WORKER = Actor.system("test lifecycle worker")
DATA_TABLES = [
    model._meta.db_table
    for model in (Event, Claim, ClaimSource, RecallTrace, IdempotencyRecord, ReviewItem)
] + [Claim.derived_from.through._meta.db_table]


def back_up() -> None:
    with connection.cursor() as cursor:
        for table in DATA_TABLES:
            cursor.execute(f'CREATE TEMP TABLE "backup_{table}" AS SELECT * FROM "{table}"')  # noqa: S608


def restore() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        for table in DATA_TABLES:
            cursor.execute(f'DELETE FROM "{table}"')  # noqa: S608
            cursor.execute(f'INSERT INTO "{table}" SELECT * FROM "backup_{table}"')  # noqa: S608
        cursor.execute("SET LOCAL session_replication_role = origin")


def forget(tenant: Tenant, claim_id: str) -> DeletionRequest:
    subject = Subject.objects.get(tenant=tenant, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=tenant, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim_id)
    )
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    assert done is not None
    assert done.report["clean"], done.report["probes"]
    return done


def assert_forgotten(agent, acme, deletion) -> None:
    probes = deletion_probes(tenant=acme, deletion=deletion, terms=[CANARY])
    assert [p for p in probes if not p["clean"]] == []
    assert tables_containing(CANARY) == {}
    assert redis_values_containing(CANARY) == []
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory?budget_chars=4000").json()
    assert CANARY not in hot["text"]


def test_reapply_tombstones_after_restoring_a_backup_leaves_the_probes_clean(agent, acme):
    ids = plant_canary(agent)
    back_up()
    deletion = forget(acme, ids["claim"])

    restore()
    # The restore really brought the content back, into recall and hot memory too.
    assert set(tables_containing(CANARY)) >= {"memory_claim", "memory_event"}
    assert recall(agent, query=CANARY, include_stale=True)["items"]
    assert CANARY in agent.get("/api/v1/subjects/user:alice/hot-memory").json()["text"]
    out = StringIO()

    call_command("reapply_tombstones", stdout=out)

    (line,) = out.getvalue().splitlines()
    counts = json.loads(line)
    assert counts["claims_erased"] == 2 and counts["claims_invalidated"] == 1
    # The restored recall and hot-memory traces, and the two a recall and a hot-memory
    # read wrote while the ghost was back.
    assert counts["events_redacted"] == 1 and counts["recall_traces_redacted"] == 4
    assert counts["hot_memory_keys_purged"] >= 1
    assert_forgotten(agent, acme, deletion)
    assert Claim.objects.get(pk=ids["other"]).status == "active"

    again = StringIO()
    call_command("reapply_tombstones", "--tenant", "acme", stdout=again)
    assert json.loads(again.getvalue())["changed"] == 0


def test_consolidation_repairs_a_restore_nobody_reapplied(agent, acme):
    ids = plant_canary(agent)
    back_up()
    deletion = forget(acme, ids["claim"])
    restore()

    run = consolidation_run(tenant=acme)

    assert run.changes["counts"]["tombstones_enforced"] >= 5
    assert_forgotten(agent, acme, deletion)
