"""Reconciliation against a fake platform over loopback, in this process.

An unknown outcome is settled by reads only: found → succeeded, proven absent
→ safe_to_retry, anything else retried with backoff and finally handed to a
person. Claims are fenced by the attempt number; a poison receipt stops.
"""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent
from config.celery import app as celery_app
from memory.receipts.models.receipts import (
    ReadOutcome,
    Receipt,
    ReceiptTransition,
    ReconciliationRead,
)
from memory.receipts.reconcilers import LookupResult
from memory.receipts.reconcilers import http as http_reconciler
from memory.receipts.services import receipt_moves
from memory.receipts.services.receipt_reads import (
    receipt_reconcile_claim,
    receipt_reconcile_settle,
    receipts_reconcile,
    reconcile_backoff,
)
from memory.receipts.services.receipt_sweeps import receipts_dispatch_due
from memory.receipts.services.receipts import receipt_resolve_manual
from memory.receipts.tasks import reconcile_receipts
from reviews.models import ItemStatus, ReviewItem
from testing.fake_platform import WRITE_COMMIT_THEN_DROP, WRITE_DROP_BEFORE_COMMIT
from tests.memory.conftest import http_reconciler as reconciler_for_platform

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_reconcile")]


@pytest.fixture
def eager_celery():
    """Tasks run where they are sent, so the on-commit wake-up reconciles in the test."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


def call_platform(platform, receipt: dict) -> httpx.Response:
    """What the agent does between `submitted` and its report: one write, sent once."""
    return httpx.post(
        f"{platform.url}/articles",
        json=receipt["intent"],
        headers={"Idempotency-Key": receipt["idempotency_key"]},
        timeout=2,
    )


def plan_and_submit(agent, platform, **reconciler):
    key = f"pub-{uuid.uuid4().hex[:8]}"
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": f"{platform.url}/articles",
            "intent": {"title": "Receipts before calls", "slug": key},
            "idempotency_key": key,
            "reconciler": reconciler_for_platform(platform, **reconciler),
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    receipt = created.json()
    submitted = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json"
    )
    assert submitted.status_code == 200
    return receipt


def report_unknown(agent, receipt, error_code="connection_dropped"):
    response = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "outcome_unknown", "error_code": error_code},
        format="json",
    )
    assert response.status_code == 200, response.json()


def reconcile(receipt, worker, times=1):
    for _ in range(times):
        receipts_reconcile(receipt_ids=[receipt["id"]], worker=worker)


@pytest.fixture
def worker(actors):
    return actors.worker


def state_of(agent, receipt) -> dict:
    return agent.get(f"/api/v1/receipts/{receipt['id']}").json()


def test_a_write_committed_before_the_connection_dropped_is_found_by_key(
    agent, platform, eager_celery, django_capture_on_commit_callbacks
):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.write_mode = WRITE_COMMIT_THEN_DROP
    with pytest.raises(httpx.TransportError):
        call_platform(platform, receipt)
    # The agent does not retry the write: it reports what it knows, and the
    # commit of that report wakes reconciliation.
    with django_capture_on_commit_callbacks(execute=True):
        report_unknown(agent, receipt)
    settled = state_of(agent, receipt)
    assert settled["state"] == "succeeded"
    assert settled["external_id"] == platform.articles[receipt["idempotency_key"]]["id"]
    assert platform.writes_committed == 1
    assert platform.requests["POST"] == 1  # the agent's one write; reconciliation only read
    assert platform.reads == 1
    assert [(t["from"], t["to"]) for t in settled["transitions"]][-3:] == [
        ("submitted", "outcome_unknown"),
        ("outcome_unknown", "reconciling"),
        ("reconciling", "succeeded"),
    ]
    evidence = settled["transitions"][-1]["evidence"]
    assert evidence["status_code"] == 200
    assert evidence["method"] == "GET"
    assert evidence["response_sha256"].startswith("sha256:")
    assert evidence["url"].endswith(f"?key={receipt['idempotency_key']}")
    assert "title" not in str(evidence)  # the response body itself is never kept
    assert settled["reads"][0]["outcome"] == "found"


def test_a_write_that_never_arrived_is_safe_to_retry_when_the_platform_proves_it(
    agent, platform, worker
):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.write_mode = WRITE_DROP_BEFORE_COMMIT
    with pytest.raises(httpx.TransportError):
        call_platform(platform, receipt)
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "safe_to_retry"
    assert settled["transitions"][-1]["reason"] == "absence_proven"
    assert platform.writes_committed == 0
    assert platform.requests["POST"] == 1


def test_without_a_proof_of_absence_it_goes_to_a_person_after_n_reads(agent, platform, worker):
    receipt = plan_and_submit(agent, platform)  # no absence_proof: a 404 proves nothing
    platform.write_mode = WRITE_DROP_BEFORE_COMMIT
    with pytest.raises(httpx.TransportError):
        call_platform(platform, receipt)
    report_unknown(agent, receipt)
    reconcile(receipt, worker, times=4)
    assert state_of(agent, receipt)["state"] == "reconciling"
    reconcile(receipt, worker, times=3)  # the fifth read is the last
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["reconcile_attempts"] == 5
    assert [r["error_code"] for r in settled["reads"]] == ["not_found_unproven"] * 5
    assert settled["transitions"][-1]["reason"] == "attempts_exhausted"
    assert platform.reads == 5
    assert platform.requests["POST"] == 1
    item = ReviewItem.objects.get(queue="manual_review", target_id=receipt["id"])
    assert item.status == ItemStatus.OPEN
    assert item.reason_codes == ["attempts_exhausted"]


def test_the_attempt_cap_is_configurable(agent, platform, worker, settings):
    settings.RECONCILE_MAX_ATTEMPTS = 2
    receipt = plan_and_submit(agent, platform)
    report_unknown(agent, receipt)
    reconcile(receipt, worker, times=3)
    assert state_of(agent, receipt)["state"] == "manual_review"
    assert platform.reads == 2


def test_a_search_answering_an_empty_list_can_prove_absence(agent, platform, worker):
    # The platform's admin registered its search by key as the proof.
    receipt = plan_and_submit(agent, platform, proven_by="search_by_key")
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    assert state_of(agent, receipt)["state"] == "safe_to_retry"


def test_two_matches_for_one_key_go_to_a_person(agent, platform, worker):
    receipt = plan_and_submit(
        agent, platform, lookup_url=platform.lookup_url("search"), absence_proof="empty_list"
    )
    platform.seed(receipt["idempotency_key"])
    platform.duplicated_keys.add(receipt["idempotency_key"])
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "ambiguous_match"
    assert settled["reads"][0]["evidence"]["matches"] == 2


def test_errors_are_retried_with_backoff_until_the_platform_answers(
    agent, platform, worker, settings
):
    settings.RECONCILE_BACKOFF_BASE_SECONDS = 30
    settings.RECONCILE_BACKOFF_MAX_SECONDS = 3600
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    article_id = platform.seed(receipt["idempotency_key"])
    platform.failing_reads = 1
    report_unknown(agent, receipt)
    before = timezone.now()
    reconcile(receipt, worker)
    retrying = state_of(agent, receipt)
    assert retrying["state"] == "reconciling"
    assert retrying["error_code"] == "http_503"
    delay = (
        timezone.datetime.fromisoformat(retrying["next_reconcile_at"]) - before
    ).total_seconds()
    assert 15 <= delay <= 31
    reconcile(receipt, worker)  # not due yet: nothing is read
    assert platform.reads == 1
    out = io.StringIO()
    call_command("reconcile", receipt=uuid.UUID(receipt["id"]), stdout=out)
    assert f"{receipt['id']}  succeeded" in out.getvalue()
    settled = state_of(agent, receipt)
    assert settled["state"] == "succeeded" and settled["external_id"] == article_id
    assert [r["outcome"] for r in settled["reads"]] == ["undetermined", "found"]


def test_a_read_that_times_out_is_inconclusive(agent, platform, worker):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.failing_reads = 1
    platform.stall_seconds = 1.5  # past the 1 s timeout
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "reconciling"
    assert settled["reads"][0]["error_code"] == "timeout"
    reconcile(receipt, worker)
    assert state_of(agent, receipt)["state"] == "safe_to_retry"


def test_an_unreachable_platform_is_inconclusive(agent, platform, worker):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    report_unknown(agent, receipt)
    platform.stop()
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "reconciling"
    assert settled["reads"][0]["error_code"] == "connection_error"


def test_an_oversized_answer_is_inconclusive(agent, platform, worker, settings):
    settings.RECONCILE_HTTP_MAX_RESPONSE_BYTES = 10
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.seed(receipt["idempotency_key"])
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    assert state_of(agent, receipt)["reads"][0]["error_code"] == "response_too_large"


def test_lookup_values_are_url_encoded(agent, platform, worker):
    key = "pub/2026 08?x=1&y"
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": platform.url,
            "intent": {"slug": "s"},
            "idempotency_key": key,
            "reconciler": reconciler_for_platform(platform, proven_by="status_lookup"),
        },
        format="json",
    ).json()
    platform.seed(key)
    agent.post(f"/api/v1/receipts/{created['id']}/transitions", {"to": "submitted"}, format="json")
    report_unknown(agent, created)
    reconcile(created, worker)
    assert platform.reads_by_key == {key: 1}
    assert state_of(agent, created)["state"] == "succeeded"


def test_a_lookup_by_external_id_needs_one(agent, platform, worker):
    receipt = plan_and_submit(
        agent, platform, lookup_url=f"{platform.url}/articles/{{external_id}}"
    )
    report_unknown(agent, receipt)
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "lookup_value_missing"
    assert platform.reads == 0


def test_the_manual_reconciler_hands_every_unknown_outcome_to_a_person(agent, worker):
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": "comments.create",
            "target": "https://forum.example",
            "intent": {"text": "hi"},
            "idempotency_key": "c-1",
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    ).json()
    agent.post(f"/api/v1/receipts/{created['id']}/transitions", {"to": "submitted"}, format="json")
    report_unknown(agent, created)
    reconcile(created, worker)
    settled = state_of(agent, created)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "manual_reconciler"
    assert ReviewItem.objects.filter(queue="manual_review", target_id=created["id"]).exists()


def test_past_the_key_retention_window_absence_proves_nothing(agent, platform, worker):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup", key_retention_seconds=60)
    report_unknown(agent, receipt)

    Receipt.objects.filter(pk=receipt["id"]).update(
        submitted_at=timezone.now() - timedelta(minutes=5)
    )
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "key_retention_expired"


def test_a_found_effect_with_another_id_than_reported_goes_to_a_person(
    agent, platform, worker, acme, actors
):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.seed(receipt["idempotency_key"])
    agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions",
        {"to": "outcome_unknown", "external_id": "art_reported"},
        format="json",
    )
    reconcile(receipt, worker)
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["external_id"] == "art_reported"
    assert settled["transitions"][-1]["reason"] == "external_id_mismatch"
    # The editor who checks the platform may correct the id; the old one is audited.

    platform_id = platform.articles[receipt["idempotency_key"]]["id"]
    resolved = receipt_resolve_manual(
        tenant=acme,
        receipt_id=receipt["id"],
        actor=actors.editor,
        verdict="succeeded",
        reason="the platform's id is the right one",
        external_id=platform_id,
    )
    assert resolved.external_id == platform_id
    audit = AuditEvent.objects.get(verb="receipt.resolved", target_id=receipt["id"])
    assert audit.data["replaced_external_id"] == "art_reported"


# -- claims, leases and fencing ---------------------------------------------------------


def test_a_stale_workers_late_result_is_fenced_off(agent, platform, actors):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    report_unknown(agent, receipt)
    slow, fast = Actor.system("slow worker"), Actor.system("fast worker")
    first = receipt_reconcile_claim(receipt_id=receipt["id"], worker=slow)
    assert first is not None and first.attempt == 1
    # While the lease is live, nobody else can claim it.
    assert receipt_reconcile_claim(receipt_id=receipt["id"], worker=fast) is None
    later = timezone.now() + timedelta(seconds=120)
    second = receipt_reconcile_claim(receipt_id=receipt["id"], worker=fast, now=later)
    assert second is not None and second.attempt == 2

    found = LookupResult(ReadOutcome.FOUND, external_id="art_1", evidence={"attempt": 1})
    absent = LookupResult(ReadOutcome.ABSENT, evidence={"attempt": 2})
    assert receipt_reconcile_settle(claim=first, result=found, worker=slow) is None
    settled = receipt_reconcile_settle(claim=second, result=absent, worker=fast)
    assert settled is not None and settled.state == "safe_to_retry"
    # Even after the receipt settled, the stale result stays discarded.
    assert receipt_reconcile_settle(claim=first, result=found, worker=slow) is None
    assert list(
        ReconciliationRead.objects.filter(receipt_id=receipt["id"]).values_list("worker", "attempt")
    ) == [("fast worker", 2)]
    outcomes = ReceiptTransition.objects.filter(receipt_id=receipt["id"], from_state="reconciling")
    assert [t.to_state for t in outcomes] == ["safe_to_retry"]


def test_a_receipt_that_kills_its_worker_every_time_stops_at_the_cap(agent, platform, actors):
    receipt = plan_and_submit(agent, platform, proven_by="status_lookup")
    report_unknown(agent, receipt)
    now = timezone.now()
    for attempt in range(1, 6):
        # Claimed, then the worker dies: no settle, the lease just runs out.
        claim = receipt_reconcile_claim(receipt_id=receipt["id"], worker=actors.worker, now=now)
        assert claim is not None and claim.attempt == attempt
        now += timedelta(seconds=120)
    assert receipt_reconcile_claim(receipt_id=receipt["id"], worker=actors.worker, now=now) is None
    settled = state_of(agent, receipt)
    assert settled["state"] == "manual_review"
    assert settled["transitions"][-1]["reason"] == "attempts_exhausted"
    assert ReviewItem.objects.filter(queue="manual_review", target_id=receipt["id"]).exists()


def test_a_reconciler_that_crashes_costs_an_attempt_not_the_chunk(
    agent, platform, worker, monkeypatch
):
    poison = plan_and_submit(agent, platform, proven_by="status_lookup")
    healthy = plan_and_submit(agent, platform, proven_by="status_lookup")
    report_unknown(agent, poison)
    report_unknown(agent, healthy)
    original = http_reconciler.HttpReconciler.lookup

    def lookup(self, target):
        if str(target.receipt_id) == poison["id"]:
            raise RuntimeError("adapter bug")
        return original(self, target)

    monkeypatch.setattr(http_reconciler.HttpReconciler, "lookup", lookup)
    report = receipts_reconcile(receipt_ids=[poison["id"], healthy["id"]], worker=worker)
    assert report.claimed == 2 and report.states == {"reconciling": 1, "safe_to_retry": 1}
    for _ in range(4):
        receipts_reconcile(receipt_ids=[poison["id"]], worker=worker)
    settled = state_of(agent, poison)
    assert settled["state"] == "manual_review"
    assert {r["error_code"] for r in settled["reads"]} == {"reconciler_error"}


def test_a_chunk_stops_at_its_deadline_and_reports_the_rest(agent, platform, worker):
    receipts = [plan_and_submit(agent, platform, proven_by="status_lookup") for _ in range(3)]
    for receipt in receipts:
        report_unknown(agent, receipt)
    report = receipts_reconcile(
        receipt_ids=[r["id"] for r in receipts], worker=worker, deadline=0.0
    )
    assert report.claimed == 0
    assert report.unprocessed == [r["id"] for r in receipts]


def test_backoff_is_exponential_capped_and_jittered(settings):
    settings.RECONCILE_BACKOFF_BASE_SECONDS = 10
    settings.RECONCILE_BACKOFF_MAX_SECONDS = 60
    for attempt, ceiling in [(1, 10), (2, 20), (3, 40), (4, 60), (9, 60)]:
        delays = {reconcile_backoff(attempt).total_seconds() for _ in range(20)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays), (attempt, delays)
        assert len(delays) > 1


def test_due_receipts_are_dispatched_in_chunks_on_the_reconcile_queue(
    agent, platform, settings, monkeypatch
):
    settings.RECONCILE_CHUNK_SIZE = 2
    settings.RECONCILE_QUEUE = "reconcile-test"
    sent: list[tuple] = []
    monkeypatch.setattr(
        reconcile_receipts,
        "apply_async",
        lambda args=None, kwargs=None, **options: sent.append({"args": args, **options}),
    )
    receipts = [plan_and_submit(agent, platform) for _ in range(5)]
    for receipt in receipts:
        report_unknown(agent, receipt)
    assert receipts_dispatch_due() == 5
    assert [len(call["args"][0]) for call in sent] == [2, 2, 1]
    assert {call["queue"] for call in sent} == {"reconcile-test"}
    assert sorted(i for call in sent for i in call["args"][0]) == sorted(r["id"] for r in receipts)


def test_the_reconcile_command_runs_one_pass(agent, platform, actors, monkeypatch):
    monkeypatch.setattr(receipt_moves, "reconciliation_enqueue", lambda *, receipt_ids: 0)
    lapsed = plan_and_submit(agent, platform, proven_by="status_lookup")

    Receipt.objects.filter(pk=lapsed["id"]).update(
        submit_lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    found = plan_and_submit(agent, platform, proven_by="status_lookup")
    platform.seed(found["idempotency_key"])
    report_unknown(agent, found)
    out = io.StringIO()
    call_command("reconcile", stdout=out)
    text = out.getvalue()
    assert "1 submitted receipt(s) became outcome_unknown" in text
    assert f"{lapsed['id']}  safe_to_retry" in text
    assert f"{found['id']}  succeeded" in text
    assert "claimed 2" in text
    assert platform.requests["POST"] == 0


def test_the_reconcile_command_refuses_an_unknown_receipt():
    with pytest.raises(CommandError, match="no receipt"):
        call_command("reconcile", receipt=uuid.uuid4())


def test_beat_runs_both_sweeps_on_the_reconcile_queue(settings):
    schedule = settings.CELERY_BEAT_SCHEDULE
    tasks = {entry["task"]: entry for entry in schedule.values()}
    for name in ("memory.receipts_expire_submit_leases", "memory.receipts_dispatch_due"):
        assert name in tasks
        assert name in celery_app.tasks
        assert tasks[name]["options"]["queue"] == settings.RECONCILE_QUEUE
    chunk_task = celery_app.tasks["memory.reconcile_receipts"]
    assert chunk_task.acks_late and chunk_task.reject_on_worker_lost
    assert settings.CELERY_WORKER_PREFETCH_MULTIPLIER == 1
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility >= 2 * settings.CELERY_TASK_TIME_LIMIT
