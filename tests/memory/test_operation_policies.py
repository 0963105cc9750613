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
from memory.receipts.models.platforms import OperationPolicy
from memory.receipts.models.receipts import Receipt, ReceiptTransition
from memory.receipts.services.platforms import operation_policy_set
from memory.receipts.services.receipt_reads import receipts_reconcile
from tests.memory.conftest import http_reconciler

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
    from memory.receipts.services.platforms import platform_register
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


# -- the policy applied to agents' reports ----------------------------------------------


def _policy(tenant, platform="fake", **requirements):
    return operation_policy_set(
        tenant=tenant,
        actor=Actor.system("test setup"),
        platform=platform,
        operation="articles.create",
        **requirements,
    )[0]


def _submitted(agent, fake, key="pub-1", operation="articles.create"):
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": operation,
            "target": f"{fake.url}/articles",
            "intent": {"title": key},
            "idempotency_key": key,
            "reconciler": http_reconciler(fake, proven_by="status_lookup"),
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    receipt = created.json()
    moved = agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "submitted"}, format="json"
    )
    assert moved.status_code == 200, moved.json()
    return receipt


def _report(agent, receipt, **body):
    return agent.post(
        f"/api/v1/receipts/{receipt['id']}/transitions", {"to": "succeeded", **body}, format="json"
    )


def test_a_success_without_what_the_policy_needs_is_refused_and_moves_nothing(
    acme, agent, platform
):
    _policy(acme, require_external_id=True, evidence_fields=["url", "revision"])
    receipt = _submitted(agent, platform)
    transitions = ReceiptTransition.objects.filter(receipt_id=receipt["id"]).count()

    refused = _report(agent, receipt, evidence={"url": "https://blog/1", "revision": ""})
    assert refused.status_code == 409
    problem = refused.json()
    assert problem["code"] == "evidence_required"
    assert problem["missing"] == ["external_id", "evidence.revision"]
    assert problem["required"] == ["external_id", "evidence.url", "evidence.revision"]
    assert set(problem["errors"]) == {"external_id", "evidence.revision"}
    stored = Receipt.objects.get(pk=receipt["id"])
    assert (stored.state, stored.external_id) == ("submitted", "")
    assert ReceiptTransition.objects.filter(receipt_id=receipt["id"]).count() == transitions

    accepted = _report(
        agent, receipt, external_id="art_1", evidence={"url": "https://blog/1", "revision": 3}
    )
    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["state"] == "succeeded"


def test_other_operations_and_other_tenants_keep_todays_behaviour(
    acme, globex, agent, platform, globex_agent
):
    _policy(acme, require_external_id=True)
    other = _submitted(agent, platform, key="other-op", operation="comments.create")
    assert _report(agent, other).json()["state"] == "succeeded"
    # globex has no policy for articles.create: its agents' word is taken as it comes.
    from tests.memory.conftest import register_fake_platform

    platform.registered = register_fake_platform(platform, tenant=globex)
    theirs = _submitted(globex_agent, platform, key="theirs")
    assert _report(globex_agent, theirs).json()["state"] == "succeeded"


def test_the_state_machine_refuses_before_the_policy_is_asked(acme, agent, platform):
    _policy(acme, require_external_id=True)
    created = agent.post(
        "/api/v1/receipts",
        {
            "operation": "articles.create",
            "target": f"{platform.url}/articles",
            "intent": {"title": "planned only"},
            "idempotency_key": "planned-only",
            "reconciler": http_reconciler(platform),
        },
        format="json",
    ).json()
    response = _report(agent, created)
    assert response.status_code == 409
    assert response.json()["code"] == "illegal_transition"
    assert response.json()["allowed"] == ["submitted"]


def test_with_a_verifying_read_only_memdesks_read_makes_it_succeeded(acme, agent, platform, actors):
    _policy(acme, require_external_id=True, require_verifying_read=True)
    receipt = _submitted(agent, platform)
    platform.seed(receipt["idempotency_key"], article_id="art_7")

    refused = _report(agent, receipt, evidence={"url": "https://blog/7"})
    assert refused.json()["missing"] == ["external_id"]

    reported = _report(agent, receipt, external_id="art_7", evidence={"url": "https://blog/7"})
    assert reported.status_code == 200, reported.json()
    assert reported.json()["state"] == "outcome_unknown"
    moved = ReceiptTransition.objects.filter(receipt_id=receipt["id"]).latest("id")
    assert (moved.to_state, moved.reason) == ("outcome_unknown", "verifying_read_required")
    assert moved.evidence == {"url": "https://blog/7"}

    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = Receipt.objects.get(pk=receipt["id"])
    assert (settled.state, settled.external_id) == ("succeeded", "art_7")
    last = ReceiptTransition.objects.filter(receipt_id=receipt["id"]).latest("id")
    assert (last.from_state, last.actor_kind) == ("reconciling", "system")


def test_a_verifying_read_that_finds_another_id_goes_to_a_person(acme, agent, platform, actors):
    _policy(acme, require_external_id=True, require_verifying_read=True)
    receipt = _submitted(agent, platform)
    platform.seed(receipt["idempotency_key"], article_id="art_real")
    _report(agent, receipt, external_id="art_claimed")
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    settled = Receipt.objects.get(pk=receipt["id"])
    assert settled.state == "manual_review"
    assert settled.external_id == "art_claimed"


def test_a_verifying_read_that_finds_nothing_never_makes_it_succeeded(
    acme, agent, platform, actors
):
    _policy(acme, require_verifying_read=True)
    receipt = _submitted(agent, platform)
    assert _report(agent, receipt).json()["state"] == "outcome_unknown"
    receipts_reconcile(receipt_ids=[receipt["id"]], worker=actors.worker)
    assert Receipt.objects.get(pk=receipt["id"]).state == "safe_to_retry"
