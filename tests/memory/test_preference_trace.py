"""A preference's trace, step by step, asking recall the agent's question each time.

1. Alice prefers email reminders (global).
2. For project CRM she wants in-app notifications only: a project-scoped preference
   that coexists with the global one, which stays the default for other projects.
3. "No email for any project": a new global correction ends the old global version and
   invalidates what was derived from it for each project.
"""

from __future__ import annotations

import pytest

from memory.claims.models import Claim, ClaimStatus
from tests.memory.helpers import recall, submit

pytestmark = pytest.mark.django_db

CHANNEL = "notification_channel"


def answer(agent, project: str) -> list[str]:
    """What the agent working on `project` is told about notifications, first item first."""
    items = recall(agent, scope={"project": project}, kinds=["preference"])["items"]
    return [item["value"] for item in items if item["predicate"] == CHANNEL]


def digest_delivery(agent, project: str) -> list[str]:
    items = recall(agent, scope={"project": project}, kinds=["fact"])["items"]
    return [item["value"] for item in items if item["predicate"] == "digest_delivery"]


def preference(agent, **body) -> dict:
    return submit(agent, kind="preference", predicate=CHANNEL, **body)


@pytest.mark.parametrize("correction_by", ["agent", "user"])
def test_the_answer_is_right_at_every_step(agent, alice, session_api, correction_by):
    # 1. A global preference.
    email = preference(agent, value="email", text="Alice wants reminders by email")
    digest = agent.post(
        f"/api/v1/claims/{email['id']}/derive",
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": "digest_delivery",
            "scope": {"project": "erp"},
            "value": "email",
            "text": "Send Alice the ERP weekly digest by email",
            "authority": "tool_verified",
            "basis": "verified",
        },
        format="json",
    ).json()
    assert digest["status"] == "active"
    assert answer(agent, "crm") == ["email"]
    assert answer(agent, "erp") == ["email"]
    assert digest_delivery(agent, "erp") == ["email"]

    # 2. A project-scoped preference: coexists, and wins inside its project only.
    in_app = preference(
        agent,
        value="in_app",
        text="For CRM, Alice wants in-app notifications only",
        scope={"project": "crm"},
    )
    assert in_app["decision"] == "accepted"
    assert answer(agent, "crm") == ["in_app", "email"]
    assert answer(agent, "erp") == ["email"]
    assert Claim.objects.get(pk=email["id"]).status == ClaimStatus.ACTIVE

    # 3. A global correction ends the old global version and what was derived from it.
    if correction_by == "agent":
        no_email = preference(agent, value="no_email", text="Alice wants no email, any project")
        assert no_email["decision"] == "superseded_previous"
    else:
        corrected = session_api(alice).post(
            f"/api/v1/me/memories/{email['id']}/correct",
            {"value": "no_email", "text": "Alice wants no email, any project"},
            format="json",
        )
        assert corrected.status_code == 201, corrected.json()
    assert Claim.objects.get(pk=email["id"]).status == ClaimStatus.SUPERSEDED
    assert Claim.objects.get(pk=digest["id"]).status == ClaimStatus.INVALIDATED
    assert answer(agent, "crm") == ["in_app", "no_email"]
    assert answer(agent, "erp") == ["no_email"]
    assert digest_delivery(agent, "erp") == []
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory?budget_chars=4000").json()["text"]
    assert "by email" not in hot
    # Hot memory is per scope: the global preference everywhere, the CRM's in the CRM.
    assert "no email, any project" in hot and "in-app notifications only" not in hot
    crm = agent.get(
        "/api/v1/subjects/user:alice/hot-memory?budget_chars=4000&scope=project=crm"
    ).json()["text"]
    assert "in-app notifications only" in crm and "no email, any project" not in crm
