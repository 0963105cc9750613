"""A claim an agent reports as harmful (it misled the model) goes to a person: the stale
queue, reason `harmful_use`, where an editor keeps or invalidates it."""

from __future__ import annotations

import pytest

from memory.claims.models import Claim
from reviews.models import ItemStatus, Queue, ReviewItem
from tests.memory.helpers import recall, submit
from tests.memory.test_review_decisions import decide

pytestmark = pytest.mark.django_db


@pytest.fixture
def desk(editor, login):
    """The editor's console client, with its CSRF token."""
    client = login(editor)
    client.get("/review/candidates/")
    client.csrf = client.cookies["csrftoken"].value
    return client


def report(agent, trace_id: str, items: list[dict]):
    return agent.post(f"/api/v1/recall/traces/{trace_id}/used", {"items": items}, format="json")


def test_a_harmful_report_opens_one_review_and_an_editor_invalidates_the_claim(agent, desk):
    home = submit(agent, predicate="home_city", value="Shanghai")["id"]
    food = submit(agent, predicate="food", value="xlb", text="Alice likes dumplings")["id"]
    answer = recall(agent)
    assert {home, food} <= {item["id"] for item in answer["items"]}

    reported = report(
        agent, answer["trace_id"], [{"id": home, "harmful": True}, {"id": food, "cited": True}]
    )
    assert reported.status_code == 201, reported.json()
    item = ReviewItem.objects.get(queue=Queue.STALE, target_type="claim")
    assert (item.target_id, item.reason_codes, item.status) == (home, ["harmful_use"], "open")
    assert item.subject_key == "user:alice" and item.agent_label == "acme-agent"
    # Another recall, another harmful report: still one open item for the claim.
    again = recall(agent)
    assert report(agent, again["trace_id"], [{"id": home, "harmful": True}]).status_code == 201
    assert ReviewItem.objects.filter(queue=Queue.STALE).count() == 1

    # The editor sees it in the stale queue of the console and says it is no longer true.
    page = desk.get("/review/stale/").content.decode()
    assert "harmful_use" in page
    decide(desk, item, verdict="invalidate", reason_code="outdated")
    assert Claim.objects.get(pk=home).status == "invalidated"
    assert Claim.objects.get(pk=food).status == "active"
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED
    assert home not in {i["id"] for i in recall(agent)["items"]}


def test_a_report_that_is_not_harmful_opens_nothing(agent):
    home = submit(agent, predicate="home_city", value="Shanghai")["id"]
    answer = recall(agent)
    assert report(agent, answer["trace_id"], [{"id": home, "cited": True}]).status_code == 201
    assert not ReviewItem.objects.filter(queue=Queue.STALE).exists()
