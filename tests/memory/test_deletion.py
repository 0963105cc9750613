"""Forgetting that provably propagates: erasure along lineage, probes, tombstones, leases.

The canary test plants one distinctive string everywhere memory can hold it
and deletes it through the end-user API with a real Celery worker; the rest
drive the services directly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from common.redis import cache_redis
from memory.claims.models import Claim, ClaimStatus, Event, RecallTrace, Subject
from memory.privacy.models import DeletionRequest, DeletionStatus, Tombstone
from memory.privacy.selectors.probes import deletion_probes
from memory.privacy.services.deletion import (
    deletion_request_create,
    deletion_run,
    deletions_due_ids,
)
from memory.privacy.services.deletion_leases import deletion_claim
from memory.privacy.services.deletion_propagate import deletion_propagate
from memory.privacy.terms import term_digest
from reviews.models import ItemStatus, Queue, ReviewItem
from reviews.services import review_decide
from testing.seed import seed_subject
from tests.dump import tables_containing
from tests.memory.helpers import post_event, recall, submit

CANARY = "quokkazephyr7731"
PROBES = [
    "distinctive_words",
    "claims_table",
    "claim_sources",
    "full_text_index",
    "trigram_index",
    "ledger_events",
    "hot_memory",
    "recall",
    "recall_traces",
    "audit_log",
    "idempotency_replies",
    "review_items",
    "everywhere",
]
WORKER = Actor.system("test lifecycle worker")


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(0.1)


def derive(agent, parent_id: str, **body) -> dict:
    payload = {
        "subject": "user:alice",
        "kind": "summary",
        "predicate": "locker_summary",
        "authority": "tool_verified",
        "basis": "verified",
        **body,
    }
    response = agent.post(f"/api/v1/claims/{parent_id}/derive", payload, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def redis_values_containing(needle: str) -> list[bytes]:
    client = cache_redis()
    return [
        key
        for key in client.scan_iter(match=f"{cache.make_key('')}*", count=1000)
        if client.type(key) == b"string" and needle.encode() in (client.get(key) or b"")
    ]


def plant_canary(agent) -> dict[str, str]:
    """A distinctive string in an event, a claim, two derived claims, hot memory and a trace."""
    event = agent.post(
        "/api/v1/events",
        {
            "subject": "user:alice",
            "kind": "user_statement",
            "text": f"My locker code word is {CANARY}",
            "observed_at": timezone.now().isoformat(),
            "source_uri": f"chat://s1/{CANARY}",
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="plant-event-1",
    ).json()
    claim = submit(
        agent,
        event_id=event["id"],
        predicate="locker_code_word",
        value=CANARY,
        text=f"Alice's locker code word is {CANARY}",
    )
    restating = derive(agent, claim["id"], text=f"Summary: Alice guards her locker with {CANARY}")
    other = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    # Built on the deleted claim and on one that stays, restating nothing deleted.
    building = derive(
        agent,
        claim["id"],
        predicate="gym_routine",
        kind="fact",
        value="tea after training",
        text="Alice has tea after training at the gym",
        derived_from=[other["id"]],
    )
    bob = submit(agent, subject="user:bob", predicate="drink", value="coffee", text="Bob: coffee")
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory?budget_chars=4000").json()
    assert CANARY in hot["text"]
    asked = recall(agent, query=f"what is {CANARY}", include_stale=True)
    assert claim["id"] in [item["id"] for item in asked["items"]]
    assert RecallTrace.objects.filter(query__contains=CANARY).exists()
    assert redis_values_containing(CANARY)
    return {
        "event": event["id"],
        "claim": claim["id"],
        "restating": restating["id"],
        "building": building["id"],
        "other": other["id"],
        "bob": bob["id"],
    }


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_canary_is_gone_from_every_probe_recall_redis_and_a_full_dump(
    celery_workers, settings, agent, alice, session_api
):
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    worker = celery_workers.start()
    ids = plant_canary(agent)
    worker.wait_ready()

    user = session_api(alice)
    accepted = user.delete(f"/api/v1/me/memories/{ids['claim']}")
    assert accepted.status_code == 202, accepted.json()
    deletion_id = accepted.json()["deletion"]
    # Nothing but the commit of the request told the worker: no sweep runs here.
    wait_for(
        lambda: DeletionRequest.objects.get(pk=deletion_id).status == DeletionStatus.COMPLETED,
        timeout=30,
    )

    # After completing, the worker (outside any transaction) vacuums the touched tables.
    wait_for(
        lambda: (
            DeletionRequest.objects.get(pk=deletion_id)
            .report["horizon"]["dead_row_versions"]
            .get("vacuumed_at")
        ),
        timeout=30,
    )
    body = user.get(f"/api/v1/deletions/{deletion_id}").json()
    report = body["report"]
    assert body["status"] == "completed", worker.log()
    vacuumed = report["horizon"]["dead_row_versions"]["tables"]
    assert "memory_claim" in vacuumed
    # The recall was redacted, and its uses' run and task ids blanked with it.
    assert {"memory_recalltrace", "memory_recalluse"} <= set(vacuumed)
    assert [probe["name"] for probe in report["probes"]] == PROBES
    assert all(probe["clean"] for probe in report["probes"]), [
        p for p in report["probes"] if not p["clean"]
    ]
    assert report["clean"] is True
    assert report["terms"]["count"] >= 1
    artifacts = report["artifacts"]
    assert artifacts["claims"] == {"erased": 1}
    assert artifacts["derived_claims"] == {"erased": 1, "invalidated": 1}
    assert artifacts["events"]["redacted"] == 1
    # The recall and the hot-memory read, both traced with the claim in their answer.
    assert artifacts["recall_traces"]["redacted"] == 2
    assert artifacts["idempotency_replies"]["redacted"] == 1
    assert artifacts["hot_memory"]["cache_keys_purged"] >= 1
    assert artifacts["full_text_index"]["entries_cleared"] == 2
    assert CANARY not in json.dumps(body)

    statuses = dict(Claim.objects.values_list("id", "status"))
    assert {str(k): v for k, v in statuses.items()} == {
        ids["claim"]: ClaimStatus.ERASED,
        ids["restating"]: ClaimStatus.ERASED,
        ids["building"]: ClaimStatus.INVALIDATED,
        ids["other"]: ClaimStatus.ACTIVE,
        ids["bob"]: ClaimStatus.ACTIVE,
    }
    event = agent.get(f"/api/v1/events/{ids['event']}").json()
    assert event["redacted"] is True
    assert event["text"] == event["source_uri"] == ""
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory?budget_chars=4000").json()
    assert CANARY not in hot["text"]
    assert "tea" in hot["text"]
    assert ids["claim"] not in user.get("/api/v1/me/memories").content.decode()
    assert user.get(f"/api/v1/me/memories/{ids['claim']}").status_code == 404
    assert redis_values_containing(CANARY) == []
    # One audit row per step of the request, none per claim, and only digests.
    assert AuditEvent.objects.filter(target_type="deletion", target_id=deletion_id).count() == 4

    # The full database, every row of every table, no longer holds the string.
    assert tables_containing(CANARY) == {}
    # A fresh recall asking for it finds nothing (its own trace records a new question,
    # asked after the forgetting, so the dump was taken first).
    # (Recall fills its limit with the remaining legal claims; none may match the canary.)
    for query in (CANARY, f"locker {CANARY}"):
        found = recall(agent, query=query, include_stale=True)
        assert CANARY not in json.dumps(found)
        assert [i for i in found["items"] if {"fulltext", "ngram"} & set(i["why"]["signals"])] == []


@pytest.mark.django_db
def test_deleting_one_memory_erases_its_history_but_not_newer_or_unrelated_claims(agent, acme):
    first = submit(agent, value="Hangzhou", text="Alice lives in Hangzhou, near xiaoying lake")
    second = submit(agent, value="Shanghai", text="Alice lives in Shanghai, Pudong")
    assert Claim.objects.get(pk=first["id"]).status == ClaimStatus.SUPERSEDED
    unrelated = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    deletion, created = deletion_request_create(
        tenant=acme,
        actor=WORKER,
        subject=subject,
        claim=Claim.objects.get(pk=second["id"]),
    )
    assert created
    again, created_again = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=second["id"])
    )
    assert again.pk == deletion.pk and not created_again
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    assert done is not None and done.status == DeletionStatus.COMPLETED
    assert done.report["clean"], done.report["probes"]
    assert done.report["artifacts"]["claims"] == {"erased": 2}
    for claim_id in (first["id"], second["id"]):
        erased = Claim.objects.get(pk=claim_id)
        assert (erased.status, erased.value, erased.text, erased.ngrams) == ("erased", None, "", [])
        assert erased.search_vector is None and erased.value_digest
    assert Claim.objects.get(pk=unrelated["id"]).status == ClaimStatus.ACTIVE
    assert Tombstone.objects.filter(deletion=deletion, target_type="claim").count() == 2
    assert tables_containing("xiaoying") == {}
    assert tables_containing("Pudong") == {}
    left = recall(agent, query="where does alice live")["items"]
    assert [i["id"] for i in left] == [unrelated["id"]]


@pytest.mark.django_db
def test_deleting_everything_about_a_subject_leaves_other_subjects_alone(agent, acme):
    event = post_event(agent, text="I moved to Wulumuqi for the marmot survey")
    submit(agent, event_id=event["id"], value="Wulumuqi", text="Alice lives in Wulumuqi")
    submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    recall(agent, query="marmot")
    bob = submit(agent, subject="user:bob", predicate="drink", value="tea", text="Bob drinks tea")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=subject)
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    assert done.status == DeletionStatus.COMPLETED and done.report["clean"]
    assert not Claim.objects.filter(subject=subject).exclude(status=ClaimStatus.ERASED).exists()
    assert not Event.objects.filter(subject=subject, redacted_at__isnull=True).exists()
    assert not RecallTrace.objects.filter(subject=subject, redacted_at__isnull=True).exists()
    assert Claim.objects.get(pk=bob["id"]).status == ClaimStatus.ACTIVE
    # "tea" is still in Bob's memory, so it was not one of the distinctive words.
    assert done.report["terms"]["count"] >= 2
    assert tables_containing("Wulumuqi") == {}
    assert tables_containing("marmot") == {}


@pytest.mark.django_db
def test_a_project_event_quoting_the_memory_loses_only_the_quoted_words(agent, acme):
    claim = submit(agent, predicate="locker_code_word", value=CANARY, text=f"Code {CANARY}")
    # Meeting notes of a project quote Alice's secret word: not her own statement, so
    # the deletion keeps what the notes say about the project and replaces the quote.
    notes = post_event(agent, subject="project:gym", text=f"Notes: Alice uses {CANARY}")
    derived = agent.post(
        f"/api/v1/claims/{claim['id']}/derive",
        {
            "subject": "project:gym",
            "kind": "summary",
            "predicate": "member_codes",
            "authority": "tool_verified",
            "basis": "verified",
            "text": "Members' code words are on file",
            "sources": [{"event": notes["id"]}],
        },
        format="json",
    ).json()
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    assert done.status == DeletionStatus.COMPLETED
    assert done.report["clean"] is True, [p for p in done.report["probes"] if not p["clean"]]
    event = Event.objects.get(pk=notes["id"])
    assert (event.text, event.redacted_at) == ("Notes: Alice uses [erased]", None)
    assert event.scrubbed_at is not None
    assert done.report["quotes"]["other_subjects_events_scrubbed"] == 1
    assert done.report["artifacts"]["quoted_elsewhere"]["memory_event"] == 1
    # The derived claim rested only on the erased one, so it went with it.
    assert Claim.objects.get(pk=derived["id"]).status == ClaimStatus.ERASED
    assert not ReviewItem.objects.filter(queue=Queue.DELETIONS).exists()
    assert tables_containing(CANARY) == {}


@pytest.mark.django_db
def test_a_claim_rejected_for_a_secret_leaves_later_deletions_clean(agent, acme):
    # The rejected claim keeps memdesk's placeholder ("[withheld: secret detected]") and
    # its audit row lists `secret_kinds`: neither is the person's content.
    rejected = submit(
        agent, predicate="api_key", value="x", text="Alice's key is AKIAIOSFODNN7EXAMPLE"
    )
    assert rejected["decision"] == "rejected"
    submit(agent, predicate="drink", value="quokkatea", text="Alice drinks quokkatea")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    first, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=subject)
    first = deletion_run(deletion_id=first.pk, worker=WORKER)
    submit(agent, predicate="snack", value="wombatcake", text="Alice eats wombatcake")
    second, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=subject)
    second = deletion_run(deletion_id=second.pk, worker=WORKER)

    placeholder = {term_digest(word) for word in ("withheld", "secret", "detected")}
    for done in (first, second):
        assert done.status == DeletionStatus.COMPLETED
        assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
        assert not placeholder & set(done.report["terms"]["digests"])
        assert done.report["terms"]["count"] >= 1
        everywhere = next(p for p in done.report["probes"] if p["name"] == "everywhere")
        assert everywhere["result"]["findings"] == [] and everywhere["result"]["columns"] > 50
    assert first.report["artifacts"]["claims"] == {"erased": 2}
    assert second.report["artifacts"]["claims"] == {"erased": 1}
    assert not ReviewItem.objects.filter(queue=Queue.DELETIONS).exists()
    assert tables_containing("quokkatea") == {} and tables_containing("wombatcake") == {}


@pytest.mark.django_db
def test_a_worker_whose_lease_ran_out_is_fenced_off(agent, acme):
    claim = submit(agent, predicate="locker_code_word", value=CANARY, text=f"Code {CANARY}")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )
    first = deletion_claim(deletion_id=deletion.pk, worker=WORKER)
    assert first is not None and first.attempt == 1
    assert deletion_claim(deletion_id=deletion.pk, worker=WORKER) is None  # still leased
    assert deletion.pk not in deletions_due_ids()

    DeletionRequest.objects.filter(pk=deletion.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert deletion.pk in deletions_due_ids()
    second = deletion_claim(deletion_id=deletion.pk, worker=WORKER)
    assert second is not None and second.attempt == 2

    assert deletion_propagate(lease=first, worker=WORKER) is None  # the stale worker
    assert Claim.objects.get(pk=claim["id"]).status == ClaimStatus.ACTIVE
    assert deletion_propagate(lease=second, worker=WORKER) is not None
    assert Claim.objects.get(pk=claim["id"]).status == ClaimStatus.ERASED


@pytest.mark.django_db
def test_a_request_out_of_attempts_fails_and_asks_for_a_person(agent, acme, editor, settings):
    settings.DELETION_MAX_ATTEMPTS = 2
    claim = submit(agent, predicate="locker_code_word", value=CANARY, text=f"Code {CANARY}")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )
    for _ in range(2):
        assert deletion_claim(deletion_id=deletion.pk, worker=WORKER) is not None
        DeletionRequest.objects.filter(pk=deletion.pk).update(lease_expires_at=timezone.now())

    assert deletion_claim(deletion_id=deletion.pk, worker=WORKER) is None
    deletion.refresh_from_db()
    assert deletion.status == DeletionStatus.FAILED
    assert deletion.error_code == "attempts_exhausted"
    item = ReviewItem.objects.get(
        queue=Queue.DELETIONS, target_id=str(deletion.pk), status=ItemStatus.OPEN
    )
    # The person who looks at it can ask again: a new request with a fresh report.
    review_decide(
        tenant=acme,
        item_id=item.pk,
        actor=Actor.for_user(editor, Role.EDITOR),
        verdict="acknowledge",
        payload={"retry": True},
    )
    retry = DeletionRequest.objects.exclude(pk=deletion.pk).get()
    assert (retry.status, retry.claim_id) == (DeletionStatus.PENDING, deletion.claim_id)
    assert deletion_run(deletion_id=retry.pk, worker=WORKER).report["clean"]


@pytest.mark.django_db
def test_the_sweep_wakes_a_worker_for_requests_whose_message_was_lost(
    agent, acme, settings, monkeypatch
):
    from memory.privacy import tasks as lifecycle

    sent: list[tuple] = []
    monkeypatch.setattr(
        lifecycle.deletion_run_task,
        "apply_async",
        lambda args=None, kwargs=None, queue=None, **options: sent.append((list(args), queue)),
    )
    settings.LIFECYCLE_QUEUE = "lifecycle-test"
    claim = submit(agent, predicate="locker_code_word", value=CANARY, text=f"Code {CANARY}")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )

    assert lifecycle.dispatch_due_deletions.apply().get() == 1

    assert sent == [([str(deletion.pk)], "lifecycle-test")]
    deletion_claim(deletion_id=deletion.pk, worker=WORKER)
    assert lifecycle.dispatch_due_deletions.apply().get() == 0  # leased: nothing to wake


@pytest.mark.django_db
def test_verification_without_the_words_says_so(agent, acme):
    """A worker that wiped the content and died before verifying took the words with it."""
    claim = submit(agent, predicate="locker_code_word", value=CANARY, text=f"Code {CANARY}")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=claim["id"])
    )
    lease = deletion_claim(deletion_id=deletion.pk, worker=WORKER)
    assert deletion_propagate(lease=lease, worker=WORKER) is not None
    DeletionRequest.objects.filter(pk=deletion.pk).update(lease_expires_at=timezone.now())

    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    # Unproven, so not completed: it waits for an editor.
    assert done.status == DeletionStatus.NEEDS_REVIEW
    words = next(p for p in done.report["probes"] if p["name"] == "distinctive_words")
    assert words["clean"] is False and words["result"]["available"] is False
    assert all(p["clean"] for p in done.report["probes"] if p["name"] != "distinctive_words")
    assert ReviewItem.objects.filter(queue=Queue.DELETIONS, target_id=str(deletion.pk)).exists()


@pytest.mark.django_db
def test_deleting_a_subject_costs_the_same_queries_for_10_or_1000_claims(acme, settings):
    # The probes search once per distinctive word, so the word budget is fixed here;
    # claims, events, traces and review items must not add a single query.
    settings.DELETION_PROBE_TERMS = 6
    queries = {}
    for claims in (10, 1_000):
        project = Subject.objects.create(tenant=acme, kind="project", ref=f"notes-{claims}")
        seeded = seed_subject(
            tenant=acme,
            key=f"user:counted{claims}",
            claims=claims,
            marker=f"tallymark{claims}",
            derived_subject=project,
            derived=max(2, claims // 50),
            traces=max(2, claims // 30),
            review_items=max(2, claims // 6),
        )
        deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=seeded.subject)

        with CaptureQueriesContext(connection) as captured:
            done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

        assert done.status == DeletionStatus.COMPLETED
        assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
        artifacts = done.report["artifacts"]
        assert artifacts["claims"] == {"erased": claims}
        assert artifacts["derived_claims"] == {"erased": seeded.derived, "invalidated": 0}
        assert artifacts["review_items"] == {
            "cancelled": seeded.review_items,
            "topics_erased": seeded.review_items,
        }
        assert artifacts["recall_traces"]["redacted"] == seeded.traces
        assert done.report["terms"]["count"] == 6
        assert not ReviewItem.objects.filter(
            target_type="claim", status=ItemStatus.OPEN, subject_key=f"user:counted{claims}"
        ).exists()
        queries[claims] = len(captured)
    assert queries[10] == queries[1_000], queries


@pytest.mark.slow
@pytest.mark.django_db
def test_a_subject_with_10000_claims_is_erased_in_one_pass_with_a_complete_report(acme):
    project = Subject.objects.create(tenant=acme, kind="project", ref="bulk")
    seeded = seed_subject(
        tenant=acme,
        key="user:bulk",
        claims=10_000,
        marker="vexillorama",
        derived_subject=project,
        derived=200,
        traces=300,
    )
    # Odd-numbered project notes also rest on a claim that survives: they lose a source
    # but restate nothing deleted, so they are invalidated rather than erased.
    anchor = seed_subject(tenant=acme, key="project:anchor", claims=1, marker="anchorage")
    survivor = Claim.objects.get(subject=anchor.subject)
    for note in Claim.objects.filter(subject=project, text__contains="builds on it"):
        note.derived_from.add(survivor)
    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=seeded.subject)

    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)

    assert [probe["name"] for probe in done.report["probes"]] == PROBES
    assert done.report["clean"], [p for p in done.report["probes"] if not p["clean"]]
    assert done.status == DeletionStatus.COMPLETED
    artifacts = done.report["artifacts"]
    assert artifacts["claims"] == {"erased": 10_000}
    # Notes that repeat the marker are erased with their sources, the rest invalidated.
    assert artifacts["derived_claims"] == {"erased": 100, "invalidated": 100}
    assert artifacts["events"]["redacted"] == seeded.events
    assert artifacts["recall_traces"]["redacted"] == 300
    assert artifacts["full_text_index"]["entries_cleared"] == 10_100
    assert artifacts["tombstones"]["written"] == 10_000 + 200 + seeded.events + 300
    assert AuditEvent.objects.filter(target_type="deletion").count() == 4
    assert not Claim.objects.filter(text__contains="vexillorama").exists()
    assert deletion_probes(tenant=acme, deletion=done, terms=["vexillorama"])[3]["clean"]
