"""Forgetting that is complete: every copy of a memory's words goes, and a copy nobody
registered keeps the deletion out of `completed` until an editor resolves it.

A canary goes into every field an agent or a person can write (events: kind, text,
body keys and values, source uri, run id, agent; claims: predicate, scope, value,
text, uri source; review items and decisions: topic, note, payload; receipts:
operation target, intent, idempotency key, run id, agent, external id, transition reasons
and evidence, error codes; a checkpoint's task key, run id and stages; recall traces of
the person and of a project; invalidation reasons; `Idempotency-Key` headers and
idempotency replies); the person deletes one memory, or everything, through the
public API; then no line of a real `pg_dump` of the database and no key or value of
the Redis database may still hold it.
"""

from __future__ import annotations

import json
from uuid import UUID

import httpx
import pytest
from django.core.cache import cache
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from accounts.actors import Actor
from common.fingerprints import erased_marker
from common.models import IdempotencyRecord
from common.redis import cache_redis
from memory.claims.models import Claim, ClaimStatus, Event
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.privacy.services.deletion import deletion_run
from memory.receipts.models import Checkpoint, Receipt
from memory.receipts.models.receipts import ReceiptState
from memory.receipts.services.recovery import RecoveryDecision, RecoveryReason
from reviews.models import Decision, ItemStatus, Queue, ReviewItem
from tests.dump import pg_dump_lines_containing, tables_containing
from tests.memory.helpers import post_event, recall

CANARY = "zyrtaquemble"
WORKER = Actor.system("test lifecycle worker")


def redis_holding(needle: str) -> list[bytes]:
    client = cache_redis()
    return [
        key
        for key in client.scan_iter(match=f"{cache.make_key('')}*", count=1000)
        if needle.encode() in key
        or (client.type(key) == b"string" and needle.encode() in (client.get(key) or b""))
    ]


def redis_everywhere_holding(needle: str) -> list[bytes]:
    """Every key of the Redis database memdesk uses (cache, broker queues, locks, any
    prefix) whose name or value holds `needle`, whatever the value's type. Keys under
    another test process's cache prefix (a parallel run shares the database) are not
    this test's."""
    client = cache_redis()
    wanted = needle.encode()
    mine = cache.make_key("").encode()
    found = []
    for key in client.scan_iter(count=1000):
        if key.startswith(b"memdesk-test-") and not key.startswith(mine):
            continue
        kind = client.type(key)
        if kind == b"string":
            values = [client.get(key) or b""]
        elif kind == b"list":
            values = client.lrange(key, 0, -1)
        elif kind == b"hash":
            values = [part for pair in client.hgetall(key).items() for part in pair]
        elif kind == b"set":
            values = list(client.smembers(key))
        elif kind == b"zset":
            values = client.zrange(key, 0, -1)
        else:
            values = [client.dump(key) or b""]
        if wanted in key or any(wanted in value for value in values):
            found.append(key)
    return found


