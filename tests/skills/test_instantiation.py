"""Credential slots, the instantiation check, and versions made incompatible by a retired tool."""

from __future__ import annotations

import pytest

from accounts.models import AuditEvent
from skills.models import LabelMove, RetiredTool, SkillLabel, SkillVersion

BASE = "/api/v1/skills"
pytestmark = pytest.mark.django_db

BLOG = {
    "description": "Publish an approved article to the company blog.",
    "credentials": [
        {"slot": "blog_token", "purpose": "post to the blog API"},
        {"slot": "image_store", "purpose": "upload the cover image"},
    ],
    "capabilities": ["network", "receipts:write"],
    "allowed-tools": "http_post Read",
}


BINDINGS = {"blog_token": "vault:blog/token", "image_store": "env:S3_BUCKET_KEY"}


@pytest.fixture
def blog(publish) -> SkillVersion:
    return publish("blog-publish", **BLOG)


@pytest.fixture
def runner(acme, make_agent):
    return make_agent(acme, name="publisher", capabilities=["skills:read", "receipts:write"])


def instantiate(client, payload, number=1, slug="blog-publish"):
    return client.post(f"{BASE}/{slug}/versions/{number}/instantiate", payload, format="json")


def test_a_complete_binding_is_ready_and_audited_with_names_only(runner, grant, blog):
    grant(runner, tools=("http_post", "Read"), capabilities=("network",))
    response = instantiate(
        runner,
        {
            "bindings": {"blog_token": "vault:blog/token", "image_store": "env:S3_BUCKET_KEY"},
            "tools": ["http_post", "Read", "Write"],
            "capabilities": ["network"],
        },
    )

    assert response.status_code == 200, response.json()
    assert response.json() == {
        "skill": "blog-publish",
        "number": 1,
        "content_hash": blog.content_hash,
        "instance": response.json()["instance"],
        "state": "ready",
        "reasons": [],
        "bindings": {"blog_token": "vault:blog/token", "image_store": "env:S3_BUCKET_KEY"},
    }
    event = AuditEvent.objects.get(verb="skill_version.instantiated")
    assert event.actor_label == "publisher"
    assert event.data["state"] == "ready"
    assert event.data["bindings"] == {
        "blog_token": "vault:blog/token",
        "image_store": "env:S3_BUCKET_KEY",
    }


def test_every_missing_piece_is_a_reason(acme, make_agent, grant, blog):
    weak = make_agent(acme, name="weak", capabilities=["skills:read"])
    # Granted the network but not http_post; says it has Read but no network right now.
    grant(weak, tools=("Read",), capabilities=("network",))
    response = instantiate(
        weak,
        {"bindings": {"blog_token": "vault:blog/token"}, "tools": ["Read"], "capabilities": []},
    )

    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "blocked"
    assert [(r["code"], r["slot"], r["tool"], r["capability"]) for r in body["reasons"]] == [
        ("slot_unbound", "image_store", None, None),
        ("tool_not_granted", None, "http_post", None),
        ("capability_unavailable", None, None, "network"),
        ("capability_exceeds_token", None, None, "receipts:write"),
    ]
    assert "upload the cover image" in body["reasons"][0]["detail"]


def test_a_secret_value_instead_of_a_name_is_refused_and_not_recorded(runner, blog):
    response = instantiate(
        runner,
        {"bindings": {"blog_token": "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"}, "tools": []},
    )

    assert (response.status_code, response.json()["code"]) == (400, "secret_detected")
    assert "ghp_" not in response.content.decode()
    assert not AuditEvent.objects.filter(verb="skill_version.instantiated").exists()


@pytest.mark.parametrize(
    "payload",
    [
        {"bindings": {"not_a_slot": "vault:x"}},
        {"bindings": {"Not A Slot <script>" * 100: "vault:x"}},
        {"bindings": {"blog_token": "has spaces and; semicolons"}},
        {"bindings": {"blog_token": "x" * 201}},
        {"tools": ["rm -rf /"]},
        {"bindings": "vault:x"},
    ],
)
def test_bad_bindings_are_problems_that_change_nothing(runner, blog, payload):
    response = instantiate(runner, payload)

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not AuditEvent.objects.filter(verb="skill_version.instantiated").exists()


def test_people_and_tokens_without_skills_read_cannot_instantiate(acme, make_agent, ada_api, blog):
    writer_only = make_agent(acme, name="w", capabilities=["events:write"])

    assert instantiate(writer_only, {}).status_code == 403
    assert instantiate(ada_api, {}).status_code == 403


def test_another_tenants_version_is_not_found(globex, make_agent, blog):
    stranger = make_agent(globex, name="stranger", capabilities=["skills:read"])

    assert instantiate(stranger, {}).status_code == 404


def test_a_draft_is_blocked_as_not_published(runner, upload, ada):
    upload(actor=ada)
    body = instantiate(runner, {}, slug="pdf-tools").json()

    assert (body["state"], [r["code"] for r in body["reasons"]]) == (
        "blocked",
        ["version_not_published"],
    )


