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
from accounts.models import AuditEvent, Tenant
from common.models import IdempotencyRecord
from memory.claims.models import Claim, ClaimSource, Event, RecallTrace, Subject
from memory.privacy.models import DataExport, DeletionRequest, ExportStatus
from memory.privacy.selectors.probes import deletion_probes
from memory.privacy.selectors.probes_everywhere import content_tables
from memory.privacy.services.consolidation import consolidation_run
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.privacy.services.exports import export_run
from memory.receipts.models import Checkpoint, Receipt, ReceiptTransition
from reviews.models import Decision, ReviewItem
from tests.dump import tables_containing
from tests.memory.helpers import recall
from tests.memory.test_deletion import CANARY, plant_canary, redis_values_containing
from tests.memory.test_forget_everywhere import plant, redis_holding

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


# Every table the canary of `test_forget_everywhere.plant` reaches, the quoting ones included.
# Its own canary: a parallel process may be running the forget-everywhere test's.
PLANTED = "vobrinquastle"
QUOTING_TABLES = DATA_TABLES + [
    model._meta.db_table
    for model in (Decision, AuditEvent, Receipt, ReceiptTransition, DataExport, Checkpoint)
]


def content_snapshot() -> dict[str, dict[str, tuple]]:
    """Every text and JSON column (the generic probe's list) of the restored tables, by row."""
    snapshot: dict[str, dict[str, tuple]] = {}
    with connection.cursor() as cursor:
        for table in content_tables():
            if table.name not in QUOTING_TABLES:
                continue
            cursor.execute(
                f"SELECT {table.pk}::text, {', '.join(f'{c}::text' for c in table.columns)} "  # noqa: S608
                f"FROM {table.name}"
            )
            snapshot[table.name] = {row[0]: row[1:] for row in cursor.fetchall()}
    return snapshot


@pytest.mark.parametrize("what", ["one_memory", "everything"])
def test_after_a_restore_reapplying_tombstones_scrubs_the_quoted_words_again(
    what, agent, acme, alice, editor, session_api
):
    """The deletion replaced the words in an editor's note, an invalidation reason, a
    receipt, a checkpoint's task key, an `Idempotency-Key` and a project's minutes; a
    restore brings them back with the erased rows; re-applying the tombstones leaves every
    text and JSON column as the deletion did."""
    ids = plant(agent, session_api(editor), canary=PLANTED)
    # A stored "download my data" file holds her words too.
    user = session_api(alice)
    export_id = user.post("/api/v1/me/exports").json()["id"]
    assert export_run(export_id=export_id).status == ExportStatus.READY
    assert PLANTED in DataExport.objects.get(pk=export_id).content
    with connection.cursor() as cursor:
        for table in QUOTING_TABLES:
            cursor.execute(f'CREATE TEMP TABLE "backup_{table}" AS SELECT * FROM "{table}"')  # noqa: S608
    if what == "one_memory":
        accepted = user.delete(f"/api/v1/me/memories/{ids['claim']}")
    else:
        accepted = user.delete("/api/v1/me/memories")
    done = deletion_run(deletion_id=accepted.json()["deletion"], worker=WORKER)
    assert done is not None and done.report["clean"], done.report["probes"]
    assert done.report["artifacts"]["quoted_elsewhere"]["rows_scrubbed"] >= 4
    assert tables_containing(PLANTED) == {}
    after_deletion = content_snapshot()

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        for table in QUOTING_TABLES:
            cursor.execute(f'DELETE FROM "{table}"')  # noqa: S608
            cursor.execute(f'INSERT INTO "{table}" SELECT * FROM "backup_{table}"')  # noqa: S608
        cursor.execute("SET LOCAL session_replication_role = origin")
    restored = tables_containing(PLANTED)
    for table in (
        "reviews_decision",
        "accounts_auditevent",
        "memory_receipt",
        "memory_event",
        "memory_dataexport",
        "memory_checkpoint",
        "common_idempotencyrecord",
    ):
        assert table in restored, restored
    out = StringIO()

    call_command("reapply_tombstones", "--tenant", "acme", stdout=out)

    counts = json.loads(out.getvalue())
    assert counts["exports_erased"] == 1
    assert DataExport.objects.get(pk=export_id).status == ExportStatus.ERASED
    assert (
        counts["quoted_words_scrubbed"]
        == done.report["artifacts"]["quoted_elsewhere"]["rows_scrubbed"]
    )
    assert tables_containing(PLANTED) == {}
    assert redis_holding(PLANTED) == []
    # The rows the backup held read exactly as the deletion left them (the markers are
    # keyed digests of the same strings); rows written after the backup are gone with it.
    after_reapply = content_snapshot()
    for table, rows in after_reapply.items():
        kept = {pk: after_deletion[table][pk] for pk in rows if pk in after_deletion[table]}
        assert {pk: rows[pk] for pk in kept} == kept, table
    minutes = Event.objects.get(subject__kind="project", subject__ref="shed")
    assert minutes.text == "Minutes: Alice's [erased] stays here"
    probes = deletion_probes(tenant=acme, deletion=done, terms=[PLANTED])
    assert [p["name"] for p in probes if not p["clean"]] == []
    # Nothing is left to do a second time.
    again = StringIO()
    call_command("reapply_tombstones", "--tenant", "acme", stdout=again)
    assert json.loads(again.getvalue())["changed"] == 0
