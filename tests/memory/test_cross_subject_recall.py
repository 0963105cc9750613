"""Recall across subjects, for a token that lists them: one ranking, items labelled with
their subject, a trace per subject."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memory.claims.models import RecallTrace, Subject
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.memory.helpers import submit


@pytest.fixture
def household(acme, make_agent, agent):
    """Tea facts about Alice and Bob, one of Bob's scoped to a project; a token for both."""
    alice = submit(agent, predicate="drink", value="green tea", text="Alice drinks green tea")
    bob = submit(
        agent, subject="user:bob", predicate="drink", value="black tea", text="Bob drinks black tea"
    )
    scoped = submit(
        agent,
        subject="user:bob",
        predicate="office_drink",
        value="tea",
        text="At the office Bob drinks tea",
        scope={"project": "crm"},
    )
    carol = submit(agent, subject="user:carol", predicate="drink", value="tea", text="Carol tea")
    both = make_agent(
        acme,
        name="household",
        capabilities=["recall"],
        subjects=["user:alice", "user:bob"],
    )
    return {
        "alice": alice["id"],
        "bob": bob["id"],
        "scoped": scoped["id"],
        "carol": carol["id"],
        "token": both,
    }


def cross(client, status=200, **body):
    body.setdefault("query", "tea")
    response = client.post("/api/v1/recall", body, format="json")
    assert response.status_code == status, response.json()
    return response.json()


@pytest.mark.django_db
def test_one_recall_over_the_tokens_subjects_labels_each_item(household, make_agent, acme):
    token = household["token"]
    answer = cross(token, subjects=["user:alice", "user:bob"])
    labelled = {item["id"]: item["subject"] for item in answer["items"]}
    assert labelled == {household["alice"]: "user:alice", household["bob"]: "user:bob"}
    assert answer["excluded"]["out_of_scope"] == 1  # Bob's office drink, no scope asked
    assert set(answer["traces"]) == {"user:alice", "user:bob"}
    assert answer["trace_id"] == answer["traces"]["user:alice"]

    bob_trace = token.get(f"/api/v1/recall/traces/{answer['traces']['user:bob']}").json()
    assert bob_trace["subject"] == "user:bob"
    assert [r["id"] for r in bob_trace["returned"]] == [household["bob"]]
    assert bob_trace["legal_set"]["legal"] == 1
    assert bob_trace["legal_set"]["excluded"]["out_of_scope"] == 1
    alice_trace = token.get(f"/api/v1/recall/traces/{answer['traces']['user:alice']}").json()
    assert [r["id"] for r in alice_trace["returned"]] == [household["alice"]]
    assert alice_trace["legal_set"]["excluded"]["out_of_scope"] == 0
    # A token limited to Alice reads Alice's trace, never Bob's.
    alice_only = make_agent(
        acme, name="alice-only", capabilities=["recall"], subjects=["user:alice"]
    )
    assert (
        alice_only.get(f"/api/v1/recall/traces/{answer['traces']['user:bob']}").status_code == 404
    )
    assert alice_only.get(f"/api/v1/recall/traces/{answer['trace_id']}").status_code == 200
    # Uses are reported on each subject's trace.
    used = token.post(
        f"/api/v1/recall/traces/{answer['traces']['user:bob']}/used",
        {"items": [{"id": household["alice"]}]},
        format="json",
    )
    assert used.status_code == 400 and used.json()["code"] == "item_not_in_trace"


@pytest.mark.django_db
def test_a_subject_outside_the_token_or_an_unlimited_token_is_refused(household, agent):
    token = household["token"]
    outside = cross(token, 404, subjects=["user:alice", "user:carol"])
    assert outside["code"] == "not_found"
    unlimited = cross(agent, 403, subjects=["user:alice", "user:bob"])
    assert unlimited["code"] == "cross_subject_not_allowed"
    both = cross(token, 400, subject="user:alice", subjects=["user:alice", "user:bob"])
    assert both["code"] == "validation_error" and "subjects" in both["errors"]
    assert not RecallTrace.objects.exists()


@pytest.mark.django_db
def test_deleting_one_subject_redacts_only_its_trace(household, acme):
    answer = cross(household["token"], subjects=["user:alice", "user:bob"])
    worker = Actor.system("test")
    bob = Subject.objects.get(tenant=acme, kind="user", ref="bob")
    deletion, _ = deletion_request_create(tenant=acme, actor=worker, subject=bob)
    deletion_run(deletion_id=deletion.pk, worker=worker)
    bob_trace = RecallTrace.objects.get(pk=answer["traces"]["user:bob"])
    alice_trace = RecallTrace.objects.get(pk=answer["traces"]["user:alice"])
    assert bob_trace.redacted_at is not None and bob_trace.query == ""
    assert alice_trace.redacted_at is None and alice_trace.query == "tea"
