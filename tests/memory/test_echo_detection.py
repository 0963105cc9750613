"""Server-side echo detection: an agent's event restating a claim recall just handed it is
an echo whatever its `echo_of` says, so a claim citing only such events is refused as
self-reinforcement; the user's own words and a tool's answer stay fresh evidence."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.claims.models import Claim, ClaimStatus, Event, RecallTrace
from tests.memory.helpers import post_event, recall, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def told(agent) -> dict:
    claim = submit(agent, predicate="employer", value="Acme", text="Alice works at Acme")
    answer = recall(agent, query="where does alice work")
    assert [item["id"] for item in answer["items"]] == [claim["id"]]
    return claim


def cite(agent, event_id: str) -> dict:
    return submit(
        agent,
        event_id=event_id,
        predicate="employer",
        value="Acme",
        text="Alice works at Acme",
        authority="agent_inferred",
        basis="inference",
    )


def test_an_unmarked_restatement_of_a_recalled_claim_is_an_echo(agent, told):
    # The agent says back what recall gave it, and does not say so.
    echo = post_event(agent, kind="agent_message", text="alice works at Acme.", echo_of=[])
    assert [str(c) for c in Event.objects.get(pk=echo["id"]).echo_of] == [told["id"]]
    assert echo["echo_of"] == [told["id"]]

    verdict = cite(agent, echo["id"])

    assert (verdict["decision"], verdict["reasons"]) == ("rejected", ["self_reinforcement"])
    active = Claim.objects.filter(predicate="employer", status=ClaimStatus.ACTIVE)
    assert [str(claim.pk) for claim in active] == [told["id"]]


def test_the_users_own_words_and_other_text_are_not_echoes(agent, told):
    said = post_event(agent, kind="user_statement", text="Alice works at Acme")
    assert Event.objects.get(pk=said["id"]).echo_of == []
    other = post_event(agent, kind="agent_message", text="Alice asked about the Q3 invoice")
    assert Event.objects.get(pk=other["id"]).echo_of == []


def test_a_claim_recalled_long_ago_or_never_is_not_echoed(agent, told):
    RecallTrace.objects.update(created_at=RecallTrace.objects.get().created_at - timedelta(days=2))
    late = post_event(agent, kind="agent_message", text="Alice works at Acme")
    assert Event.objects.get(pk=late["id"]).echo_of == []
    # Another subject's recall says nothing about this one.
    bob = post_event(agent, subject="user:bob", kind="agent_message", text="Alice works at Acme")
    assert Event.objects.get(pk=bob["id"]).echo_of == []
