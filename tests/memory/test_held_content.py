"""Erasure and the probes read one definition of "this row still holds content".

For every table erasure writes, the shared condition must match none of the
rows a deletion reached once it ran, must match them again when a restored
backup brings the content back, and the table's probe must say so in both
cases; re-erasing from the tombstones must bring the count back to zero.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.models import Claim, Subject
from memory.privacy.held_content import HELD_CONTENT, HeldContent
from memory.privacy.models import DeletionRequest, Tombstone
from memory.privacy.selectors.probes import deletion_probes
from memory.privacy.services import erasure
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.privacy.services.tombstones import tombstones_reapply
from tests.memory.helpers import recall, submit
from tests.memory.test_backup_restore import back_up, restore

pytestmark = pytest.mark.django_db

WORKER = Actor.system("test lifecycle worker")
WORD = "marmosetquill4417"


def still_held(held: HeldContent, deletion: DeletionRequest) -> int:
    """Rows of the table the deletion's tombstones name that match the shared condition,
    counted here from the registry alone (not through the probe's own query)."""
    reached = Tombstone.objects.filter(tenant=deletion.tenant, deletion=deletion)
    ids = [
        str(target_id)
        for target_type, action, target_id in reached.values_list(
            "target_type", "action", "target_id"
        )
        if (target_type, action) in held.reached_by
    ]
    key = held.key if held.key_is_text else f"{held.key}::text"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM {held.table} WHERE tenant_id = %s "  # noqa: S608
            f"AND {key} = ANY(%s) AND {held.sql()}",
            [deletion.tenant_id, ids],
        )
        return cursor.fetchone()[0]


def probe_verdicts(deletion: DeletionRequest) -> dict[str, bool]:
    probes = deletion_probes(tenant=deletion.tenant, deletion=deletion, terms=[WORD])
    return {probe["name"]: probe["clean"] for probe in probes}


def plant(agent) -> str:
    """A claim holding the word in every table erasure writes: its text and value, a uri
    source, the user's statement behind it (with a stored idempotent reply), a recall
    trace that asked for it and the review item whose topic is its predicate."""
    event = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": "user_statement",
            "text": f"My bike lock word is {WORD}",
            "observed_at": timezone.now().isoformat(),
            "source_uri": f"chat://s9/{WORD}",
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="held-content-event",
    ).json()
    claim = submit(
        agent,
        predicate="bike_lock_word",
        value=WORD,
        text=f"Alice's bike lock word is {WORD}",
        authority="agent_inferred",
        basis="inference",
        sources=[{"event": event["id"]}, {"uri": f"notes://alice/{WORD}"}],
    )
    assert claim["decision"] == "needs_review", claim
    recall(agent, query=f"bike lock {WORD}", include_stale=True)
    return claim["id"]


def test_every_table_erasure_writes_has_one_registered_condition():
    written = {erasure.CLAIM_TABLE, erasure.SOURCE_TABLE, erasure.EVENT_TABLE, erasure.TRACE_TABLE}
    written |= {erasure._IDEMPOTENCY, erasure._REVIEW_ITEM}
    assert {held.table for held in HELD_CONTENT} == written
    assert len(HELD_CONTENT) == len(written)


def test_erasure_leaves_no_row_the_condition_matches_and_the_probes_agree(agent, acme):
    claim_id = plant(agent)
    back_up()
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    requested, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim_id)
    )
    deletion = deletion_run(deletion_id=requested.pk, worker=WORKER)

    # Every registered table had a row reached (otherwise the checks below prove nothing).
    assert deletion.report["clean"], deletion.report["probes"]
    assert {held.table: still_held(held, deletion) for held in HELD_CONTENT} == {
        held.table: 0 for held in HELD_CONTENT
    }
    assert all(probe_verdicts(deletion)[held.probe] for held in HELD_CONTENT)

    restore()
    held_again = {held.table: still_held(held, deletion) for held in HELD_CONTENT}
    assert all(count >= 1 for count in held_again.values()), held_again
    verdicts = probe_verdicts(deletion)
    assert {held.probe: verdicts[held.probe] for held in HELD_CONTENT} == {
        held.probe: False for held in HELD_CONTENT
    }

    tombstones_reapply(tenant=acme, actor=WORKER)
    assert {held.table: still_held(held, deletion) for held in HELD_CONTENT} == {
        held.table: 0 for held in HELD_CONTENT
    }
    assert all(probe_verdicts(deletion).values())