def plant(agent, editor_api, canary: str = CANARY) -> dict[str, str]:
    """The canary in every agent- or person-supplied field memdesk stores."""
    event = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": f"note_{canary}",
            "text": f"I keep the {canary} in the shed",
            "body": {"detail": f"the {canary}", canary: "as a key"},
            "source_uri": f"chat://s1/{canary}",
            "run_id": f"run-{canary}",
            "agent": f"agent-{canary}",
            "observed_at": timezone.now().isoformat(),
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"event-{canary}",
    )
    assert event.status_code == 201, event.json()
    proposed = agent.post(
        "/api/v1/claims",
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": f"shed_{canary}",
            "scope": {"place": f"shed-{canary}"},
            "value": canary,
            "text": f"Alice keeps the {canary} in the shed",
            "authority": "agent_inferred",
            "basis": "inference",
            "sources": [{"event": event.json()["id"]}, {"uri": f"chat://s1/{canary}"}],
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="canary-claim",
    )
    assert proposed.status_code == 201, proposed.json()
    claim_id = proposed.json()["id"]
    item = ReviewItem.objects.get(target_type="claim", target_id=claim_id, queue=Queue.CANDIDATES)
    assert canary in item.topic
    decided = editor_api.post(
        f"/api/v1/reviews/{item.pk}/decide",
        {
            "verdict": "approve",
            "note": f"Checked: the {canary} is real",
            # Not a field of the candidates queue's payload: never stored.
            "evidence": {"photo": f"{canary}.jpg"},
        },
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    assert canary in Decision.objects.get(item=item).note
    assert canary not in json.dumps(Decision.objects.get(item=item).payload)
    assert Claim.objects.get(pk=claim_id).status == ClaimStatus.ACTIVE

    # Recalls asking for it, on Alice and on a project that quotes her.
    asked = recall(agent, query=f"where is the {canary}", scope={"place": f"shed-{canary}"})
    # The agent reports putting it into its context, naming the run and task in its words.
    used = agent.post(
        f"/api/v1/recall/traces/{asked['trace_id']}/used",
        {
            "items": [{"id": claim_id, "position": 0, "cited": True}],
            "run_id": f"run-{canary}",
            "task_id": f"task-{canary}",
        },
        format="json",
    )
    assert used.status_code == 201, used.json()
    post_event(agent, subject="project:shed", text=f"Minutes: Alice's {canary} stays here")
    recall(agent, subject="project:shed", query=f"{canary} location")
    hot = agent.get(
        f"/api/v1/subjects/user:alice/hot-memory?budget_chars=4000&scope=place=shed-{canary}"
    )
    assert canary in hot.json()["text"]
    assert redis_holding(canary)

    receipt = agent.post(
        "/api/v1/receipts",
        {
            "operation": "notes.create",
            "target": f"https://notes.example/api/{canary}",
            "intent": {"title": f"Where the {canary} is", canary: True},
            "idempotency_key": f"publish-{canary}",
            "reconciler": {"adapter": "manual"},
            "run_id": f"run-{canary}",
            "agent": f"agent-{canary}",
        },
        format="json",
    )
    assert receipt.status_code == 201, receipt.json()
    transitions = f"/api/v1/receipts/{receipt.json()['id']}/transitions"
    for step in (
        {"to": "submitted", "reason": f"posting where the {canary} is"},
        {
            "to": "succeeded",
            "external_id": f"note-{canary}",
            "evidence": {"status": 201, "title": f"Where the {canary} is"},
        },
    ):
        moved = agent.post(transitions, step, format="json")
        assert moved.status_code == 200, moved.json()
    refused = agent.post(
        "/api/v1/receipts",
        {
            "operation": "notes.create",
            "target": "https://notes.example/api/notes",
            "intent": {"title": "A note"},
            "idempotency_key": "canary-receipt-2",
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    ).json()
    for step in (
        {"to": "submitted"},
        {"to": "rejected", "error_code": f"no_{canary}_allowed"},
    ):
        moved = agent.post(f"/api/v1/receipts/{refused['id']}/transitions", step, format="json")
        assert moved.status_code == 200, moved.json()

    # The task that made the settled receipt saved where it stood, under a key naming it.
    saved = agent.put(
        f"/api/v1/checkpoints/task-{canary}",
        {
            "run_id": f"run-{canary}",
            "input_fingerprint": "sha256:canary",
            "stage": f"posted_{canary}",
            "stage_complete": True,
            "allowed_next_stages": [f"announce_{canary}"],
            "effects": [receipt.json()["id"]],
        },
        format="json",
    )
    assert saved.status_code == 200, saved.json()

    invalidated = agent.post(
        f"/api/v1/claims/{claim_id}/invalidate",
        {"reason": f"Alice moved the {canary} out of the shed"},
        format="json",
    )
    assert invalidated.status_code == 200, invalidated.json()
    # Every kind of copy is really there before the deletion.
    found = tables_containing(canary)
    for table in (
        "memory_event",
        "memory_claim",
        "memory_recalltrace",
        "memory_recalluse",
        "memory_receipt",
        "memory_receipttransition",
        "memory_claimsource",
        "reviews_reviewitem",
        "reviews_decision",
        "accounts_auditevent",
        "common_idempotencyrecord",
        "memory_checkpoint",
    ):
        assert table in found, (table, found)
    assert canary in " ".join(IdempotencyRecord.objects.values_list("key", flat=True))
    assert canary in Receipt.objects.get(pk=receipt.json()["id"]).idempotency_key
    return {"claim": claim_id, "event": event.json()["id"], "receipt": receipt.json()["id"]}


@pytest.fixture
def editor_api(editor, session_api):
    return session_api(editor)


# Committed for real: `pg_dump` reads the database from its own connection, and the
# worker's VACUUM runs outside a transaction.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("what", ["one_memory", "everything"])
def test_the_canary_is_nowhere_after_the_deletion(
    what, agent, alice, editor, editor_api, session_api, login
):
    ids = plant(agent, editor_api)
    user = session_api(alice)
    # The dump and the Redis scan see the canary before the deletion.
    assert len(pg_dump_lines_containing(CANARY)) >= 10
    assert redis_everywhere_holding(CANARY)

    if what == "one_memory":
        accepted = user.delete(f"/api/v1/me/memories/{ids['claim']}")
    else:
        accepted = user.delete("/api/v1/me/memories")
    assert accepted.status_code == 202, accepted.json()
    deletion_id = accepted.json()["deletion"]
    done = deletion_run(deletion_id=deletion_id, worker=WORKER)

    assert done is not None
    report = done.report
    assert report["clean"] is True, [p for p in report["probes"] if not p["clean"]]
    assert done.status == DeletionStatus.COMPLETED
    everywhere = next(p for p in report["probes"] if p["name"] == "everywhere")
    assert everywhere["result"]["tables"] >= 20 and everywhere["result"]["findings"] == []
    # The project's minutes keep what they say about the project; only the quote went.
    minutes = Event.objects.get(subject__ref="shed", subject__kind="project")
    assert minutes.text == "Minutes: Alice's [erased] stays here"
    assert minutes.redacted_at is None and minutes.scrubbed_at is not None
    assert report["quotes"]["other_subjects_events_scrubbed"] == 1
    # Ids, times and digests stay for the audit trail.
    decision = Decision.objects.get(item__target_id=ids["claim"])
    assert decision.note.startswith("erased:") and decision.scrubbed_at is not None
    assert decision.verdict == "approve" and decision.at is not None
    claim = Claim.objects.get(pk=ids["claim"])
    assert claim.predicate.startswith("erased:") and claim.scope == {} and claim.value_digest
    assert report["horizon"]["wal_and_backups"]["retention_days"] == 30
    assert CANARY not in json.dumps(report)
    assert "receipts_in_flight" not in report["artifacts"]
    assert report["identifiers"]["in_flight_receipt_keys_kept"] == 0
    # Identifiers an agent looks things up by become their keyed digest; the rows stay.
    receipt = Receipt.objects.get(pk=ids["receipt"])
    assert receipt.idempotency_key == erased_marker(f"publish-{CANARY}")
    assert receipt.state == "succeeded" and receipt.intent_fingerprint.startswith("sha256:")
    checkpoint = Checkpoint.objects.get(task_key=erased_marker(f"task-{CANARY}"))
    assert checkpoint.effects == [UUID(ids["receipt"])] and checkpoint.stage_complete
    assert checkpoint.allowed_next_stages == [erased_marker(f"announce_{CANARY}")]
    reply = IdempotencyRecord.objects.get(key=erased_marker(f"event-{CANARY}"))
    assert reply.response_body == {"id": ids["event"], "redacted": True}
    assert reply.response_status == 201 and reply.request_fingerprint.startswith("sha256:")

    # The worker vacuumed the tables it touched, and says when.
    horizon = DeletionRequest.objects.get(pk=deletion_id).report["horizon"]
    vacuumed = horizon["dead_row_versions"]["vacuumed_at"]
    assert vacuumed and "memory_claim" in horizon["dead_row_versions"]["tables"]

    # The person reads one plain paragraph; the engineer's horizon is behind a disclosure.
    html = login(alice).get(reverse("memory:deletion", args=[deletion_id])).content.decode()
    assert "What you asked us to forget is gone from memdesk" in html
    assert f"in backups until {report['horizon']['wal_and_backups']['until'][:10]}" in html
    assert 'id="engineer-details"' not in html
    engineer = login(editor).get(reverse("memory:deletion", args=[deletion_id])).content.decode()
    assert '<details id="engineer-details"' in engineer
    assert f'removed by VACUUM at <span class="mono">{vacuumed}' in engineer

    # A full dump of the database, and every key and value of the Redis database.
    assert pg_dump_lines_containing(CANARY) == []
    assert tables_containing(CANARY) == {}
    assert redis_everywhere_holding(CANARY) == []


@pytest.mark.django_db
def test_a_copy_in_a_column_nobody_registered_keeps_the_deletion_out_of_completed(
    agent, acme, alice, editor, editor_api, session_api, login
):
    claim = agent.post(
        "/api/v1/claims",
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": "hideout",
            "value": CANARY,
            "text": f"Alice hides at {CANARY}",
            "authority": "agent_inferred",
            "basis": "inference",
            "sources": [{"uri": "chat://s1/m1"}],
        },
        format="json",
    ).json()
    # A table no deletion writes: a skill's name, planted behind memdesk's back.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO skills_skill (tenant_id, slug, name, created_by_kind, created_by_id, "
            "created_by_label, created_at) VALUES (%s, 'hideouts', %s, 'user', '', '', now()) "
            "RETURNING id",
            [acme.pk, f"Hideouts like {CANARY.upper()}"],
        )
        skill_id = cursor.fetchone()[0]

    user = session_api(alice)
    deletion_id = user.delete(f"/api/v1/me/memories/{claim['id']}").json()["deletion"]
    done = deletion_run(deletion_id=deletion_id, worker=WORKER)

    assert done.status == DeletionStatus.NEEDS_REVIEW
    assert done.report["clean"] is False and done.finished_at is None
    everywhere = next(p for p in done.report["probes"] if p["name"] == "everywhere")
    assert everywhere["clean"] is False
    assert everywhere["result"]["findings"] == [
        {
            "table": "skills_skill",
            "column": "name",
            "row": str(skill_id),
            "scrubbed_by_deletions": False,
        }
    ]
    assert [p["name"] for p in done.report["probes"] if not p["clean"]] == ["everywhere"]
    assert CANARY not in json.dumps(done.report).lower()
    item = ReviewItem.objects.get(queue=Queue.DELETIONS, target_id=str(deletion_id))
    assert item.reason_codes == ["dirty:everywhere", "found:skills_skill.name"]
    # The person reads where it stands, in plain words, with the details behind a disclosure.
    page = login(alice).get(reverse("memory:deletion", args=[deletion_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "our checks found a possible copy somewhere" in html
    assert CANARY not in html.lower()
    # Where the bytes are, the probe queries and digests wait for those who work deletions.
    assert 'id="horizon"' not in html and "DELETION_BACKUP_RETENTION_DAYS" not in html
    assert 'id="engineer-details"' not in html
    engineer = login(editor).get(reverse("memory:deletion", args=[deletion_id])).content.decode()
    assert '<details id="engineer-details"' in engineer and CANARY not in engineer.lower()
    assert '<details id="horizon">' in engineer and "DELETION_BACKUP_RETENTION_DAYS" in engineer

    decided = editor_api.post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "acknowledge", "note": "asked the skill owner to rename it"},
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    resolved = DeletionRequest.objects.get(pk=deletion_id)
    assert resolved.status == DeletionStatus.COMPLETED and resolved.finished_at is not None
    assert resolved.report["clean"] is False and resolved.report["resolved"]["by"]
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED


def publish_once(agent, platform, *, key: str, header: str | None = None):
    """What a careful agent does: write the receipt first, and call the platform only
    when memdesk says the effect is new (201); anything else means it was done."""
    answer = agent.post(
        "/api/v1/receipts",
        {
            "operation": "blog.publish",
            "target": f"https://blog.example/articles/{CANARY}",
            "intent": {"title": f"The {CANARY} moved"},
            "idempotency_key": key,
            "reconciler": {"adapter": "manual"},
        },
        format="json",
        **({"HTTP_IDEMPOTENCY_KEY": header} if header else {}),
    )
    if answer.status_code != 201:
        return answer
    transitions = f"/api/v1/receipts/{answer.json()['id']}/transitions"
    assert agent.post(transitions, {"to": "submitted"}, format="json").status_code == 200
    written = httpx.post(
        f"{platform.url}/articles", json={"title": "moved"}, headers={"Idempotency-Key": key}
    )
    assert written.status_code == 201
    settled = agent.post(
        transitions,
        {"to": "succeeded", "external_id": written.json()["id"], "evidence": {"status": 201}},
        format="json",
    )
    assert settled.status_code == 200, settled.json()
    return answer


@pytest.mark.django_db
def test_a_retry_with_the_original_keys_after_the_deletion_finds_what_they_named(
    agent, alice, editor_api, session_api, platform
):
    ids = plant(agent, editor_api)
    key, header = f"weekly-{CANARY}", f"hdr-{CANARY}"
    first = publish_once(agent, platform, key=key, header=header)
    assert first.status_code == 201 and platform.writes_attempted == 1
    receipt_id = first.json()["id"]
    receipts, checkpoints = Receipt.objects.count(), Checkpoint.objects.count()

    deletion = session_api(alice).delete("/api/v1/me/memories").json()["deletion"]
    done = deletion_run(deletion_id=deletion, worker=WORKER)
    assert done.status == DeletionStatus.COMPLETED, done.report["probes"]
    assert Receipt.objects.get(pk=receipt_id).idempotency_key == erased_marker(key)
    assert IdempotencyRecord.objects.filter(key=erased_marker(header)).count() == 1

    # The body's key finds the settled receipt: the agent learns it is done.
    again = publish_once(agent, platform, key=key)
    assert again.status_code == 200, again.json()
    assert again.json()["id"] == receipt_id and again.json()["state"] == "succeeded"
    assert CANARY not in again.json()["idempotency_key"]
    # The header's stored reply quoted the key and was erased: the retry is told it was
    # done and what it made, and nothing runs again.
    replayed = publish_once(agent, platform, key=key, header=header)
    assert replayed.status_code == 409, replayed.json()
    assert replayed.json()["code"] == "idempotent_reply_erased"
    assert replayed.json()["id"] == receipt_id and replayed.json()["original_status"] == 201
    # The header's key still names only that request.
    other = agent.post(
        "/api/v1/receipts",
        {
            "operation": "blog.publish",
            "target": "https://blog.example/x",
            "intent": {},
            "idempotency_key": "another",
            "reconciler": {"adapter": "manual"},
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY=header,
    )
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"
    # The body's key with another effect is still refused as reuse.
    reused = agent.post(
        "/api/v1/receipts",
        {
            "operation": "blog.publish",
            "target": "https://blog.example/other",
            "intent": {},
            "idempotency_key": key,
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    )
    assert reused.status_code == 409 and reused.json()["code"] == "idempotency_key_reused"
    assert Receipt.objects.count() == receipts and platform.writes_attempted == 1

    # Recovery by the original task key finds the checkpoint and its settled effect.
    recovered = agent.post(
        "/api/v1/recovery",
        {"task_key": f"task-{CANARY}", "input_fingerprint": "sha256:canary"},
        format="json",
    )
    assert recovered.status_code == 200, recovered.json()
    answer = recovered.json()
    assert (answer["decision"], answer["reason"]) == (
        RecoveryDecision.RESUME,
        RecoveryReason.NEXT_STAGE,
    )
    assert answer["checkpoint"]["task_key"] == erased_marker(f"task-{CANARY}")
    assert [e["id"] for e in answer["effects"]] == [ids["receipt"]]
    assert agent.get(f"/api/v1/checkpoints/task-{CANARY}").status_code == 200
    # Saving again under the original key moves the same checkpoint on.
    saved = agent.put(
        f"/api/v1/checkpoints/task-{CANARY}",
        {"input_fingerprint": "sha256:canary", "stage": "announced", "stage_complete": True},
        format="json",
    )
    assert saved.status_code == 200, saved.json()
    assert Checkpoint.objects.count() == checkpoints
    assert Checkpoint.objects.get(task_key=erased_marker(f"task-{CANARY}")).stage == "announced"


@pytest.mark.django_db
def test_an_in_flight_receipt_keeps_its_key_and_the_deletion_says_so(agent, alice, session_api):
    claim = agent.post(
        "/api/v1/claims",
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": "hideout",
            "value": CANARY,
            "text": f"Alice hides at {CANARY}",
            "authority": "agent_inferred",
            "basis": "inference",
            "sources": [{"uri": "chat://s1/m1"}],
        },
        format="json",
    ).json()
    pending = agent.post(
        "/api/v1/receipts",
        {
            "operation": "notes.create",
            "target": "https://notes.example/api/notes",
            "intent": {"title": "A note"},
            "idempotency_key": f"pending-{CANARY}",
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    ).json()
    moved = agent.post(
        f"/api/v1/receipts/{pending['id']}/transitions", {"to": "submitted"}, format="json"
    )
    assert moved.status_code == 200, moved.json()

    deletion = session_api(alice).delete(f"/api/v1/me/memories/{claim['id']}").json()["deletion"]
    done = deletion_run(deletion_id=deletion, worker=WORKER)

    # The agent may still report back, and a reconciler look the effect up, by its key.
    receipt = Receipt.objects.get(pk=pending["id"])
    assert receipt.idempotency_key == f"pending-{CANARY}"
    assert receipt.state == ReceiptState.SUBMITTED
    assert done.report["artifacts"]["receipts_in_flight"] == {"keys_kept": 1}
    assert done.report["identifiers"]["in_flight_receipt_keys_kept"] == 1
    assert done.status == DeletionStatus.NEEDS_REVIEW and done.report["clean"] is False
    everywhere = next(p for p in done.report["probes"] if p["name"] == "everywhere")
    assert everywhere["result"]["findings"] == [
        {
            "table": "memory_receipt",
            "column": "idempotency_key",
            "row": pending["id"],
            "scrubbed_by_deletions": True,
        }
    ]
    assert CANARY not in json.dumps(done.report).lower()
