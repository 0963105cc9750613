"""Compensation: a receipt that undoes an effect receipt, planned before it runs, settled
like any receipt, answered by recovery when the operation's policy says to compensate,
and linked both ways on the console's receipt pages."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accounts.actors import Actor
from accounts.models import AuditEvent
from memory.receipts.models import Receipt, ReceiptState
from memory.receipts.services.platforms import operation_policy_set
from testing.fake_platform import WRITE_COMMIT_THEN_DROP
from tests.common.test_bad_input import assert_problem
from tests.memory.conftest import http_reconciler
from tests.memory.test_reconcile_workers import wait_for

pytestmark = pytest.mark.django_db

S = ReceiptState


def plan(agent, **body: Any) -> Any:
    body.setdefault("operation", "articles.create")
    body.setdefault("target", "https://blog.example/api/articles")
    body.setdefault("intent", {"title": "Receipts before calls"})
    body.setdefault("reconciler", {"adapter": "manual"})
    return agent.post("/api/v1/receipts", body, format="json")


def undo(agent, effect_id: str, **body: Any) -> Any:
    body.setdefault("operation", "articles.delete")
    body.setdefault("intent", {"article": "article-8812"})
    return plan(agent, compensates=effect_id, **body)


def test_a_compensation_is_planned_against_its_effect_and_recorded(agent):
    run = agent.post(
        "/api/v1/runs", {"run_id": "run-42", "input_digest": "sha256:in"}, format="json"
    ).json()
    effect = plan(agent, run=run["id"], idempotency_key="pub-a").json()
    response = undo(agent, effect["id"], idempotency_key="unpub-a")
    assert response.status_code == 201, response.json()
    compensation = response.json()
    assert (compensation["kind"], compensation["compensates"], compensation["state"]) == (
        "compensation",
        effect["id"],
        "planned",
    )
    assert (compensation["run"], compensation["run_id"]) == (run["id"], "run-42")
    assert effect["kind"] == "effect" and effect["compensates"] is None
    shown = agent.get(f"/api/v1/receipts/{effect['id']}").json()
    assert shown["compensations"] == [compensation["id"]]
    created = AuditEvent.objects.get(verb="receipt.created", target_id=compensation["id"])
    assert created.data["compensates"] == effect["id"]
    planned = AuditEvent.objects.get(verb="receipt.compensation_planned", target_id=effect["id"])
    assert planned.data["compensation"] == compensation["id"]
    # The same request again is the same compensation; for another effect it is a reuse.
    assert undo(agent, effect["id"], idempotency_key="unpub-a").status_code == 200
    other = plan(agent, idempotency_key="pub-b", intent={"title": "b"}).json()
    assert_problem(
        undo(agent, other["id"], idempotency_key="unpub-a"), 409, "idempotency_key_reused"
    )


def test_a_compensation_undoes_only_an_effect_of_yours(agent, make_agent, acme):
    effect = plan(agent, idempotency_key="pub-a").json()
    compensation = undo(agent, effect["id"], idempotency_key="unpub-a").json()
    before = Receipt.objects.count()
    assert_problem(undo(agent, compensation["id"], idempotency_key="x1"), 400,
                   "compensation_invalid")  # fmt: skip
    assert_problem(
        undo(agent, "7d0c1a56-0b5e-4a43-9a8e-3f3c7c1f2b10", idempotency_key="x2"),
        400,
        "unknown_effect",
    )
    stranger = make_agent(acme, name="stranger")
    assert_problem(undo(stranger, effect["id"], idempotency_key="x3"), 400, "unknown_effect")
    assert Receipt.objects.count() == before


def test_a_compensation_moves_along_the_receipt_machine(agent):
    effect = plan(agent, idempotency_key="pub-a").json()
    compensation = undo(agent, effect["id"], idempotency_key="unpub-a").json()
    path = f"/api/v1/receipts/{compensation['id']}/transitions"
    assert agent.post(path, {"to": "submitted"}, format="json").json()["state"] == "submitted"
    done = agent.post(path, {"to": "succeeded", "external_id": "del-1"}, format="json")
    assert done.json()["state"] == "succeeded"
    illegal = agent.post(path, {"to": "submitted"}, format="json")
    assert_problem(illegal, 409, "illegal_transition")


@pytest.fixture
def compensating_policy(acme, blog_platform):
    def set_policy(compensate: bool = True) -> None:
        operation_policy_set(
            tenant=acme,
            actor=Actor.system("test setup"),
            platform="blog",
            operation="articles.create",
            require_external_id=not compensate,
            compensate_on_failure=compensate,
        )

    return set_policy


def ask(agent, effect: Receipt, **checkpoint: Any) -> dict[str, Any]:
    saved = agent.put(
        "/api/v1/checkpoints/publish-weekly",
        {"input_fingerprint": "sha256:in", "stage": "push", "effects": [str(effect.pk)],
         **checkpoint},
        format="json",
    )  # fmt: skip
    assert saved.status_code == 200, saved.json()
    response = agent.post(
        "/api/v1/recovery",
        {"task_key": "publish-weekly", "input_fingerprint": "sha256:in"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return response.json()


def test_recovery_answers_compensate_when_policy_says_so_and_one_is_planned(
    agent, make_receipt, compensating_policy
):
    failed = make_receipt(S.MANUAL_REVIEW)
    # No policy: a person looks.
    assert (ask(agent, failed)["decision"], ask(agent, failed)["compensations"]) == (
        "escalate",
        [],
    )
    compensating_policy()
    # Policy, but nothing planned to undo it with: still a person.
    assert ask(agent, failed)["reason"] == "effect_in_manual_review"
    compensation = undo(agent, str(failed.pk), idempotency_key="unpub").json()
    answer = ask(agent, failed)
    assert (answer["decision"], answer["reason"]) == ("compensate", "compensation_planned")
    assert [c["id"] for c in answer["compensations"]] == [compensation["id"]]
    assert answer["compensations"][0]["compensates"] == str(failed.pk)
    # Asking changed nothing: the effect still waits for a person, the compensation is planned.
    assert Receipt.objects.get(pk=failed.pk).state == S.MANUAL_REVIEW
    assert Receipt.objects.get(pk=compensation["id"]).state == S.PLANNED
    # Once the compensation runs, recovery no longer sends the agent to run it.
    path = f"/api/v1/receipts/{compensation['id']}/transitions"
    agent.post(path, {"to": "submitted"}, format="json")
    assert ask(agent, failed)["decision"] == "escalate"


def test_retries_spent_on_a_succeeded_effect_compensate_under_the_policy(
    agent, make_receipt, compensating_policy
):
    pushed = make_receipt(S.SUCCEEDED)
    spent = {"retry_count": 3, "max_retries": 3}
    assert ask(agent, pushed, **spent)["reason"] == "retry_budget_exhausted"
    compensating_policy()
    undo(agent, str(pushed.pk), idempotency_key="unpub")
    answer = ask(agent, pushed, **spent)
    assert (answer["decision"], answer["reason"]) == ("compensate", "compensation_planned")
    # A policy that no longer says so takes the answer back to a person.
    compensating_policy(compensate=False)
    assert ask(agent, pushed, **spent)["decision"] == "escalate"


def test_the_console_links_an_effect_and_its_compensation_both_ways(agent, editor, login):
    effect = plan(agent, idempotency_key="pub-a").json()
    compensation = undo(agent, effect["id"], idempotency_key="unpub-a").json()
    browser = login(editor)
    effect_page = browser.get(f"/platforms/receipts/{effect['id']}/")
    assert effect_page.status_code == 200
    html = effect_page.content.decode()
    assert "Compensated by" in html
    assert f'href="/platforms/receipts/{compensation["id"]}/"' in html
    compensation_page = browser.get(f"/platforms/receipts/{compensation['id']}/").content.decode()
    assert "Compensates" in compensation_page
    assert f'href="/platforms/receipts/{effect["id"]}/"' in compensation_page
    assert "receipt.compensation_planned" in html
    assert (
        browser.get("/platforms/receipts/7d0c1a56-0b5e-4a43-9a8e-3f3c7c1f2b10/").status_code == 404
    )


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_compensation_with_an_unknown_outcome_is_reconciled_by_a_worker(
    celery_workers, platform, agent
):
    worker = celery_workers.start()
    effect = plan(
        agent,
        target=f"{platform.url}/articles",
        idempotency_key="pub-worker",
        reconciler=http_reconciler(platform, proven_by="status_lookup"),
    ).json()
    key = "unpub-worker"
    compensation = undo(
        agent,
        effect["id"],
        target=f"{platform.url}/articles",
        idempotency_key=key,
        reconciler=http_reconciler(platform, proven_by="status_lookup"),
    ).json()
    path = f"/api/v1/receipts/{compensation['id']}/transitions"
    agent.post(path, {"to": "submitted"}, format="json")
    platform.write_mode = WRITE_COMMIT_THEN_DROP
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{platform.url}/articles", json={}, headers={"Idempotency-Key": key})
    worker.wait_ready()
    reported = agent.post(path, {"to": "outcome_unknown"}, format="json")
    assert reported.status_code == 200
    wait_for(lambda: Receipt.objects.get(pk=compensation["id"]).state == S.SUCCEEDED, timeout=20)
    settled = Receipt.objects.get(pk=compensation["id"])
    assert settled.external_id == platform.articles[key]["id"]
    assert settled.compensates_id is not None and str(settled.compensates_id) == effect["id"]
    # Reconciling the compensation left its effect as it was.
    assert Receipt.objects.get(pk=effect["id"]).state == S.PLANNED
    assert platform.requests["POST"] == 1


def test_admins_say_compensate_on_failure_in_the_api_and_the_console(
    admin_user, session_api, acme, blog_platform
):
    from django.test import Client

    from memory.receipts.models import OperationPolicy

    api = session_api(admin_user)
    made = api.post(
        "/api/v1/platforms/blog/policies",
        {"operation": "articles.create", "compensate_on_failure": True},
        format="json",
    )
    assert made.status_code == 201, made.json()
    assert made.json()["compensate_on_failure"] is True
    assert OperationPolicy.objects.get(operation="articles.create").compensate_on_failure
    client = Client()
    client.force_login(admin_user)
    client.post(
        "/platforms/policies/",
        {"platform": "blog", "operation": "pages.create", "compensate_on_failure": "on"},
    )
    assert OperationPolicy.objects.get(operation="pages.create").compensate_on_failure
    page = client.get("/platforms/").content.decode()
    assert 'data-label="On failure"><span class="chip">compensate</span>' in page
