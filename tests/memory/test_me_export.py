"""Download my data: exactly the person's memories, small at once, large by a worker with
progress, stored until it expires, erased by any deletion of what it holds."""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import timedelta
from typing import Any

import jsonschema
import pytest
import redis
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from accounts.services import subject_link
from memory.claims.models import Claim, Subject
from memory.privacy.models import DataExport, ExportStatus
from memory.privacy.selectors.me import me_subjects
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.privacy.services.exports import export_run, exports_dispatch_due, exports_expire
from memory.privacy.tasks import export_run_task
from reviews.models import ReviewItem
from tests.dump import tables_containing
from tests.memory.helpers import candidate, post_event, recall, submit

pytestmark = pytest.mark.django_db

WORKER = Actor.system("test lifecycle worker")


@pytest.fixture
def lifecycle_queue(settings) -> Any:
    """A queue of this test's own in Redis, emptied afterwards: what the services send."""
    settings.LIFECYCLE_QUEUE = f"memdesk-test-exports-{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    yield lambda: client.llen(settings.LIFECYCLE_QUEUE)
    for key in client.scan_iter(match=f"{settings.LIFECYCLE_QUEUE}*"):
        client.delete(key)


@pytest.fixture
def alicia(acme, make_member):
    """A second user whose subject looks like alice's: `user:alice2`."""
    user = make_member(acme, "alicia", Role.USER)
    subject_link(tenant=acme, user=user, subject_key="user:alice2")
    return user


@pytest.fixture
def world(agent, globex_agent, alice, bob, alicia) -> dict[str, Any]:
    """Alice's memories and events, and look-alikes that are not hers: `user:alice2` (another
    user), `project:alice` (same ref, another kind), `user:alice` in another tenant, bob."""
    statement = post_event(agent, text="I moved to Shanghai last year")
    home = submit(agent, event_id=statement["id"], text="Alice lives in Shanghai")
    tea = submit(agent, predicate="drink", value="tea", text="Alice drinks oolong tea")
    others = {
        "alice2": submit(
            agent, subject="user:alice2", predicate="drink", value="mate", text="Drinks mate"
        ),
        "project": submit(
            agent, subject="project:alice", predicate="owner", value="crm", text="Runs CRM"
        ),
        "bob": submit(agent, subject="user:bob", predicate="drink", value="kefir", text="Kefir"),
        "globex": submit(
            globex_agent, predicate="drink", value="cocoa", text="Globex alice: cocoa"
        ),
    }
    return {"alice": alice, "statement": statement, "home": home, "tea": tea, "others": others}


def document_of(response) -> dict[str, Any]:
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="memdesk-export-')
    return json.loads(
        b"".join(response.streaming_content) if response.streaming else response.content
    )


def test_small_export_holds_exactly_my_memories_and_no_one_elses(session_api, alice, world):
    response = session_api(alice).get("/api/v1/me/export")

    assert response.status_code == 200
    document = document_of(response)
    assert document["format"] == "memdesk-export/1"
    assert document["user"] == "alice" and document["tenant"] == "acme"
    assert document["subjects"] == ["user:alice"]
    assert {c["id"] for c in document["claims"]} == {world["home"]["id"], world["tea"]["id"]}
    assert {c["subject"] for c in document["claims"]} == {"user:alice"}
    assert {e["subject"] for e in document["events"]} == {"user:alice"}
    assert world["statement"]["id"] in {e["id"] for e in document["events"]}
    home = next(c for c in document["claims"] if c["id"] == world["home"]["id"])
    assert home["text"] == "Alice lives in Shanghai"
    assert home["sources"][0]["event"] == world["statement"]["id"]
    assert home["sources"][0]["event_kind"] == "user_statement"
    assert [entry["verb"] for entry in home["history"]] == ["claim.accepted"]
    assert home["history"][0]["actor"] == {"kind": "agent", "label": "acme-agent"}
    assert document["counts"] == {
        "claims": 2,
        "events": len(document["events"]),
        "deletions": 0,
        "recall_traces": 0,
        "recall_uses": 0,
        "review_decisions": 0,
        # Each memory's acceptance, about alice's claims only.
        "audit": 2,
    }
    assert {a["target_id"] for a in document["audit"]} == {world["home"]["id"], world["tea"]["id"]}
    text = json.dumps(document)
    for needle in ("mate", "Runs CRM", "kefir", "cocoa", "user:alice2", "project:alice"):
        assert needle not in text
    # Nothing was stored for a small export.
    assert not DataExport.objects.exists()


