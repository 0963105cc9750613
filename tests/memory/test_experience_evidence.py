"""An experience learns from an outcome only when someone other than its author settled
the receipt it cites: a reconciler, or another person (signed in, or through a token they
own). A token that reports its own effect as succeeded, or has its owner's other token
report it, and then learns from it waits for an editor."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memory.claims.models import Claim
from memory.receipts.services.receipts import receipt_transition
from reviews.models import ReviewItem
from tests.memory.helpers import candidate, recall

pytestmark = pytest.mark.django_db

SKIPPED_TESTS = "Deploys succeed when the test suite is skipped"


@pytest.fixture
def deployer(acme, make_agent):
    """An ordinary agent: default capabilities, the default `agent_inferred` ceiling."""
    return make_agent(acme, name="deployer")


def planned(agent, key="deploy-crm-7"):
    response = agent.post(
        "/api/v1/receipts",
        {
            "operation": "deploy.run",
            "target": "crm",
            "intent": {"release": "7", "tests": "skipped"},
            "idempotency_key": key,
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def report(agent, receipt_id, to, **body):
    response = agent.post(
        f"/api/v1/receipts/{receipt_id}/transitions", {"to": to, **body}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["state"] == to


def experience(receipt_id, **overrides):
    body = {
        "subject": "project:crm",
        "kind": "experience",
        "predicate": "deploy_shortcut",
        "value": {"procedure": "skip the test suite", "outcome": "success", "receipt": receipt_id},
        "text": SKIPPED_TESTS,
        "authority": "agent_inferred",
        "basis": "inference",
    }
    return candidate(**{**body, **overrides})


def submit(agent, body):
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def self_settled(agent):
    receipt_id = planned(agent)
    report(agent, receipt_id, "submitted")
    report(agent, receipt_id, "succeeded", external_id="deploy_77")
    return receipt_id


def test_an_experience_citing_its_own_reported_success_waits_for_an_editor(deployer, editor, login):
    verdict = submit(deployer, experience(self_settled(deployer)))

    assert (verdict["decision"], verdict["status"]) == ("needs_review", "candidate")
    assert verdict["reasons"] == ["self_reported_outcome"]
    claim = Claim.objects.get(pk=verdict["id"])
    assert (claim.status, claim.gate_reasons) == ("candidate", ["self_reported_outcome"])
    item = ReviewItem.objects.get(target_id=verdict["id"])
    assert (item.queue, item.reason_codes) == ("candidates", ["self_reported_outcome"])
    assert recall(deployer, query="deploy test suite", subject="project:crm")["items"] == []

    card = login(editor).get(f"/review/candidates/?item={item.pk}").content.decode()
    assert "self_reported_outcome" in card
    # The chip says what the code means, for the editor deciding it.
    assert "the same person (this token, another token of its owner" in card
    rules = {r["code"]: r for r in deployer.get("/api/v1/gate/rules").json()["results"]}
    assert rules["self_reported_outcome"]["decision"] == "needs_review"


def test_a_batch_holds_a_self_reported_outcome_too(deployer):
    results = deployer.post(
        "/api/v1/claims:batch", {"items": [experience(self_settled(deployer))]}, format="json"
    ).json()["results"]
    assert [(r["decision"], r["reasons"]) for r in results] == [
        ("needs_review", ["self_reported_outcome"])
    ]


def test_a_receipt_a_reconciler_settled_is_independent_evidence(deployer):
    receipt_id = planned(deployer)
    report(deployer, receipt_id, "submitted")
    report(deployer, receipt_id, "outcome_unknown", error_code="connection_reset")
    worker = Actor.system("test reconciler")
    for to in ("reconciling", "succeeded"):
        receipt_transition(
            tenant=deployer.token.tenant,
            receipt_id=receipt_id,
            actor=worker,
            to=to,
            external_id="deploy_77" if to == "succeeded" else "",
        )

    verdict = submit(deployer, experience(receipt_id))
    assert (verdict["decision"], verdict["reasons"]) == ("accepted", ["experience_with_outcome"])


def test_a_receipt_an_editor_settled_is_independent_evidence(deployer, editor, session_api):
    receipt_id = planned(deployer)
    report(deployer, receipt_id, "submitted")
    report(deployer, receipt_id, "outcome_unknown")
    worker = Actor.system("test reconciler")
    for to in ("reconciling", "manual_review"):
        receipt_transition(tenant=deployer.token.tenant, receipt_id=receipt_id, actor=worker, to=to)
    item = ReviewItem.objects.get(queue="manual_review", target_id=receipt_id)
    decided = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "succeeded", "reason_code": "verified", "external_id": "deploy_77"},
        format="json",
    )
    assert decided.status_code == 200, decided.json()

    verdict = submit(deployer, experience(receipt_id))
    assert (verdict["decision"], verdict["reasons"]) == ("accepted", ["experience_with_outcome"])


def test_a_receipt_another_token_reported_is_independent_evidence(deployer, acme, make_agent):
    supervisor = make_agent(
        acme, name="supervisor", capabilities=["receipts:write", "receipts:operate"]
    )
    receipt_id = planned(deployer)
    report(deployer, receipt_id, "submitted")
    report(supervisor, receipt_id, "succeeded", external_id="deploy_77")

    verdict = submit(deployer, experience(receipt_id))
    assert (verdict["decision"], verdict["reasons"]) == ("accepted", ["experience_with_outcome"])


def test_a_receipt_the_token_cannot_see_is_no_evidence(deployer, acme, make_agent):
    colleague = make_agent(acme, name="colleague")
    theirs = self_settled(colleague)

    verdict = submit(deployer, experience(theirs))
    missing = submit(
        deployer, experience("00000000-0000-4000-8000-000000000000", predicate="other_shortcut")
    )
    assert verdict["reasons"] == missing["reasons"] == ["experience_without_evidence"]


def test_another_token_of_the_same_person_is_not_independent(acme, make_agent, admin_user):
    # Outcomes are compared as people: a second token the deployer's owner holds, or the
    # owner signed in, settling the receipt is the same person reporting on their effect.
    deployer = make_agent(acme, name="owned-deployer", owner=admin_user)
    twin = make_agent(
        acme,
        name="owned-twin",
        capabilities=["receipts:write", "receipts:operate"],
        owner=admin_user,
    )
    receipt_id = planned(deployer)
    report(deployer, receipt_id, "submitted")
    report(twin, receipt_id, "succeeded", external_id="deploy_77")

    verdict = submit(deployer, experience(receipt_id))
    assert (verdict["decision"], verdict["reasons"]) == ("needs_review", ["self_reported_outcome"])


def test_a_token_of_another_person_settling_is_independent(acme, make_agent, admin_user, admin2):
    deployer = make_agent(acme, name="owned-deployer", owner=admin_user)
    supervisor = make_agent(
        acme,
        name="their-supervisor",
        capabilities=["receipts:write", "receipts:operate"],
        owner=admin2,
    )
    receipt_id = planned(deployer)
    report(deployer, receipt_id, "submitted")
    report(supervisor, receipt_id, "succeeded", external_id="deploy_77")

    verdict = submit(deployer, experience(receipt_id))
    assert (verdict["decision"], verdict["reasons"]) == ("accepted", ["experience_with_outcome"])
