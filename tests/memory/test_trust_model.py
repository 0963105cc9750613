"""The trust model through the real API: authority comes from who speaks, not from what a
candidate says about itself (docs/design.md, principle 10, and docs/trust.md)."""

from __future__ import annotations

import uuid

import pytest

from memory.claims.models import Claim
from reviews.models import ReviewItem
from tests.memory.helpers import candidate, post_event, recall

pytestmark = pytest.mark.django_db


@pytest.fixture
def plain(acme, make_agent):
    """A token made without a ceiling: `agent_inferred`, the default."""
    return make_agent(acme, name="plain-agent")


@pytest.fixture
def frontend(acme, make_agent):
    """A chat front-end that talks to the user; an admin gave it the `user_explicit` ceiling."""
    return make_agent(acme, name="chat-frontend", max_authority="user_explicit")


@pytest.fixture
def tools(acme, make_agent):
    return make_agent(acme, name="tool-runner", max_authority="tool_verified")


def post(client, body, path="/api/v1/claims"):
    response = client.post(path, body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def stored(verdict) -> Claim:
    return Claim.objects.get(pk=verdict["id"])


def tool_result(client, subject="user:alice"):
    return post_event(client, subject=subject, kind="tool_result", text="crm.lookup: Shanghai")


# -- ceilings ---------------------------------------------------------------------


def test_a_self_declared_user_explicit_claim_is_capped_and_waits_for_an_editor(plain):
    said = post_event(plain)
    verdict = post(plain, candidate(said["id"]))

    # Not an error that tells the caller where the line is: a verdict like any other.
    assert verdict["decision"] == "needs_review"
    assert verdict["status"] == "candidate"
    assert verdict["reasons"][0] == "unverified_authority"
    assert "authority_capped" in verdict["reasons"]
    claim = stored(verdict)
    assert (claim.authority, claim.basis) == ("agent_inferred", "reported")
    assert "authority_capped" in claim.gate_reasons
    item = ReviewItem.objects.get(target_id=verdict["id"])
    assert item.queue == "candidates" and "authority_capped" in item.reason_codes
    assert recall(plain, query="where does alice live")["items"] == []


def test_the_ceiling_holds_on_batch_and_derive_too(plain, frontend):
    said = post_event(plain)
    batch = plain.post(
        "/api/v1/claims:batch",
        {"items": [candidate(said["id"]), candidate(said["id"], predicate="employer")]},
        format="json",
    ).json()["results"]
    assert [r["decision"] for r in batch] == ["needs_review", "needs_review"]
    assert all("authority_capped" in r["reasons"] for r in batch)

    parent = post(frontend, candidate(post_event(frontend)["id"], basis="reported"))
    assert parent["decision"] == "accepted"
    derived = post(
        plain,
        candidate(
            predicate="timezone",
            value="Asia/Shanghai",
            text="Alice is on China time",
            sources=[],
        ),
        path=f"/api/v1/claims/{parent['id']}/derive",
    )
    # The parent's user-channel evidence does not lend its authority to a weaker speaker.
    assert derived["decision"] == "needs_review"
    assert "authority_capped" in derived["reasons"]
    assert stored(derived).authority == "agent_inferred"


def test_a_front_end_token_with_a_user_channel_event_is_accepted(frontend):
    said = post_event(frontend, text="I moved to Shanghai")
    verdict = post(frontend, candidate(said["id"], basis="reported"))
    assert verdict["decision"] == "accepted"
    assert verdict["reasons"] == ["user_explicit_verified"]
    assert stored(verdict).authority == "user_explicit"
    items = recall(frontend, query="where does alice live")["items"]
    assert [(i["id"], i["authority"]) for i in items] == [(verdict["id"], "user_explicit")]


@pytest.mark.parametrize("source", ["uri", "note_event", "statement_by_a_weaker_token"])
def test_user_explicit_needs_a_user_channel_event(frontend, plain, source):
    sources = {
        "uri": [{"uri": "chat://s1/m7"}],
        "note_event": [{"event": post_event(frontend, kind="note")["id"]}],
        # Any token can name an event `user_statement`; it counts only from a token whose
        # ceiling reaches `user_explicit` (or from a person in the console).
        "statement_by_a_weaker_token": [{"event": post_event(plain)["id"]}],
    }[source]
    verdict = post(frontend, candidate(sources=sources, basis="reported"))
    assert verdict["decision"] == "needs_review"
    assert verdict["reasons"] == ["unverified_authority", "user_channel_required"]
    assert stored(verdict).authority == "agent_inferred"


def test_basis_verified_without_a_tool_source_is_not_verified(tools, plain):
    weak_result = tool_result(plain)  # a "tool result" from a token that cannot verify
    for predicate, sources in (
        ("home_city", [{"uri": "crm://contacts/alice"}]),
        ("work_city", [{"event": weak_result["id"]}]),
    ):
        verdict = post(
            tools, candidate(sources=sources, predicate=predicate, authority="tool_verified")
        )
        assert verdict["decision"] == "needs_review"
        assert verdict["reasons"] == [
            "unverified_authority",
            "tool_source_required",
            "basis_unverified",
        ]
        claim = stored(verdict)
        assert (claim.authority, claim.basis) == ("agent_inferred", "reported")

    verified = post(
        tools,
        candidate(tool_result(tools)["id"], predicate="billing_city", authority="tool_verified"),
    )
    assert (verified["decision"], verified["reasons"]) == ("accepted", ["tool_verified"])
    claim = stored(verified)
    assert (claim.authority, claim.basis) == ("tool_verified", "verified")


# -- supersedes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authority", "basis"),
    [("agent_inferred", "inference"), ("reported", "reported"), ("user_explicit", "verified")],
)
def test_a_weaker_claim_naming_a_stronger_one_in_supersedes_is_a_conflict(
    frontend, plain, authority, basis
):
    strong = post(frontend, candidate(post_event(frontend)["id"], basis="reported"))
    assert strong["decision"] == "accepted"

    weak = post(
        plain,
        candidate(
            post_event(plain, text="Alice lives in Beijing now")["id"],
            value="Beijing",
            text="Alice lives in Beijing",
            authority=authority,
            basis=basis,
            supersedes=strong["id"],
        ),
    )

    assert weak["decision"] == "conflict"
    assert weak["reasons"][0] == "supersedes_stronger"
    assert weak["conflict_with"] == [strong["id"]]
    assert weak["review_item"]["queue"] == "conflicts"
    assert Claim.objects.get(pk=strong["id"]).status == "active"
    assert stored(weak).status == "conflicted"
    assert [i["value"] for i in recall(plain, query="alice live")["items"]] == ["Shanghai"]