def test_the_export_holds_my_consents_and_no_one_elses(session_api, alice, bob, world):
    for user, consents in ((alice, {"health": True, "finance": True}), (bob, {"minors": True})):
        answer = session_api(user).put("/api/v1/me/consents", {"consents": consents}, format="json")
        assert answer.status_code == 200, answer.json()
    session_api(alice).put("/api/v1/me/consents", {"consents": {"finance": False}}, format="json")

    document = document_of(session_api(alice).get("/api/v1/me/export"))

    assert [(c["subject"], c["sensitivity"], c["granted"]) for c in document["consents"]] == [
        ("user:alice", "finance", False),
        ("user:alice", "health", True),
    ]


def test_export_history_shows_a_correction_and_the_revision_it_replaced(session_api, alice, world):
    client = session_api(alice)
    answer = client.post(
        f"/api/v1/me/memories/{world['home']['id']}/correct",
        {"value": "Hangzhou", "text": "I moved to Hangzhou"},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    corrected = answer.json()
    claims = {c["id"]: c for c in document_of(client.get("/api/v1/me/export"))["claims"]}
    assert claims[world["home"]["id"]]["status"] == "superseded"
    assert claims[corrected["id"]]["supersedes"] == world["home"]["id"]
    verbs = [entry["verb"] for entry in claims[world["home"]["id"]]["history"]]
    assert verbs[0] == "claim.accepted" and "claim.superseded" in verbs


def test_large_export_is_made_by_the_worker_with_progress(
    session_api, alice, world, settings, lifecycle_queue, django_capture_on_commit_callbacks
):
    settings.EXPORT_INLINE_MAX_ROWS = 1
    settings.EXPORT_CHUNK_ROWS = 1
    client = session_api(alice)
    with django_capture_on_commit_callbacks(execute=True):
        accepted = client.get("/api/v1/me/export")

    assert accepted.status_code == 202, accepted.content
    export_id = accepted.json()["id"]
    assert accepted["Location"] == f"/api/v1/me/exports/{export_id}"
    # The commit woke a worker; here the test is that worker.
    assert lifecycle_queue() == 1
    assert client.get(accepted["Location"]).json()["progress"] == 0.0
    with CaptureQueriesContext(connection) as queries:
        assert export_run_task(export_id) == "ready"
    export = DataExport.objects.get(pk=export_id)
    assert export.status == ExportStatus.READY
    # One progress report per chunk of one row, counting up to the total.
    reported = [
        int(match.group(1))
        for query in queries
        if 'UPDATE "memory_dataexport"' in query["sql"]
        for match in [re.search(r'SET "rows_done" = (\d+), "lease_expires_at"', query["sql"])]
        if match
    ]
    assert reported == list(range(1, export.rows_total + 1))
    assert export.rows_total == export.rows_done > 2

    status = client.get(f"/api/v1/me/exports/{export_id}").json()
    assert status["status"] == "ready" and status["progress"] == 1.0
    assert status["rows_done"] == status["rows_total"] == export.rows_total
    assert status["download"] == f"/api/v1/me/exports/{export_id}/download"
    download = client.get(status["download"])
    assert download.status_code == 200
    document = document_of(download)
    assert {c["id"] for c in document["claims"]} == {world["home"]["id"], world["tea"]["id"]}
    assert status["size_bytes"] == len(download.content)


def test_asking_again_while_one_is_made_returns_it(session_api, alice, world):
    client = session_api(alice)
    first = client.post("/api/v1/me/exports")
    second = client.post("/api/v1/me/exports")
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    assert first.json()["status"] == "pending" and first.json()["download"] is None
    assert DataExport.objects.count() == 1
    not_ready = client.get(f"/api/v1/me/exports/{first.json()['id']}/download")
    assert not_ready.status_code == 409 and not_ready.json()["code"] == "export_not_ready"


def test_another_users_export_is_404_and_an_agent_is_refused(session_api, alice, bob, agent, world):
    export_id = session_api(alice).post("/api/v1/me/exports").json()["id"]
    export_run(export_id=export_id)
    assert session_api(alice).get(f"/api/v1/me/exports/{export_id}/download").status_code == 200
    for path in (f"/api/v1/me/exports/{export_id}", f"/api/v1/me/exports/{export_id}/download"):
        assert session_api(bob).get(path).status_code == 404
        refused = agent.get(path)
        assert refused.status_code == 403 and refused.json()["code"] == "person_required"
    assert agent.get("/api/v1/me/export").status_code == 403
    assert agent.post("/api/v1/me/exports").status_code == 403
    # Bob's own export holds bob's memory only.
    bobs = document_of(session_api(bob).get("/api/v1/me/export"))
    assert [c["id"] for c in bobs["claims"]] == [world["others"]["bob"]["id"]]


def test_a_deletion_erases_the_export_and_leaves_others_exports_alone(
    session_api, alice, bob, world
):
    mine = session_api(alice).post("/api/v1/me/exports").json()["id"]
    bobs = session_api(bob).post("/api/v1/me/exports").json()["id"]
    export_run(export_id=mine)
    export_run(export_id=bobs)
    assert "oolong" in DataExport.objects.get(pk=mine).content

    deleted = session_api(alice).delete(f"/api/v1/me/memories/{world['tea']['id']}")
    assert deleted.status_code == 202

    erased = DataExport.objects.get(pk=mine)
    assert erased.status == ExportStatus.ERASED and erased.content == ""
    assert DataExport.objects.get(pk=bobs).status == ExportStatus.READY
    gone = session_api(alice).get(f"/api/v1/me/exports/{mine}/download")
    assert gone.status_code == 410 and gone.json()["code"] == "export_gone"
    assert session_api(alice).get(f"/api/v1/me/exports/{mine}").json()["status"] == "erased"
    deletion_run(deletion_id=deleted.json()["deletion"], worker=WORKER)
    assert tables_containing("oolong") == {}


def test_an_export_asked_before_a_deletion_is_never_written_after_it(
    session_api, acme, alice, world
):
    export_id = session_api(alice).post("/api/v1/me/exports").json()["id"]
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=subject.tenant, actor=WORKER, subject=subject, requested_by=alice
    )

    assert export_run(export_id=export_id) is None
    export = DataExport.objects.get(pk=export_id)
    assert export.status == ExportStatus.ERASED and export.content == ""
    deletion_run(deletion_id=deletion.pk, worker=WORKER)
    after = document_of(session_api(alice).get("/api/v1/me/export"))
    assert after["claims"] == []
    assert [d["id"] for d in after["deletions"]] == [str(deletion.pk)]
    assert after["deletions"][0]["status"] == "completed"
    assert after["deletions"][0]["report"]["clean"] is True
    assert all(e["redacted"] and e["text"] == "" for e in after["events"])


