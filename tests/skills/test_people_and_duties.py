"""Separation of duties compares people: a token acts for its owner (docs/people-and-duties.md).

The audit that found it: an admin issued two tokens on /tokens/, one wrote and
submitted a skill, the other evaluated it, the admin approved and published it,
and nobody else ever looked. Each duty below must be a different person.
"""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import AuditEvent, Role
from reviews.models import ItemStatus, Queue, ReviewItem
from skills import selectors, services
from skills.models import (
    EvaluationCase,
    EvaluationCategory,
    EvaluationRun,
    SkillApproval,
    SkillVersion,
)
from tests.skills.conftest import SLUG, api_case, package, package_v2, service_case, upload_file

BASE = "/api/v1/skills"
V = f"{BASE}/{SLUG}/versions"

pytestmark = pytest.mark.django_db


def issue_on_console(client, name: str, capabilities: list[str]) -> APIClient:
    """Issue a token on the admin's /tokens/ page and return an API client holding it."""
    client.get("/tokens/")
    page = client.post(
        "/tokens/",
        {"name": name, "capabilities": capabilities, "max_authority": "agent_inferred"},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert page.status_code == 201
    html = page.content.decode()
    start = html.index('id="token-secret">') + len('id="token-secret">')
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {html[start : html.index('</pre>', start)]}")
    return agent


def evaluation(category: str, content_hash: str) -> dict:
    return {
        "category": category,
        "passed": True,
        "content_hash": content_hash,
        "environment": {"model": "test-model", "tools": {}},
        "cases": [api_case(category)],
    }


def test_two_tokens_of_one_admin_are_one_person_at_every_duty(
    login, admin_user, ada_api, abe_api, evaluator
):
    console = login(admin_user)
    author = issue_on_console(console, "writer-bot", ["skills:read", "skills:write"])
    second = issue_on_console(console, "eval-bot", ["skills:read", "evaluations:write"])
    assert author.post(BASE, {"slug": SLUG}, format="json").status_code == 201
    v1 = author.post(V, {"package": upload_file(package())}, format="multipart").json()
    assert author.post(f"{V}/1/submit").json()["status"] == "in_review"

    for category in EvaluationCategory.values:
        refused = second.post(f"{V}/1/evaluations", evaluation(category, v1["content_hash"]))
        assert (refused.status_code, refused.json()["code"]) == (409, "evaluator_is_author")
    assert not EvaluationRun.objects.exists()

    own = ada_api.post(f"{V}/1/approve", {"reason": "looks fine"})
    assert (own.status_code, own.json()["code"]) == (409, "author_cannot_approve")
    assert not SkillApproval.objects.exists()
    assert SkillVersion.objects.get().status == "in_review"

    # Another person approves and evaluates; the admin behind the author still may not publish.
    assert abe_api.post(f"{V}/1/approve", {"reason": "read it"}).json()["status"] == "approved"
    for category in EvaluationCategory.values:
        assert evaluator.post(
            f"{V}/1/evaluations", evaluation(category, v1["content_hash"]), format="json"
        ).json()["counts"]
    publish = ada_api.post(f"{V}/1/publish", {}, format="json")
    assert (publish.status_code, publish.json()["code"]) == (409, "author_cannot_publish")
    assert SkillVersion.objects.get().status == "approved"
    assert abe_api.post(f"{V}/1/publish", {}, format="json").json()["status"] == "published"


def test_a_token_nobody_owns_is_never_an_evaluator(acme, upload, ada, make_agent):
    version = upload(actor=ada)
    ownerless = make_agent(acme, name="legacy-eval", capabilities=["evaluations:write"])
    refused = ownerless.post(
        f"{V}/1/evaluations", evaluation("normal", version.content_hash), format="json"
    )
    assert (refused.status_code, refused.json()["code"]) == (409, "evaluator_unaccountable")
    assert not EvaluationRun.objects.exists()


def test_runs_recorded_by_the_authors_own_token_before_the_check_never_count(
    acme, upload, ada, admin_user, make_agent, pass_all
):
    version = upload(actor=ada)
    pass_all(version)
    assert selectors.evaluation_matrix(tenant=acme, version=version).complete
    # What a run the old check let through looks like: the author's other token,
    # marked independent because it was another token.
    own = make_agent(acme, name="own-eval", owner=admin_user).token
    run = EvaluationRun.objects.create(
        tenant=acme,
        version=version,
        content_hash=version.content_hash,
        category="normal",
        passed=True,
        independent=True,
        actor_kind="agent",
        actor_id=str(own.pk),
        actor_label=own.name,
    )
    EvaluationCase.objects.create(tenant=acme, run=run, position=0, **service_case("normal"))
    matrix = selectors.evaluation_matrix(tenant=acme, version=version)
    assert (matrix.complete, matrix.unverified) == (False, ["normal"])


@pytest.fixture
def escalated(acme, published_v1, make_agent, admin2) -> SkillVersion:
    """v2 adds the network capability; uploaded and submitted by a token acting for abe."""
    writer = make_agent(acme, name="abes-writer", capabilities=["skills:write"], owner=admin2)
    uploaded = writer.post(V, {"package": upload_file(package_v2())}, format="multipart")
    assert uploaded.status_code == 201
    assert writer.post(f"{V}/2/submit").json()["status"] == "in_review"
    return SkillVersion.objects.get(number=2)


@pytest.fixture
def ann_api(acme, make_member, session_api) -> APIClient:
    return session_api(make_member(acme, "ann", Role.ADMIN))


def test_an_escalation_needs_a_second_approver_who_is_neither_author_nor_first(
    escalated, ada_api, abe_api, ann_api, pass_all
):
    first = ada_api.post(f"{V}/2/approve", {"reason": "network use is needed"})
    assert first.status_code == 200
    body = first.json()
    assert (body["status"], body["approvals_required"]) == ("in_review", 2)
    assert [a["label"] for a in body["approvals"]] == ["ada"]
    assert body["approved_by"] is None

    again = ada_api.post(f"{V}/2/approve", {"reason": "really"})
    assert (again.status_code, again.json()["code"]) == (409, "second_approver_required")
    assert again.json()["approvals"] == 1
    author = abe_api.post(f"{V}/2/approve", {"reason": "my own"})
    assert (author.status_code, author.json()["code"]) == (409, "author_cannot_approve")
    pass_all(escalated)
    early = ada_api.post(f"{V}/2/publish", {}, format="json")
    assert (early.status_code, early.json()["code"]) == (409, "illegal_transition")
    assert SkillApproval.objects.filter(version=escalated).count() == 1

    second = ann_api.post(f"{V}/2/approve", {"reason": "agreed"}).json()
    assert (second["status"], second["approved_by"]["label"]) == ("approved", "ann")
    assert [a["label"] for a in second["approvals"]] == ["ada", "ann"]
    verbs = AuditEvent.objects.filter(target_type="skill_version", target_id=str(escalated.pk))
    assert list(
        verbs.filter(verb__startswith="skill_version.approv").values_list("verb", "data__approvals")
    ) == [
        ("skill_version.approval_recorded", 1),
        ("skill_version.approved", 2),
    ]
    assert ada_api.post(f"{V}/2/publish", {}, format="json").json()["status"] == "published"


def test_the_review_queue_reopens_for_the_second_approver_and_names_who_approved(
    acme, escalated, admin_user, admin2, login, make_member
):
    ada, abe = login(admin_user), login(admin2)
    ann = login(make_member(acme, "ann", Role.ADMIN))
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, status=ItemStatus.OPEN)
    ada.get(f"/review/skill_publication/?item={item.pk}")
    decided = ada.post(
        f"/review/skill_publication/{item.pk}/decide",
        {"verdict": "approve", "reason_code": "capabilities_ok"},
        HTTP_X_CSRFTOKEN=ada.cookies["csrftoken"].value,
    )
    assert decided.status_code in {200, 302}
    reopened = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, status=ItemStatus.OPEN)
    assert reopened.pk != item.pk
    assert "second_approval" in reopened.reason_codes
    escalated.refresh_from_db()
    assert escalated.status == "in_review"

    page = ann.get(f"/review/skill_publication/?item={reopened.pk}").content.decode()
    assert "1 of 2 approvals" in page
    assert "Still needed: 1 more admin, neither the author nor ada" in page

    for person in (ada, abe):  # the first approver, then the author's owner
        person.get(f"/review/skill_publication/?item={reopened.pk}")
        person.post(
            f"/review/skill_publication/{reopened.pk}/decide",
            {"verdict": "approve", "reason_code": "capabilities_ok"},
            HTTP_X_CSRFTOKEN=person.cookies["csrftoken"].value,
        )
        escalated.refresh_from_db()
        assert escalated.status == "in_review"
    ann.get(f"/review/skill_publication/?item={reopened.pk}")
    ann.post(
        f"/review/skill_publication/{reopened.pk}/decide",
        {"verdict": "approve", "reason_code": "capabilities_ok"},
        HTTP_X_CSRFTOKEN=ann.cookies["csrftoken"].value,
    )
    escalated.refresh_from_db()
    assert (escalated.status, escalated.approved_by_label) == ("approved", "ann")
    assert not ReviewItem.objects.filter(
        queue=Queue.SKILL_PUBLICATION, status=ItemStatus.OPEN
    ).exists()


def test_the_version_page_shows_who_approved_and_who_is_still_needed(
    acme, escalated, ada, login, admin_user
):
    services.skill_version_approve(tenant=acme, version=escalated, actor=ada, reason="ok")
    page = login(admin_user).get(f"/skills/{SLUG}/v2/").content.decode()
    assert "1 of 2 approvals" in page and "Still needed: 1 more admin" in page


def test_the_database_refuses_an_escalation_approved_by_one_person(acme, escalated, ada):
    services.skill_version_approve(tenant=acme, version=escalated, actor=ada, reason="ok")
    changes = selectors.sensitive_changes_against_production(tenant=acme, version=escalated)
    with pytest.raises(IntegrityError, match="needs more approvals"), transaction.atomic():
        SkillVersion.objects.filter(pk=escalated.pk).update(
            status="approved", approved_at=timezone.now(), approved_changes=changes
        )
    escalated.refresh_from_db()
    assert escalated.status == "in_review"
