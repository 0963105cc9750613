"""Operation policies: admins say what an agent's `succeeded` needs (API, console, command),
and a report that lacks it moves nothing."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from accounts.actors import Actor
from accounts.models import AuditEvent
from memory.models.platforms import OperationPolicy
from memory.services.platforms import operation_policy_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(admin_user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(admin_user)
    client.get("/platforms/")  # the console page sets the CSRF cookie
    client.credentials(HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    return client


def set_policy(client, platform="blog", **body):
    return client.post(f"/api/v1/platforms/{platform}/policies", body, format="json")


# -- the API ------------------------------------------------------------------------


def test_an_admin_sets_a_policy_and_replacing_it_is_audited_with_the_old_one(
    admin_api, acme, blog_platform
):
    created = set_policy(
        admin_api,
        operation="articles.create",
        require_external_id=True,
        evidence_fields=["url", "revision"],
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["platform"] == "blog"
    assert body["requirements"] == ["external_id", "evidence.url", "evidence.revision"]
    assert body["created_by"] == "ada"

    replaced = set_policy(admin_api, operation="articles.create", require_verifying_read=True)
    assert replaced.status_code == 200
    assert replaced.json()["requirements"] == ["verifying_read"]
    policy = OperationPolicy.objects.get(tenant=acme)
    assert (policy.require_external_id, policy.evidence_fields) == (False, [])
    audits = list(AuditEvent.objects.filter(verb="operation_policy.set").order_by("id"))
    assert audits[0].data["before"] is None
    assert audits[1].data["before"]["evidence_fields"] == ["url", "revision"]
    assert audits[1].data["after"]["require_verifying_read"] is True

    listed = admin_api.get("/api/v1/platforms/blog/policies").json()
    assert [p["operation"] for p in listed] == ["articles.create"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"operation": "articles.create"}, "policy_requires_nothing"),
        ({"operation": "  ", "require_external_id": True}, "validation_error"),
        (
            {"operation": "articles.create", "evidence_fields": ["Url; drop"]},
            "invalid_evidence_field",
        ),
    ],
)
def test_a_bad_policy_is_refused_and_changes_nothing(admin_api, blog_platform, body, code):
    response = set_policy(admin_api, **body)
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert not OperationPolicy.objects.exists()
    assert not AuditEvent.objects.filter(verb="operation_policy.set").exists()


def test_an_unknown_or_other_tenants_platform_is_not_found(admin_api, globex, dns):
    from memory.services.platforms import platform_register
    from tests.memory.conftest import PUBLIC_ADDRESS

    dns.answer("blog.example", [PUBLIC_ADDRESS])
    platform_register(
        tenant=globex,
        actor=Actor.system("test"),
        name="theirs",
        base_url="https://blog.example/api/",
    )
    for name in ("nowhere", "theirs"):
        response = set_policy(admin_api, platform=name, operation="x", require_external_id=True)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
        assert admin_api.get(f"/api/v1/platforms/{name}/policies").status_code == 404
    assert not OperationPolicy.objects.exists()


def test_agents_and_editors_cannot_set_policies(agent, editor, session_api, blog_platform):
    body = {"operation": "articles.create", "require_external_id": True}
    response = agent.post("/api/v1/platforms/blog/policies", body, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "role_required"
    response = session_api(editor).post("/api/v1/platforms/blog/policies", body, format="json")
    assert response.status_code == 403
    assert not OperationPolicy.objects.exists()


# -- the console and the command ------------------------------------------------------


def test_the_platforms_page_lists_policies_and_sets_one(login, admin_user, acme, blog_platform):
    client = login(admin_user)
    page = client.get("/platforms/")
    assert "No operation policies yet" in page.content.decode()
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/platforms/policies/",
        {
            "platform": "blog",
            "operation": "articles.create",
            "evidence_fields": "url, revision",
            "require_verifying_read": "on",
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302
    policy = OperationPolicy.objects.get(tenant=acme)
    assert policy.evidence_fields == ["url", "revision"]
    assert policy.require_verifying_read and not policy.require_external_id
    html = client.get("/platforms/").content.decode()
    assert "articles.create" in html and ">revision<" in html

    refused = client.post(
        "/platforms/policies/",
        {"platform": "blog", "operation": "x.y", "csrfmiddlewaretoken": token},
    )
    assert refused.status_code == 400
    assert "must require something" in refused.content.decode()
    assert OperationPolicy.objects.count() == 1


def test_editors_cannot_set_policies_in_the_console(editor, blog_platform):
    # No CSRF checks here, so the refusal can only come from the role.
    client = Client()
    client.force_login(editor)
    response = client.post(
        "/platforms/policies/",
        {"platform": "blog", "operation": "a", "require_external_id": "on"},
    )
    assert response.status_code == 403
    assert not OperationPolicy.objects.exists()


def test_the_command_sets_a_policy(acme, blog_platform):
    out = io.StringIO()
    call_command(
        "set_operation_policy",
        "--tenant=acme",
        "--platform=blog",
        "--operation=articles.create",
        "--require-external-id",
        "--evidence-field=url",
        stdout=out,
    )
    assert "set the policy for articles.create on blog (acme): external_id, evidence.url" in (
        out.getvalue()
    )
    with pytest.raises(CommandError, match="platform_not_registered"):
        call_command(
            "set_operation_policy",
            "--tenant=acme",
            "--platform=nowhere",
            "--operation=a",
            "--require-external-id",
        )


def test_a_policy_must_require_something_in_the_database_too(acme, blog_platform):
    from django.db import IntegrityError, transaction

    policy, _ = operation_policy_set(
        tenant=acme,
        actor=Actor.system("test"),
        platform="blog",
        operation="articles.create",
        require_external_id=True,
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        OperationPolicy.objects.filter(pk=policy.pk).update(require_external_id=False)
