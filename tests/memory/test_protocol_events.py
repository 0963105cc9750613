"""Protocol events: a step of a run on `POST /api/v1/events`, checked, stored in its own
columns, answered back, and found again with `GET /api/v1/events`."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from memory.claims.models import Event
from tests.common.test_bad_input import assert_problem

pytestmark = pytest.mark.django_db


def step(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "subject": "project:blog",
        "run_id": "run-42",
        "kind": "verified",
        "text": "The commit is on origin/main",
        "observed_at": timezone.now().isoformat(),
        "stage": "push",
        "input_fingerprint": "sha256:weekly-2026-33",
        "policy_version": "publish-policy-3",
        "idempotency_key": "pub-2026-08-16-a",
        "effect": {"system": "git", "operation": "push", "reference": "4f9a2c1"},
        "evidence": [
            {
                "uri": "https://git.example/blog/commit/4f9a2c1",
                "observed_at": timezone.now().isoformat(),
                "digest": "sha256:abc",
                "excerpt": "main now points at 4f9a2c1",
            }
        ],
    }
    body.update(overrides)
    return body


def test_a_step_is_stored_in_its_columns_and_answered_back(agent):
    response = agent.post("/api/v1/events", step(), format="json")
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert answer["stage"] == "push"
    assert answer["effect"] == {"system": "git", "operation": "push", "reference": "4f9a2c1"}
    assert answer["evidence"][0]["uri"] == "https://git.example/blog/commit/4f9a2c1"
    stored = Event.objects.get(pk=answer["id"])
    assert (stored.kind, stored.stage, stored.idempotency_key, stored.policy_version) == (
        "verified",
        "push",
        "pub-2026-08-16-a",
        "publish-policy-3",
    )
    assert stored.input_fingerprint == "sha256:weekly-2026-33"
    assert stored.effect["reference"] == "4f9a2c1"
    assert stored.evidence[0]["excerpt"] == "main now points at 4f9a2c1"
    assert agent.get(f"/api/v1/events/{stored.pk}").json()["stage"] == "push"


def test_an_ordinary_event_keeps_its_free_kind_and_its_digest(agent):
    """Old kinds stay accepted, and an event without protocol fields digests as before."""
    plain = {
        "subject": "user:alice",
        "kind": "user_statement",
        "text": "I moved to Shanghai last year",
        "observed_at": "2026-01-01T00:00:00+00:00",
    }
    response = agent.post("/api/v1/events", plain, format="json")
    assert response.status_code == 201
    answer = response.json()
    assert (answer["stage"], answer["effect"], answer["evidence"]) == ("", None, [])
    from common.fingerprints import fingerprint

    assert answer["digest"] == fingerprint(
        {
            "subject": "user:alice",
            "kind": "user_statement",
            "text": "I moved to Shanghai last year",
            "body": {},
            "source_uri": "",
            "observed_at": "2026-01-01T00:00:00+00:00",
        }
    )


BAD_STEPS = [
    ({"kind": "user_statement"}, "kind"),
    ({"kind": "published"}, "kind"),
    ({"stage": "Push Now"}, "stage"),
    ({"kind": "verified", "evidence": []}, "evidence"),
    ({"stage": ""}, "stage"),
]


@pytest.mark.parametrize(("change", "field"), BAD_STEPS)
def test_a_malformed_step_is_refused_with_a_stable_code_and_stores_nothing(agent, change, field):
    response = agent.post("/api/v1/events", step(**change), format="json")
    body = assert_problem(response, 400, "protocol_event_invalid")
    assert field in body["errors"]
    assert not Event.objects.exists()


def test_protocol_fields_of_the_wrong_type_are_a_validation_error(agent):
    for change in (
        {"effect": "git push"},
        {"effect": {"system": "git", "operation": "push"}},
        {"evidence": [{"uri": "x"}]},
        {"evidence": "x"},
    ):
        response = agent.post("/api/v1/events", step(**change), format="json")
        assert_problem(response, 400, "validation_error")
    assert not Event.objects.exists()


def test_a_credential_in_a_protocol_field_is_refused(agent):
    leaked = {"system": "git", "operation": "push", "reference": "ghp_" + "a1B2" * 9}
    response = agent.post("/api/v1/events", step(effect=leaked), format="json")
    assert_problem(response, 400, "secret_detected")
    assert not Event.objects.exists()


def test_steps_are_searchable_by_run_stage_kind_and_key(agent):
    made = {
        "push": agent.post("/api/v1/events", step(), format="json").json(),
        "draft": agent.post(
            "/api/v1/events",
            step(stage="draft", kind="succeeded", idempotency_key="", effect=None, evidence=[]),
            format="json",
        ).json(),
        "other run": agent.post(
            "/api/v1/events", step(run_id="run-43", idempotency_key="pub-b"), format="json"
        ).json(),
    }
    agent.post(
        "/api/v1/events",
        {"subject": "user:alice", "kind": "user_statement", "text": "hello", "run_id": "run-42",
         "observed_at": timezone.now().isoformat()},
        format="json",
    )  # fmt: skip

    def ids(query: str) -> list[str]:
        response = agent.get(f"/api/v1/events?{query}")
        assert response.status_code == 200, response.json()
        return [event["id"] for event in response.json()["results"]]

    assert ids("stage=push") == [made["other run"]["id"], made["push"]["id"]]
    assert ids("stage=push&run_id=run-42") == [made["push"]["id"]]
    assert ids("idempotency_key=pub-2026-08-16-a") == [made["push"]["id"]]
    assert ids("kind=succeeded") == [made["draft"]["id"]]
    assert len(ids("run_id=run-42")) == 3
    assert ids("stage=deploy") == []
    assert_problem(agent.get("/api/v1/events?stage="), 400, "validation_error")


def test_the_list_pages_with_a_cursor(agent):
    for number in range(5):
        agent.post("/api/v1/events", step(idempotency_key=f"k-{number}"), format="json")
    first = agent.get("/api/v1/events?stage=push&limit=2").json()
    assert len(first["results"]) == 2 and first["next"]
    seen = [event["idempotency_key"] for event in first["results"]]
    following = first["next"]
    while following:
        page = agent.get(following).json()
        seen += [event["idempotency_key"] for event in page["results"]]
        following = page["next"]
    assert seen == [f"k-{number}" for number in reversed(range(5))]


def test_the_list_shows_only_the_tokens_subjects_and_tenant(acme, make_agent, agent, globex_agent):
    agent.post("/api/v1/events", step(), format="json")
    agent.post("/api/v1/events", step(subject="project:wiki"), format="json")
    narrow = make_agent(acme, name="wiki-only", subjects=["project:wiki"])
    listed = narrow.get("/api/v1/events?stage=push").json()["results"]
    assert [event["subject"] for event in listed] == ["project:wiki"]
    assert_problem(narrow.get("/api/v1/events?subject=project:blog"), 404, "not_found")
    assert globex_agent.get("/api/v1/events?stage=push").json()["results"] == []


def test_forgetting_a_subject_clears_its_steps_protocol_words(acme, agent):
    from accounts.actors import Actor
    from memory.claims.models import Subject
    from memory.privacy.services.deletion import deletion_request_create, deletion_run

    made = agent.post("/api/v1/events", step(subject="user:alice"), format="json").json()
    worker = Actor.system("test lifecycle worker")
    requested, _ = deletion_request_create(
        tenant=acme, actor=worker, subject=Subject.objects.get(kind="user", ref="alice")
    )
    deletion_run(deletion_id=requested.pk, worker=worker)
    event = Event.objects.get(pk=made["id"])
    assert event.redacted_at is not None
    assert (event.stage, event.idempotency_key, event.effect, event.evidence) == ("", "", None, [])
    # A redacted step is listed no more, whatever it was filed under.
    assert agent.get("/api/v1/events?stage=push").json()["results"] == []