def test_exports_expire_after_their_retention(session_api, alice, world, settings):
    settings.EXPORT_RETENTION_HOURS = 2
    client = session_api(alice)
    export_id = client.post("/api/v1/me/exports").json()["id"]
    export_run(export_id=export_id)
    assert exports_expire(now=timezone.now() + timedelta(hours=1)) == 0
    assert client.get(f"/api/v1/me/exports/{export_id}/download").status_code == 200

    assert exports_expire(now=timezone.now() + timedelta(hours=3)) == 1
    expired = DataExport.objects.get(pk=export_id)
    assert expired.status == ExportStatus.EXPIRED and expired.content == ""
    gone = client.get(f"/api/v1/me/exports/{export_id}/download")
    assert gone.status_code == 410 and gone.json()["code"] == "export_gone"


def test_the_sweep_wakes_a_worker_for_an_export_whose_message_was_lost(
    session_api, alice, world, lifecycle_queue
):
    export_id = session_api(alice).post("/api/v1/me/exports").json()["id"]
    assert DataExport.objects.get(pk=export_id).status == ExportStatus.PENDING
    assert exports_dispatch_due() == 1
    assert lifecycle_queue() == 1
    export_run_task(export_id)
    assert DataExport.objects.get(pk=export_id).status == ExportStatus.READY
    assert exports_dispatch_due() == 0


