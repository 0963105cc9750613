"""Idempotency-Key through the real server: replay, reuse and concurrent duplicates."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from accounts.actors import Actor
from accounts.services import agent_token_create
from common.fingerprints import erased_marker
from common.models import IdempotencyRecord
from memory.claims.models import Claim, Event
from memory.privacy.models import DeletionStatus
from memory.privacy.services.deletion import deletion_run
from tests.dump import tables_containing
from tests.memory.helpers import candidate

EVENT = {
    "subject": "user:alice",
    "kind": "user_statement",
    "text": "I live in Shanghai",
    "observed_at": "2026-11-01T00:00:00Z",
}


@pytest.mark.django_db
def test_replay_returns_the_original_answer(agent):
    first = agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    again = agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert Event.objects.count() == 1


@pytest.mark.django_db
def test_same_key_other_body_is_409(agent):
    agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    other = agent.post(
        "/api/v1/events", {**EVENT, "text": "I moved"}, format="json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_key_reused"
    assert Event.objects.count() == 1


@pytest.mark.django_db
def test_failed_request_frees_the_key(agent):
    bad = agent.post(
        "/api/v1/events", {**EVENT, "kind": ""}, format="json", HTTP_IDEMPOTENCY_KEY="k2"
    )
    assert bad.status_code == 400
    good = agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert good.status_code == 201


@pytest.mark.django_db
def test_keys_are_scoped_to_the_token(acme, make_agent):
    one = make_agent(acme, name="one")
    two = make_agent(acme, name="two")
    assert (
        one.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k").status_code
        == 201
    )
    assert (
        two.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY="k").status_code
        == 201
    )
    assert Event.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_run_once(live_server, acme):
    secret = agent_token_create(tenant=acme, name="racer").secret
    items = [candidate(predicate=f"fact_{n}", value=str(n), text=f"fact {n}") for n in range(150)]

    def send(_: int) -> httpx.Response:
        return httpx.post(
            f"{live_server.url}/api/v1/claims:batch",
            json={"items": items},
            headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": "batch-1"},
            timeout=120,
        )

    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(send, range(6)))
    statuses = sorted(r.status_code for r in responses)
    codes = {r.json().get("code") for r in responses if r.status_code == 409}
    assert statuses.count(200) >= 1
    assert codes <= {"request_in_progress"}
    assert 409 in statuses, statuses
    assert Claim.objects.count() == 150
    replay = send(0)
    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert Claim.objects.count() == 150


@pytest.mark.django_db
def test_a_key_a_deletion_replaced_is_still_answered_and_never_runs_again(
    agent, alice, session_api
):
    said = {**EVENT, "text": "My locker word is plinthwarble"}
    first = agent.post("/api/v1/events", said, format="json", HTTP_IDEMPOTENCY_KEY="plinthwarble")
    assert first.status_code == 201, first.json()
    claim = agent.post(
        "/api/v1/claims",
        candidate(
            first.json()["id"],
            kind="fact",
            predicate="locker_word",
            value="plinthwarble",
            text="Alice's locker word is plinthwarble",
            authority="agent_inferred",
            basis="inference",
        ),
        format="json",
    )
    assert claim.status_code == 201, claim.json()
    deletion = session_api(alice).delete(f"/api/v1/me/memories/{claim.json()['id']}")
    done = deletion_run(deletion_id=deletion.json()["deletion"], worker=Actor.system("test"))
    assert done.status == DeletionStatus.COMPLETED, done.report["probes"]
    record = IdempotencyRecord.objects.get()
    assert record.key == erased_marker("plinthwarble") and record.response_status == 201
    assert record.response_body == {"id": first.json()["id"], "redacted": True}

    again = agent.post("/api/v1/events", said, format="json", HTTP_IDEMPOTENCY_KEY="plinthwarble")
    assert again.status_code == 409
    assert again.json()["code"] == "idempotent_reply_erased"
    assert again.json()["id"] == first.json()["id"] and again.json()["original_status"] == 201
    other = agent.post(
        "/api/v1/events",
        {**said, "text": "I moved"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="plinthwarble",
    )
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"
    assert Event.objects.count() == 1 and IdempotencyRecord.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "key",
    [
        "ghp_JBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0RlgLK",
        "AKIA-UJZD-EGXD-NCF3-2EPF",
        "token=9fQ2xLr7Vb8KpZ3mWq1N",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
    ids=["github", "grouped_aws", "assignment", "jwt"],
)
def test_a_key_holding_a_credential_is_refused_and_stored_nowhere(agent, key):
    response = agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "secret_in_header"
    assert key not in response.content.decode()
    assert not IdempotencyRecord.objects.exists() and not Event.objects.exists()
    assert tables_containing(key[5:20]) == {}


@pytest.mark.django_db
def test_a_random_key_is_no_credential(agent):
    key = "550e8400-e29b-41d4-a716-446655440000"
    response = agent.post("/api/v1/events", EVENT, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 201
    assert IdempotencyRecord.objects.get().key == key