def test_retiring_a_tool_makes_its_versions_incompatible_and_production_falls_back(
    acme,
    ada,
    abe,
    ada_api,
    runner,
    reader,
    publish,
    pass_all,
    make_ready,
    django_capture_on_commit_callbacks,
):
    from skills import services
    from tests.skills.conftest import package

    v1 = publish("blog-publish", **{**BLOG, "allowed-tools": "Read"})
    v2, _ = services.skill_version_upload(
        tenant=acme, skill=v1.skill, data=package("blog-publish", **BLOG), actor=ada
    )
    pass_all(v2)
    services.skill_version_submit(tenant=acme, version=v2, actor=ada)
    services.skill_version_approve(tenant=acme, version=v2, actor=abe)
    services.skill_version_publish(tenant=acme, version=v2, actor=abe)
    make_ready(runner, "blog-publish", tools=("http_post", "Read"), bindings=BINDINGS)
    assert runner.get(f"{BASE}/blog-publish/resolve").json()["number"] == 2

    no_reason = ada_api.post(f"{BASE}/tools/http_post/retire", {}, format="json")
    assert (no_reason.status_code, no_reason.json()["code"]) == (400, "reason_required")
    assert not RetiredTool.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = ada_api.post(
            f"{BASE}/tools/http_post/retire",
            {"reason": "blog API moved to webhooks"},
            format="json",
        )
    assert response.status_code == 200, response.json()
    assert response.json()["incompatible"] == [
        {"skill": "blog-publish", "number": 2, "previous_status": "published"}
    ]
    v2.refresh_from_db()
    assert v2.status == "incompatible"
    assert v2.incompatible_reason == "tool http_post retired: blog API moved to webhooks"
    assert SkillLabel.objects.get(skill=v1.skill).version_id == v1.pk
    move = LabelMove.objects.filter(skill=v1.skill).latest("id")
    assert (move.from_version_id, move.to_version_id) == (v2.pk, v1.pk)
    # The label moved back to v1 and v2's instance was invalidated: v1 is checked anew.
    make_ready(runner, "blog-publish", bindings=BINDINGS)
    assert runner.get(f"{BASE}/blog-publish/resolve").json()["number"] == 1
    pinned = runner.get(f"{BASE}/blog-publish/resolve", {"version": 2})
    assert (pinned.status_code, pinned.json()["code"]) == (409, "version_incompatible")
    blocked = instantiate(runner, {"tools": ["http_post"]}, number=2).json()
    assert "version_incompatible" in [r["code"] for r in blocked["reasons"]]
    assert "tool_retired" in [r["code"] for r in blocked["reasons"]]
    assert reader.get(f"{BASE}/tools").json()["results"][0]["name"] == "http_post"

    again = ada_api.post(f"{BASE}/tools/http_post/retire", {"reason": "x"}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "tool_already_retired")
    refused = ada_api.post(
        f"{BASE}/blog-publish/versions",
        {"package": _upload(package("blog-publish", body="v3", **BLOG))},
        format="multipart",
    )
    assert (refused.status_code, refused.json()["code"]) == (409, "tool_retired")
    assert refused.json()["tools"] == ["http_post"]


def _upload(data: bytes):
    from tests.skills.conftest import upload_file

    return upload_file(data)


def test_the_database_refuses_leaving_incompatible_except_to_revoked(acme, runner, blog):
    from django.db import IntegrityError, connection, transaction

    from accounts.actors import Actor
    from skills import services

    admin = Actor(kind="user", id="1", label="root", role="admin")
    services.tool_retire(tenant=acme, name="http_post", reason="gone", actor=admin)
    blog.refresh_from_db()
    assert blog.status == "incompatible"
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE skills_skillversion SET status = 'published' WHERE id = %s", [blog.pk]
        )


def test_agents_cannot_retire_tools(acme, make_agent, blog):
    agent = make_agent(acme, name="a", capabilities=["skills:read", "skills:write"])

    response = agent.post(f"{BASE}/tools/http_post/retire", {"reason": "x"}, format="json")
    assert response.status_code == 403
    assert not RetiredTool.objects.exists()


def test_retiring_a_tool_closes_the_review_of_a_version_needing_it(acme, ada, ada_api, upload):
    from reviews.models import ReviewItem
    from skills import services
    from tests.skills.conftest import package

    version = upload(package(**{"allowed-tools": "http_post"}), actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    item = ReviewItem.objects.get(target_id=str(version.pk))
    assert item.status == "open"

    response = ada_api.post(f"{BASE}/tools/http_post/retire", {"reason": "gone"}, format="json")
    assert response.json()["incompatible"] == [
        {"skill": "pdf-tools", "number": 1, "previous_status": "in_review"}
    ]
    item.refresh_from_db()
    assert item.status == "cancelled"
    approve = ada_api.post(f"{BASE}/pdf-tools/versions/1/approve")
    assert (approve.status_code, approve.json()["code"]) == (409, "illegal_transition")


def test_an_admin_retires_a_tool_from_the_console(login, admin_user, editor, blog):
    from tests.skills.test_views import csrf

    client = login(admin_user)
    refused = client.post(
        "/skills/tools/retire/",
        {"csrfmiddlewaretoken": csrf(client), "name": "http_post", "reason": "gone"},
    )
    assert refused.status_code == 400 and not RetiredTool.objects.exists()

    done = client.post(
        "/skills/tools/retire/",
        {
            "csrfmiddlewaretoken": csrf(client),
            "name": "http_post",
            "reason": "blog API moved",
            "confirm": "on",
        },
    )
    assert done.status_code == 302
    blog.refresh_from_db()
    assert blog.status == "incompatible"
    page = client.get("/skills/").content.decode()
    assert "<code>http_post</code>" in page and "blog API moved" in page
    editor_client = login(editor)
    assert "Retire tool" not in editor_client.get("/skills/").content.decode()
    forbidden = editor_client.post(
        "/skills/tools/retire/",
        {
            "csrfmiddlewaretoken": csrf(editor_client),
            "name": "Read",
            "reason": "x",
            "confirm": "on",
        },
    )
    assert forbidden.status_code == 403
    assert RetiredTool.objects.count() == 1