def test_an_equally_strong_claim_may_still_correct_what_it_names(frontend):
    first = post(frontend, candidate(post_event(frontend)["id"], basis="reported"))
    fix = post(
        frontend,
        candidate(
            post_event(frontend, text="Sorry, I live in Hangzhou")["id"],
            value="Hangzhou",
            text="Alice lives in Hangzhou",
            basis="reported",
            supersedes=first["id"],
        ),
    )
    assert fix["decision"] == "superseded_previous"
    assert Claim.objects.get(pk=first["id"]).status == "superseded"


# -- experiences ------------------------------------------------------------------


def experience(**value):
    return candidate(
        kind="experience",
        predicate="deploy_procedure",
        subject="project:crm",
        text="Deploying CRM with blue-green worked",
        authority="agent_inferred",
        basis="inference",
        value={"procedure": "blue-green", **value},
    )


def settled_receipt(client, state: str) -> str:
    receipt = client.post(
        "/api/v1/receipts",
        {
            "operation": "deploy.run",
            "target": "crm",
            "intent": {"release": str(uuid.uuid4())},
            "idempotency_key": str(uuid.uuid4()),
            "reconciler": {"adapter": "manual"},
        },
        format="json",
    ).json()
    if state != "planned":
        client.post(
            f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json"
        )
        done = client.post(
            f"/api/v1/receipts/{receipt['id']}/transitions",
            {"to": state, "external_id": "dep_1"},
            format="json",
        )
        assert done.json()["state"] == state, done.json()
    return receipt["id"]


@pytest.mark.parametrize("outcome", ["worked", "yes", True, 1, {"ok": True}])
def test_an_experience_with_a_bare_truthy_outcome_needs_review(plain, outcome):
    verdict = post(plain, experience(outcome=outcome))
    assert verdict["decision"] == "needs_review"
    assert verdict["reasons"] == ["experience_without_outcome"]


