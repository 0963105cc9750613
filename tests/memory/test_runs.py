"""Run snapshots over the API: registered once, named by receipts and checkpoints, shown
with them and the run's events; and the idempotency key memdesk derives for a receipt
that names none."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from accounts.models import AuditEvent
from memory.receipts.models import Checkpoint, Receipt, Run
from tests.common.test_bad_input import assert_problem

pytestmark = pytest.mark.django_db

SNAPSHOT = {
    "run_id": "run-42",
    "input_digest": "sha256:weekly-2026-33",
    "summary": "Weekly digest from posts/2026-33.md to main",
    "policy_version": "publish-policy-3",
    "source_versions": {"post": "sha256:1b4f0e98", "template": "v12"},
}


def register(agent, **overrides: Any) -> dict[str, Any]:
    response = agent.post("/api/v1/runs", {**SNAPSHOT, **overrides}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def plan(agent, **body: Any) -> Any:
    body.setdefault("operation", "articles.create")
    body.setdefault("target", "https://blog.example/api/articles")
    body.setdefault("intent", {"title": "Receipts before calls"})
    return agent.post("/api/v1/receipts", body, format="json")


def test_a_run_is_registered_once_and_its_snapshot_never_changes(agent):
    run = register(agent)
    assert run["input_digest"] == "sha256:weekly-2026-33"
    assert run["source_versions"] == {"post": "sha256:1b4f0e98", "template": "v12"}
    assert AuditEvent.objects.filter(verb="run.registered", target_id=run["id"]).count() == 1
    again = agent.post("/api/v1/runs", SNAPSHOT, format="json")
    assert again.status_code == 200 and again.json()["id"] == run["id"]
    changed = agent.post(
        "/api/v1/runs", {**SNAPSHOT, "input_digest": "sha256:other"}, format="json"
    )
    assert_problem(changed, 409, "run_id_reused")
    stored = Run.objects.get()
    assert stored.input_digest == "sha256:weekly-2026-33"


def test_a_secret_in_a_run_snapshot_stores_nothing(agent):
    leaked = "token ghp_" + "a1B2" * 9
    for field in ("summary", "source_versions"):
        value: Any = leaked if field == "summary" else {"repo": leaked}
        response = agent.post("/api/v1/runs", {**SNAPSHOT, field: value}, format="json")
        body = assert_problem(response, 400, "secret_detected")
        assert field in body["errors"]
    assert_problem(
        agent.post("/api/v1/runs", {**SNAPSHOT, "input_digest": ""}, format="json"),
        400,
        "validation_error",
    )
    assert not Run.objects.exists()
    assert not AuditEvent.objects.filter(verb="run.registered").exists()


def test_receipts_and_checkpoints_name_only_registered_runs(agent, make_agent, acme):
    unknown = plan(agent, run="7d0c1a56-0b5e-4a43-9a8e-3f3c7c1f2b10", idempotency_key="k1")
    assert_problem(unknown, 400, "run_not_registered")
    other = make_agent(acme, name="another-agent")
    theirs = register(other, run_id="their-run")
    assert_problem(plan(agent, run=theirs["id"], idempotency_key="k2"), 400, "run_not_registered")
    run = register(agent)
    mismatch = plan(agent, run=run["id"], run_id="run-43", idempotency_key="k3")
    assert_problem(mismatch, 400, "run_not_registered")
    checkpoint = agent.put(
        "/api/v1/checkpoints/publish",
        {"run": theirs["id"], "input_fingerprint": "f", "stage": "draft"},
        format="json",
    )
    assert_problem(checkpoint, 400, "run_not_registered")
    assert not Receipt.objects.exists() and not Checkpoint.objects.exists()


def test_a_run_is_shown_with_its_receipts_checkpoints_and_events(agent, make_agent, acme):
    run = register(agent)
    receipt = plan(agent, run=run["id"], idempotency_key="pub-a").json()
    assert (receipt["run"], receipt["run_id"], receipt["policy_version"]) == (
        run["id"],
        "run-42",
        "publish-policy-3",
    )
    saved = agent.put(
        "/api/v1/checkpoints/publish-weekly",
        {"run": run["id"], "input_fingerprint": "sha256:weekly-2026-33", "stage": "push",
         "effects": [receipt["id"]]},
        format="json",
    )  # fmt: skip
    assert saved.status_code == 200 and saved.json()["run_id"] == "run-42"
    step = agent.post(
        "/api/v1/events",
        {"subject": "project:blog", "run_id": "run-42", "kind": "started", "stage": "draft",
         "input_fingerprint": "sha256:weekly-2026-33", "observed_at": timezone.now().isoformat()},
        format="json",
    ).json()  # fmt: skip
    plan(agent, run_id="run-7", idempotency_key="pub-elsewhere")

    shown = agent.get(f"/api/v1/runs/{run['id']}")
    assert shown.status_code == 200
    page = shown.json()
    assert page["input_digest"] == "sha256:weekly-2026-33"
    assert [r["id"] for r in page["receipts"]] == [receipt["id"]]
    assert [c["task_key"] for c in page["checkpoints"]] == ["publish-weekly"]
    assert [e["id"] for e in page["events"]] == [step["id"]]
    assert agent.get(page["events_url"]).json()["results"][0]["id"] == step["id"]
    # Another token of the tenant does not see it, nor does another tenant.
    assert_problem(make_agent(acme, name="someone-else").get(f"/api/v1/runs/{run['id']}"),
                   404, "not_found")  # fmt: skip


def test_a_receipt_without_a_key_gets_one_derived_from_content_target_and_policy(agent):
    first = plan(agent, policy_version="p1")
    assert first.status_code == 201, first.json()
    key = first.json()["idempotency_key"]
    assert key.startswith("derived:sha256:")
    # The same content to the same target under the same policy is the same effect.
    again = plan(agent, policy_version="p1")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    # A new policy version, a new target or new content is a new effect.
    assert plan(agent, policy_version="p2").status_code == 201
    assert (
        plan(agent, policy_version="p1", target="https://blog.example/api/pages").status_code == 201
    )
    assert plan(agent, policy_version="p1", intent={"title": "Other"}).status_code == 201
    assert Receipt.objects.count() == 4
    # The run's policy version counts when the receipt names none.
    run = register(agent, policy_version="p2")
    assert (
        plan(agent, run=run["id"]).json()["idempotency_key"]
        == plan(agent, policy_version="p2").json()["idempotency_key"]
    )


def test_the_same_key_with_another_digest_is_refused(agent):
    first = plan(agent, idempotency_key="pub-2026-08-16-a").json()
    reused = plan(agent, idempotency_key="pub-2026-08-16-a", intent={"title": "Changed"})
    body = assert_problem(reused, 409, "idempotency_key_reused")
    assert body["intent_fingerprint"] == first["intent_fingerprint"]
    # A derived key sent back by hand with other content is a reuse too.
    derived = plan(agent).json()["idempotency_key"]
    assert_problem(
        plan(agent, idempotency_key=derived, intent={"title": "Else"}),
        409,
        "idempotency_key_reused",
    )
    assert Receipt.objects.count() == 2
