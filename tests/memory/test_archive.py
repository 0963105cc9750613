"""Archiving: kept, never recalled or in hot memory, restorable by an editor; a newer claim
that took the identity is never replaced by a restored one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import AuditEvent, Role
from memory.claims.models import Claim, allowed_claim_targets
from tests.memory.helpers import recall, submit


def archive(client, claim_id: str, status: int = 200, action: str = "archive") -> dict:
    response = client.post(
        f"/api/v1/claims/{claim_id}/{action}", {"reason": "nobody asks"}, format="json"
    )
    assert response.status_code == status, response.json()
    return response.json()


@pytest.mark.django_db
def test_an_archived_claim_is_kept_out_of_recall_and_hot_memory_until_restored(
    agent, editor, session_api
):
    tea = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    home = submit(agent)
    desk = session_api(editor)
    archived = archive(desk, tea["id"])
    assert archived["status"] == "archived"
    claim = Claim.objects.get(pk=tea["id"])
    assert (claim.status, claim.text, claim.sources.count()) == ("archived", "Alice drinks tea", 2)
    answer = recall(agent, query="tea")
    assert [item["id"] for item in answer["items"]] == [home["id"]]
    assert answer["excluded"]["inactive"] == 1
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory").json()
    assert tea["id"] not in hot["claims"] and home["id"] in hot["claims"]
    assert AuditEvent.objects.filter(verb="claim.archived", target_id=tea["id"]).count() == 1

    restored = archive(desk, tea["id"], action="restore")
    assert restored["status"] == "active"
    assert tea["id"] in [item["id"] for item in recall(agent, query="tea")["items"]]
    assert tea["id"] in agent.get("/api/v1/subjects/user:alice/hot-memory").json()["claims"]


@pytest.mark.django_db
def test_a_restore_never_replaces_the_newer_claim_on_its_identity(agent, editor, session_api):
    old = submit(agent, value="Shanghai")
    desk = session_api(editor)
    archive(desk, old["id"])
    new = submit(agent, value="Hangzhou", text="Alice lives in Hangzhou")
    assert new["decision"] == "accepted"
    refused = archive(desk, old["id"], 409, action="restore")
    assert refused["code"] == "identity_taken" and refused["active"] == new["id"]
    assert Claim.objects.get(pk=old["id"]).status == "archived"
    assert Claim.objects.get(pk=new["id"]).status == "active"


@pytest.mark.django_db
def test_only_editors_archive_and_only_what_the_table_allows(
    agent, editor, session_api, alice, acme, globex, make_member
):
    auditor_user = make_member(acme, "audrey", Role.AUDITOR)
    tea = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    for person, code in ((alice, "role_required"), (auditor_user, "role_required")):
        assert archive(session_api(person), tea["id"], 403)["code"] == code
    refused = agent.post(f"/api/v1/claims/{tea['id']}/archive", {}, format="json")
    assert refused.status_code == 403
    stranger = session_api(make_member(globex, "gil"))
    assert archive(stranger, tea["id"], 404)["code"] == "not_found"
    desk = session_api(editor)
    not_archived = archive(desk, tea["id"], 409, action="restore")
    assert not_archived["code"] == "illegal_transition"
    assert not_archived["allowed"] == allowed_claim_targets("active", "reviewer")
    assert "archived" in not_archived["allowed"]
    assert Claim.objects.get(pk=tea["id"]).status == "active"


@pytest.mark.django_db
def test_the_claim_page_archives_and_restores(agent, editor, login):
    tea = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")
    client = login(editor)
    page = client.get(reverse("desk:claim", args=[tea["id"]]))
    csrf = page.cookies["csrftoken"].value
    url = reverse("desk:archive", args=[tea["id"]])
    client.post(url, {"action": "archive"}, HTTP_X_CSRFTOKEN=csrf)
    assert Claim.objects.get(pk=tea["id"]).status == "archived"
    shown = client.get(reverse("desk:claim", args=[tea["id"]])).content.decode()
    assert "The claim is archived." in shown and ">Restore</button>" in shown
    client.post(url, {"action": "restore"}, HTTP_X_CSRFTOKEN=csrf)
    assert Claim.objects.get(pk=tea["id"]).status == "active"


@pytest.mark.django_db
def test_the_person_it_is_about_may_still_correct_an_archived_memory(
    agent, editor, alice, session_api
):
    old = submit(agent, value="Shanghai")
    archive(session_api(editor), old["id"])
    corrected = session_api(alice).post(
        f"/api/v1/me/memories/{old['id']}/correct",
        {"value": "Hangzhou", "text": "Alice lives in Hangzhou"},
        format="json",
    )
    assert corrected.status_code == 201, corrected.json()
    assert Claim.objects.get(pk=old["id"]).status == "superseded"
    assert [i["text"] for i in recall(agent, query="where does Alice live")["items"]] == [
        "Alice lives in Hangzhou"
    ]
