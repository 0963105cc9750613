"""Splitting memory into three domain apps moved code, never rows (docs/architecture.md).

The domains' models keep the `memory` label, so a database migrated before the split
migrates to today's state with every memory table's rows unchanged, and the domain
apps' models read them back.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from memory.claims.models import Claim, Event, Subject
from memory.privacy.models import Consent, DataExport, DeletionRequest, Tombstone
from memory.receipts.models import Checkpoint, Receipt

# The heads of every app before the split.
BEFORE_THE_SPLIT = [
    ("common", "0001_initial"),
    ("accounts", "0006_agent_token_owner"),
    ("reviews", "0008_transition_guards"),
    ("memory", "0027_platform_absence_proof"),
    ("skills", "0007_skill_version_approvals"),
]
TABLES = [
    model._meta.db_table
    for model in (
        Subject,
        Event,
        Claim,
        Receipt,
        Checkpoint,
        DeletionRequest,
        Tombstone,
        Consent,
        DataExport,
    )
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    targets = targets or executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def table_columns() -> dict[str, list[str]]:
    """Each table's columns now: later migrations may add columns, never change these."""
    with connection.cursor() as cursor:
        return {
            table: [column.name for column in connection.introspection.get_table_description(
                cursor, table
            )]
            for table in TABLES
        }  # fmt: skip


def table_digests(columns: dict[str, list[str]]) -> dict[str, tuple[int, str]]:
    found = {}
    with connection.cursor() as cursor:
        for table in TABLES:
            row = ", ".join(f't."{name}"' for name in columns[table])
            cursor.execute(
                f"SELECT count(*), md5(string_agg(({row})::text, '' ORDER BY id)) FROM {table} t"  # noqa: S608
            )
            found[table] = cursor.fetchone()
    return found


def populate(old) -> None:
    now = timezone.now()
    tenant = old.get_model("accounts", "Tenant").objects.create(slug="acme", name="Acme")
    person = old.get_model("auth", "User").objects.create(username="alice")
    subject = old.get_model("memory", "Subject").objects.create(
        tenant=tenant, kind="user", ref="alice"
    )
    old.get_model("memory", "Event").objects.create(
        tenant=tenant, subject=subject, kind="message", observed_at=now, digest="d" * 64
    )
    claim = old.get_model("memory", "Claim").objects.create(
        tenant=tenant,
        subject=subject,
        kind="preference",
        predicate="likes",
        value="tea",
        authority="user_stated",
        basis="observed",
        available_at=now,
        status="active",
        gate_decision="accepted",
    )
    old.get_model("memory", "Receipt").objects.create(
        tenant=tenant,
        operation="blog.publish",
        target="post-1",
        intent_fingerprint="f" * 64,
        idempotency_key="publish-post-1",
    )
    # With its expiry: one saved without it is given one later (test_checkpoint_expiry.py).
    old.get_model("memory", "Checkpoint").objects.create(
        tenant=tenant,
        task_key="weekly-post",
        input_fingerprint="i" * 64,
        stage="drafted",
        expires_at=now + timedelta(days=1),
    )
    deletion = old.get_model("memory", "DeletionRequest").objects.create(
        tenant=tenant, scope="claim", subject=subject, claim=claim
    )
    old.get_model("memory", "Tombstone").objects.create(
        tenant=tenant, deletion=deletion, target_type="claim", target_id=claim.pk, action="erased"
    )
    old.get_model("memory", "Consent").objects.create(
        tenant=tenant, subject=subject, sensitivity="health", granted=True
    )
    old.get_model("memory", "DataExport").objects.create(
        tenant=tenant, requested_by=person, expires_at=now + timedelta(days=1)
    )


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_split_keeps_every_memory_row():
    try:
        populate(migrate(BEFORE_THE_SPLIT))
        columns = table_columns()
        before = table_digests(columns)
        migrate(None)
        assert table_digests(columns) == before
        assert all(count == 1 for count, _ in before.values())
        claim = Claim.objects.select_related("subject").get()
        assert (claim.subject.ref, claim.value, claim.status) == ("alice", "tea", "active")
        assert DeletionRequest.objects.get().claim_id == claim.pk
        assert Receipt.objects.get().idempotency_key == "publish-post-1"
        assert Consent.objects.get().granted
        assert ContentType.objects.get_for_model(Claim).app_label == "memory"
    finally:
        migrate(None)
