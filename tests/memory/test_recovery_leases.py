"""One recovery at a time: a run sent to act holds the task's lease; a concurrent
trigger is told `in_progress`, never a second `resume`; a run's own second trigger
is folded into its first answer."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from accounts.models import AuditEvent
from memory.receipts.models import RecoveryLease

FINGERPRINT = "sha256:inputs-of-2026-08-16"


def ask(agent, task_key: str, run_id: str = "", **extra: Any) -> dict[str, Any]:
    body = {"task_key": task_key, "input_fingerprint": FINGERPRINT, **extra}
    if run_id:
        body["run_id"] = run_id
    response = agent.post("/api/v1/recovery", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def save_failed_build(agent, task_key: str) -> None:
    saved = agent.put(
        f"/api/v1/checkpoints/{task_key}",
        {"run_id": "run-0", "input_fingerprint": FINGERPRINT, "stage": "build",
         "retry_count": 1, "max_retries": 3},
        format="json",
    )  # fmt: skip
    assert saved.status_code == 200, saved.json()


def race(live_server, secret: str, task_key: str, runs: int) -> list[dict[str, Any]]:
    """`runs` triggers of one task asking at the same instant, each on its own connection."""
    start = threading.Barrier(runs)

    def trigger(n: int) -> dict[str, Any]:
        start.wait()
        response = httpx.post(
            f"{live_server.url}/api/v1/recovery",
            json={"task_key": task_key, "input_fingerprint": FINGERPRINT, "run_id": f"run-{n}"},
            headers={"Authorization": f"Bearer {secret}"},
            timeout=60,
        )
        assert response.status_code == 200, response.text
        return response.json()

    with ThreadPoolExecutor(max_workers=runs) as pool:
        return list(pool.map(trigger, range(runs)))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("saved", "held_before"),
    [(True, False), (False, False), (True, True), (False, True)],
    ids=["resume", "fresh", "resume-after-a-release", "fresh-after-a-release"],
)
def test_racing_triggers_get_one_go_ahead_and_the_rest_in_progress(
    live_server, acme, make_agent, saved, held_before
):
    scheduler = make_agent(acme, name="scheduler")
    task_key = "daily-publish"
    if saved:
        # A failed build with retries left: each trigger alone would be told `resume`.
        save_failed_build(scheduler, task_key)
    expected = ("resume", "incomplete_stage") if saved else ("fresh", "no_checkpoint")
    if held_before:
        # Yesterday's run held the lease and released it: the racers find its row
        # (no insert to collide on) and must take turns on its lock.
        assert ask(scheduler, task_key, run_id="yesterday")["lease"]["holder"] == "yesterday"
        released = scheduler.post(
            "/api/v1/recovery/release", {"task_key": task_key, "run_id": "yesterday"},
            format="json",
        )  # fmt: skip
        assert released.status_code == 200
    audited = AuditEvent.objects.filter(tenant=acme, verb="recovery.lease_taken")
    before = audited.count()

    answers = race(live_server, scheduler.secret, task_key, runs=8)

    go = [a for a in answers if (a["decision"], a["reason"]) == expected]
    waiting = [a for a in answers if a["decision"] == "in_progress"]
    assert len(go) == 1, answers
    assert len(waiting) == 7, answers
    winner = go[0]["lease"]["holder"]
    lease = RecoveryLease.objects.get(tenant=acme, task_key=task_key)
    assert (lease.holder, lease.decision) == (winner, expected[0])
    for answer in waiting:
        assert answer["reason"] == "lease_held"
        assert answer["folded"] is False
        assert answer["lease"]["holder"] == winner
        assert answer["lease"]["expires_at"] == go[0]["lease"]["expires_at"]
    assert [event.data["run_id"] for event in audited.order_by("id")[before:]] == [winner]


@pytest.mark.django_db
def test_a_second_trigger_of_the_same_run_is_folded(agent, acme):
    save_failed_build(agent, "t")
    first = ask(agent, "t", run_id="run-7")
    assert (first["decision"], first["folded"]) == ("resume", False)
    assert first["lease"]["holder"] == "run-7"
    again = ask(agent, "t", run_id="run-7")
    assert (again["decision"], again["reason"], again["folded"]) == (
        "resume",
        "incomplete_stage",
        True,
    )
    assert again["lease"]["folded_triggers"] == 1
    assert again["lease"]["expires_at"] == first["lease"]["expires_at"]
    assert RecoveryLease.objects.filter(tenant=acme).count() == 1
    # The folded trigger took no second lease.
    assert AuditEvent.objects.filter(verb="recovery.lease_taken").count() == 1


@pytest.mark.django_db
def test_a_caller_without_run_id_is_told_in_progress_while_a_run_holds_it(agent):
    save_failed_build(agent, "t")
    assert ask(agent, "t")["decision"] == "resume"  # nobody holds it: the usual answer
    assert RecoveryLease.objects.count() == 0  # and asking without a run wrote nothing
    ask(agent, "t", run_id="run-1")
    answer = ask(agent, "t")
    assert (answer["decision"], answer["reason"]) == ("in_progress", "lease_held")
    assert answer["lease"]["holder"] == "run-1"


@pytest.mark.django_db
def test_release_lets_the_next_trigger_decide(agent, acme):
    save_failed_build(agent, "t")
    ask(agent, "t", run_id="run-1")
    assert ask(agent, "t", run_id="run-2")["decision"] == "in_progress"

    # Only the holder releases; another run's release is a 404 and changes nothing.
    refused = agent.post(
        "/api/v1/recovery/release", {"task_key": "t", "run_id": "run-2"}, format="json"
    )
    assert refused.status_code == 404
    assert refused.json()["code"] == "not_found"
    assert ask(agent, "t", run_id="run-2")["decision"] == "in_progress"

    released = agent.post(
        "/api/v1/recovery/release", {"task_key": "t", "run_id": "run-1"}, format="json"
    )
    assert released.status_code == 200, released.json()
    assert released.json()["released_at"] is not None
    answer = ask(agent, "t", run_id="run-2")
    assert (answer["decision"], answer["lease"]["holder"]) == ("resume", "run-2")
    verbs = list(
        AuditEvent.objects.filter(tenant=acme, verb__startswith="recovery.")
        .order_by("id")
        .values_list("verb", "data__run_id")
    )
    assert verbs == [
        ("recovery.lease_taken", "run-1"),
        ("recovery.lease_released", "run-1"),
        ("recovery.lease_taken", "run-2"),
    ]
    again = agent.post(
        "/api/v1/recovery/release", {"task_key": "t", "run_id": "run-1"}, format="json"
    )
    assert again.status_code == 404


@pytest.mark.django_db
def test_an_expired_lease_is_nobodys(agent):
    save_failed_build(agent, "t")
    first = ask(agent, "t", run_id="run-1", lease_seconds=1)
    assert first["lease"]["holder"] == "run-1"
    time.sleep(1.2)
    answer = ask(agent, "t", run_id="run-2")
    assert (answer["decision"], answer["folded"]) == ("resume", False)
    assert answer["lease"]["holder"] == "run-2"


@pytest.mark.django_db
def test_answers_with_nothing_to_do_take_no_lease(agent):
    saved = agent.put(
        "/api/v1/checkpoints/done",
        {"input_fingerprint": FINGERPRINT, "stage": "verify", "stage_complete": True},
        format="json",
    )
    assert saved.status_code == 200
    for run in ("run-1", "run-2"):
        answer = ask(agent, "done", run_id=run)
        assert (answer["decision"], answer["lease"]) == ("no_op", None)
    assert not RecoveryLease.objects.filter(holder__gt="").exists()


@pytest.mark.django_db
def test_another_token_learns_nothing_of_a_lease(agent, make_agent, acme):
    save_failed_build(agent, "t")
    ask(agent, "t", run_id="run-1")
    colleague = make_agent(acme, name="colleague", capabilities=["checkpoints:write"])
    answer = ask(colleague, "t", run_id="run-9")
    assert (answer["decision"], answer["reason"], answer["lease"]) == (
        "fresh",
        "no_checkpoint",
        None,
    )
    assert RecoveryLease.objects.get().holder == "run-1"
    refused = colleague.post(
        "/api/v1/recovery/release", {"task_key": "t", "run_id": "run-1"}, format="json"
    )
    assert refused.status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{"lease_seconds": 0}, {"lease_seconds": 86_401}])
def test_bad_lease_lengths_are_refused(agent, body):
    response = agent.post(
        "/api/v1/recovery",
        {"task_key": "t", "input_fingerprint": FINGERPRINT, "run_id": "r", **body},
        format="json",
    )
    assert response.status_code == 400
    assert "lease_seconds" in response.json()["errors"]
    assert not RecoveryLease.objects.exists()
