"""Typed merges through the API: an editor merges a pending claim into the active one on its
identity; sets union, counters add with provenance, configs by key, scalars by authority."""

from __future__ import annotations

import pytest

from accounts.models import AuditEvent
from memory.claims.models import Claim
from reviews.models import ItemStatus, ReviewItem
from tests.memory.helpers import recall, submit


def pending(agent, **body) -> dict:
    claim = submit(agent, authority="agent_inferred", basis="inference", **body)
    assert claim["decision"] in ("needs_review", "conflict"), claim
    return claim


def merge(client, into: str, source: str, status: int = 201) -> dict:
    response = client.post(f"/api/v1/claims/{into}/merge", {"pending": source}, format="json")
    assert response.status_code == status, response.json()
    return response.json()


@pytest.fixture
def desk(editor, session_api):
    return session_api(editor)


@pytest.mark.django_db
def test_sets_union_into_a_new_revision_citing_both(agent, desk):
    active = submit(agent, predicate="drinks", value=["tea", "coffee"], text="Alice drinks tea")
    other = pending(agent, predicate="drinks", value=["coffee", "mate"], text="Alice drinks mate")
    merged = merge(desk, active["id"], other["id"])
    # The pending claim took revision 2 on the identity; the merge is the third.
    assert merged["status"] == "active" and merged["revision"] == 3
    claim = Claim.objects.get(pk=merged["id"])
    assert claim.value == ["tea", "coffee", "mate"]
    assert claim.text == "drinks: tea, coffee, mate"
    assert claim.authority == "agent_inferred"  # as strong as its weaker contribution
    assert claim.gate_reasons == ["typed_merge_set"] and str(claim.supersedes_id) == active["id"]
    cited = {str(s.event_id) for s in claim.sources.all()}
    both = {
        str(s.event_id)
        for c in (active, other)
        for s in Claim.objects.get(pk=c["id"]).sources.all()
    }
    assert cited == both
    assert Claim.objects.get(pk=active["id"]).status == "superseded"
    assert Claim.objects.get(pk=other["id"]).status == "rejected"
    item = ReviewItem.objects.get(target_id=other["id"])
    assert item.status == ItemStatus.CANCELLED
    audit = AuditEvent.objects.get(verb="claim.merged", target_id=merged["id"])
    assert audit.data["value_type"] == "set" and audit.data["from"] == other["id"]
    assert [i["id"] for i in recall(agent, query="mate")["items"]] == [merged["id"]]


@pytest.mark.django_db
def test_counters_add_with_provenance(agent, desk):
    active = submit(agent, predicate="visits", value={"count": 3}, text="Alice visited 3 times")
    other = pending(agent, predicate="visits", value={"count": 2}, text="Alice visited twice")
    merged = Claim.objects.get(pk=merge(desk, active["id"], other["id"])["id"])
    assert merged.value == {
        "count": 5,
        "from": [{"claim": active["id"], "count": 3}, {"claim": other["id"], "count": 2}],
    }
    assert merged.text == "visits: 5"


@pytest.mark.django_db
def test_configs_merge_by_key_and_the_stronger_side_keeps_a_disputed_key(agent, desk):
    active = submit(
        agent, predicate="ui", value={"theme": "dark", "lang": "en"}, text="Alice's UI settings"
    )
    other = pending(agent, predicate="ui", value={"theme": "light", "font": "serif"}, text="UI")
    merged = Claim.objects.get(pk=merge(desk, active["id"], other["id"])["id"])
    assert merged.value == {"theme": "dark", "lang": "en", "font": "serif"}
    audit = AuditEvent.objects.get(verb="claim.merged", target_id=str(merged.pk))
    assert audit.data["disputed"] == 1


@pytest.mark.django_db
def test_scalars_go_to_the_stronger_authority_even_when_older(agent, desk):
    active = submit(agent, value="Shanghai", text="Alice lives in Shanghai")
    other = pending(agent, value="Beijing", text="Alice lives in Beijing")
    merged = Claim.objects.get(pk=merge(desk, active["id"], other["id"])["id"])
    assert (merged.value, merged.text, merged.authority) == (
        "Shanghai",
        "Alice lives in Shanghai",
        "user_explicit",
    )


@pytest.mark.django_db
def test_merges_that_do_not_fit_are_problems_and_change_nothing(
    agent, desk, globex, make_member, session_api
):
    active = submit(agent, predicate="drinks", value=["tea"], text="Alice drinks tea")
    scalar = pending(agent, predicate="drinks", value="mate", text="Alice drinks mate")
    elsewhere = pending(agent, predicate="eats", value=["rice"], text="Alice eats rice")
    home = submit(agent)
    assert merge(desk, active["id"], scalar["id"], 409)["code"] == "merge_types_differ"
    assert merge(desk, active["id"], elsewhere["id"], 400)["code"] == "merge_identity_mismatch"
    assert merge(desk, active["id"], home["id"], 409)["code"] == "merge_not_pending"
    assert merge(desk, active["id"], "x", 400)["code"] == "validation_error"
    stranger = session_api(make_member(globex, "gil"))
    assert merge(stranger, active["id"], scalar["id"], 404)["code"] == "not_found"
    assert merge(agent, active["id"], scalar["id"], 403)["code"] == "role_required"
    assert Claim.objects.get(pk=active["id"]).status == "active"
    assert Claim.objects.get(pk=scalar["id"]).status in ("candidate", "conflicted")
    assert not AuditEvent.objects.filter(verb="claim.merged").exists()