def test_an_experience_outcome_needs_evidence(plain, tools, globex_agent):
    assert post(plain, experience(outcome="success"))["reasons"] == ["experience_without_evidence"]
    for receipt in (settled_receipt(plain, "planned"), settled_receipt(plain, "rejected")):
        verdict = post(plain, experience(outcome="success", receipt=receipt))
        assert verdict["reasons"] == ["experience_without_evidence"]
    # Another tenant's receipt is no evidence here, whatever its state.
    foreign = settled_receipt(globex_agent, "succeeded")
    assert post(plain, experience(outcome="success", receipt=foreign))["reasons"] == [
        "experience_without_evidence"
    ]

    # A receipt the token settled itself is its own word: an editor decides
    # (receipts settled by others: test_experience_evidence.py).
    by_own_receipt = post(
        plain, experience(outcome="success", receipt=settled_receipt(plain, "succeeded"))
    )
    assert (by_own_receipt["decision"], by_own_receipt["reasons"]) == (
        "needs_review",
        ["self_reported_outcome"],
    )
    by_tool = post(
        tools,
        {
            **experience(outcome="failure"),
            "predicate": "rollback_procedure",
            "sources": [{"event": tool_result(tools, subject="project:crm")["id"]}],
        },
    )
    assert (by_tool["decision"], by_tool["reasons"]) == ("accepted", ["experience_with_outcome"])


# -- subject-restricted tokens ----------------------------------------------------


def test_another_subjects_event_is_treated_exactly_like_a_missing_one(acme, make_agent, agent):
    bobs_event = post_event(agent, subject="user:bob", text="Bob lives in Paris")
    alice_only = make_agent(acme, name="alice-only", subjects=["user:alice"])

    def attempt(event_id):
        return alice_only.post("/api/v1/claims", candidate(event_id), format="json")

    foreign, missing = attempt(bobs_event["id"]), attempt(str(uuid.uuid4()))
    assert foreign.status_code == missing.status_code == 400
    assert foreign.json() == missing.json()
    assert foreign.json()["code"] == "source_not_found"

    def in_batch(event_id):
        return alice_only.post(
            "/api/v1/claims:batch", {"items": [candidate(event_id)]}, format="json"
        ).json()["results"][0]

    assert in_batch(bobs_event["id"]) == in_batch(str(uuid.uuid4()))
    assert in_batch(bobs_event["id"])["error"]["code"] == "source_not_found"
    assert Claim.objects.count() == 0


def test_another_subjects_claim_is_treated_exactly_like_a_missing_one(acme, make_agent, agent):
    bobs = post(agent, candidate(post_event(agent, subject="user:bob")["id"], subject="user:bob"))
    alice_only = make_agent(acme, name="alice-only", subjects=["user:alice"])
    parent = post(alice_only, candidate(post_event(alice_only)["id"]))

    def derive(extra_parent):
        return alice_only.post(
            f"/api/v1/claims/{parent['id']}/derive",
            candidate(predicate="region", value="cn", text="x", derived_from=[extra_parent]),
            format="json",
        )

    foreign, missing = derive(bobs["id"]), derive(str(uuid.uuid4()))
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()

    # Naming bob's claim in `supersedes` does nothing a random id would not do.
    named = post(alice_only, candidate(predicate="employer", supersedes=bobs["id"]))
    unnamed = post(alice_only, candidate(predicate="nickname", supersedes=str(uuid.uuid4())))
    assert (named["decision"], named["reasons"]) == (unnamed["decision"], unnamed["reasons"])
    assert Claim.objects.get(pk=bobs["id"]).status == "active"


def test_gate_rules_list_the_trust_model_codes(plain):
    rules = {r["code"]: r for r in plain.get("/api/v1/gate/rules").json()["results"]}
    for code in (
        "authority_capped",
        "user_channel_required",
        "tool_source_required",
        "basis_unverified",
        "supersedes_stronger",
        "experience_without_evidence",
    ):
        assert rules[code]["description"]
    assert rules["supersedes_stronger"]["decision"] == "conflict"
    assert "`user_statement`" in rules["user_channel_required"]["description"]
    assert "`tool_result`" in rules["tool_source_required"]["description"]


def test_deriving_without_sources_uses_only_the_parents_evidence_the_token_may_see(
    acme, make_agent, agent
):
    alices = post_event(agent)
    bobs = post_event(agent, subject="user:bob", text="Bob says Alice moved")
    parent = post(agent, candidate(sources=[{"event": alices["id"]}, {"event": bobs["id"]}]))
    alice_only = make_agent(acme, name="alice-only", subjects=["user:alice"])

    derived = post(
        alice_only,
        candidate(predicate="timezone", value="Asia/Shanghai", text="China time", sources=[]),
        path=f"/api/v1/claims/{parent['id']}/derive",
    )

    sources = Claim.objects.get(pk=derived["id"]).sources.values_list("event_id", flat=True)
    assert [str(s) for s in sources] == [alices["id"]]