def test_the_document_fits_its_documented_schema(session_api, alice, world):
    client = session_api(alice)
    client.delete(f"/api/v1/me/memories/{world['tea']['id']}")
    document = document_of(client.get("/api/v1/me/export"))
    schema = Client().get("/api/schema/?format=json").json()
    from tests.clients.test_openapi_examples import _json_schema

    validator = jsonschema.Draft7Validator(
        {
            **_json_schema(schema["components"]["schemas"]["ExportDocumentOut"]),
            "components": _json_schema(schema["components"]),
        },
        format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER,
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors
    assert document["deletions"] and document["claims"]


def test_me_subjects_match_exact_keys_only(acme, alice, alicia, world):
    assert [s.key for s in me_subjects(tenant=acme, user=alice)] == ["user:alice"]


# -- the console ----------------------------------------------------------------------------


def csrf(client) -> str:
    client.get("/me/")
    return client.cookies["csrftoken"].value


def test_console_download_button_gives_the_file_at_once_when_small(login, alice, world):
    client = login(alice)
    page = client.get("/me/").content.decode()
    assert "Download my data" in page and 'action="/me/export"' in page

    response = client.post("/me/export", HTTP_X_CSRFTOKEN=csrf(client))

    assert response.status_code == 200
    document = document_of(response)
    assert {c["id"] for c in document["claims"]} == {world["home"]["id"], world["tea"]["id"]}
    assert not DataExport.objects.exists()


def test_console_follows_a_large_export_to_its_download(login, alice, bob, world, settings):
    settings.EXPORT_INLINE_MAX_ROWS = 1
    client = login(alice)
    started = client.post("/me/export", HTTP_X_CSRFTOKEN=csrf(client))
    export = DataExport.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/me/exports/{export.pk}/"

    waiting = client.get(started["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert waiting.lstrip().startswith('<section id="progress"')
    assert 'hx-trigger="every 1s"' in waiting and f"0 of {export.rows_total} rows" in waiting

    export_run(export_id=export.pk)
    ready = client.get(started["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in ready and "Download the file" in ready
    assert f"/me/exports/{export.pk}/" in client.get("/me/").content.decode()
    download = client.get(f"/me/exports/{export.pk}/download")
    assert download.status_code == 200
    assert {c["id"] for c in document_of(download)["claims"]} == {
        world["home"]["id"],
        world["tea"]["id"],
    }
    assert login(bob).get(started["Location"]).status_code == 404
    assert login(bob).get(f"/me/exports/{export.pk}/download").status_code == 404


def test_console_says_plainly_that_a_deletion_took_the_export(login, alice, world, settings):
    settings.EXPORT_INLINE_MAX_ROWS = 1
    client = login(alice)
    client.post("/me/export", HTTP_X_CSRFTOKEN=csrf(client))
    export = DataExport.objects.get()
    export_run(export_id=export.pk)
    client.post(f"/me/memories/{world['tea']['id']}/delete", HTTP_X_CSRFTOKEN=csrf(client))

    page = client.get(f"/me/exports/{export.pk}/").content.decode()
    assert "the file was deleted with them" in page and "Download the file" not in page
    refused = client.get(f"/me/exports/{export.pk}/download")
    assert refused.status_code == 302 and refused["Location"] == f"/me/exports/{export.pk}/"


# -- a real worker ---------------------------------------------------------------------------


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_makes_the_export_the_commit_asked_for(
    celery_workers, settings, session_api, alice, world
):
    settings.EXPORT_INLINE_MAX_ROWS = 1
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    celery_workers.env["EXPORT_CHUNK_ROWS"] = "1"
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    worker = celery_workers.start()
    worker.wait_ready()

    client = session_api(alice)
    accepted = client.get("/api/v1/me/export")
    assert accepted.status_code == 202
    deadline = time.monotonic() + 30
    while client.get(accepted["Location"]).json()["status"] != "ready":
        assert time.monotonic() < deadline, worker.log()
        time.sleep(0.1)

    status = client.get(accepted["Location"]).json()
    assert status["rows_done"] == status["rows_total"] > 2
    document = document_of(client.get(status["download"]))
    assert {c["id"] for c in document["claims"]} == {world["home"]["id"], world["tea"]["id"]}


def test_the_database_refuses_an_export_move_the_table_does_not_allow(session_api, alice, world):
    export_id = session_api(alice).post("/api/v1/me/exports").json()["id"]
    export_run(export_id=export_id)
    refused = pytest.raises(IntegrityError, match="illegal export transition: ready -> running")
    with refused, transaction.atomic():
        DataExport.objects.filter(pk=export_id).update(status=ExportStatus.RUNNING)
    assert DataExport.objects.get(pk=export_id).status == ExportStatus.READY


# -- what was done with my memories -----------------------------------------------------------


def used(agent, trace_id: str, claim_id: str, run_id: str) -> None:
    answer = agent.post(
        f"/api/v1/recall/traces/{trace_id}/used",
        {"items": [{"id": claim_id, "position": 0, "cited": True}], "run_id": run_id},
        format="json",
    )
    assert answer.status_code == 201, answer.json()


def test_the_export_holds_what_was_done_with_my_memories_and_nothing_of_anyone_elses(
    session_api, agent, editor, world
):
    # Recalls, a hot-memory read and reported uses: alice's, and the look-alikes'.
    mine = recall(agent, query="where does alice live")
    used(agent, mine["trace_id"], world["home"]["id"], "run-alice-home")
    block = agent.get("/api/v1/subjects/user:alice/hot-memory").json()
    for subject, claim in (
        ("user:alice2", "alice2"),
        ("project:alice", "project"),
        ("user:bob", "bob"),
    ):
        theirs = recall(agent, subject=subject, query=f"lookalike question {claim}")
        used(agent, theirs["trace_id"], world["others"][claim]["id"], f"run-lookalike-{claim}")
    # A memory of alice's and one of bob's wait for review; an editor decides both with a note.
    pending = submit(
        agent,
        predicate="employer",
        value="Acme",
        text="Alice works at Acme",
        authority="agent_inferred",
        basis="inference",
    )
    bobs_pending = submit(
        agent,
        subject="user:bob",
        predicate="employer",
        value="Globex",
        text="Bob works at Globex",
        authority="agent_inferred",
        basis="inference",
    )
    reviewer = session_api(editor)
    for claim, note in (
        (pending, "Alice confirmed her employer"),
        (bobs_pending, "lookalike note bob"),
    ):
        item = ReviewItem.objects.get(queue="candidates", target_id=claim["id"])
        decided = reviewer.post(
            f"/api/v1/reviews/{item.pk}/decide",
            {"verdict": "approve", "reason_code": "verified", "note": note},
            format="json",
        )
        assert decided.status_code == 200, decided.json()
    # Bob's summary is derived from alice's tea; alice corrects her tea, which invalidates
    # the summary: the audit row about her memory names bob's claim.
    derived = agent.post(
        f"/api/v1/claims/{world['tea']['id']}/derive",
        candidate(
            subject="user:bob",
            predicate="drinks_summary",
            value="tea-ish",
            text="lookalike derived summary",
            authority="tool_verified",
            sources=[],
        ),
        format="json",
    ).json()
    me = session_api(world["alice"])
    corrected = me.post(
        f"/api/v1/me/memories/{world['tea']['id']}/correct",
        {"value": "coffee", "text": "I drink coffee now"},
        format="json",
    )
    assert corrected.status_code == 201, corrected.json()
    assert Claim.objects.get(pk=derived["id"]).status == "invalidated"
    [lineage] = AuditEvent.objects.filter(verb="claims.derived_invalidated")
    assert lineage.target_id == world["tea"]["id"] and lineage.data["claims"] == [derived["id"]]

    document = document_of(me.get("/api/v1/me/export"))

    traces = {t["id"]: t for t in document["recall_traces"]}
    assert set(traces) == {mine["trace_id"], block["trace_id"]}
    assert traces[mine["trace_id"]]["query"] == "where does alice live"
    assert traces[mine["trace_id"]]["chosen"] == [i["id"] for i in mine["items"]]
    assert traces[block["trace_id"]]["kind"] == "hot_memory"
    assert [(u["trace"], u["claim"], u["run_id"], u["cited"]) for u in document["recall_uses"]] == [
        (mine["trace_id"], world["home"]["id"], "run-alice-home", True)
    ]
    [decision] = document["review_decisions"]
    assert (decision["claim"], decision["verdict"], decision["note"]) == (
        pending["id"],
        "approve",
        "Alice confirmed her employer",
    )
    assert decision["actor"]["label"] == editor.username
    audited = {(a["target_id"], a["verb"]): a for a in document["audit"]}
    assert {
        (world["home"]["id"], "claim.accepted"),
        (pending["id"], "claim.needs_review"),
        (pending["id"], "claim.active"),
        (pending["id"], "review.approve"),
        (world["tea"]["id"], "memory.corrected"),
    } <= set(audited)
    # The row stays, counted; the id of bob's claim is left out of it.
    lineage_row = audited[(world["tea"]["id"], "claims.derived_invalidated")]
    assert lineage_row["data"] == {"count": 1, "claims": []}
    assert {a["target_type"] for a in document["audit"]} <= {"claim", "subject", "deletion"}
    counts = document["counts"]
    for section in ("recall_traces", "recall_uses", "review_decisions", "audit"):
        assert counts[section] == len(document[section])

    text = json.dumps(document)
    for needle in (
        "lookalike",
        "user:alice2",
        "project:alice",
        "user:bob",
        "Globex",
        derived["id"],
    ):
        assert needle not in text
    for other in world["others"].values():
        assert other["id"] not in text
