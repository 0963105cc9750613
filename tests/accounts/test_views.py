"""The admin tokens page: list, issue (secret shown once), revoke; admins of the tenant only."""

from __future__ import annotations

import json
import logging

import pytest
from django.db import ProgrammingError, connection, transaction
from rest_framework.test import APIClient

from accounts.models import AgentToken, AuditEvent
from accounts.services import hash_token_secret

pytestmark = pytest.mark.django_db


def csrf(client) -> str:
    client.get("/tokens/")
    return client.cookies["csrftoken"].value


def issue(client, **overrides):
    body = {
        "name": "publisher",
        "capabilities": ["events:write", "claims:write"],
        "subjects": "user:alice\nproject:crm",
        "max_authority": "tool_verified",
        **overrides,
    }
    return client.post("/tokens/", body, HTTP_X_CSRFTOKEN=csrf(client))


def secret_of(html: str) -> str:
    start = html.index('id="token-secret">') + len('id="token-secret">')
    return html[start : html.index("</pre>", start)]


def test_it_lists_the_tenants_tokens_with_their_limits(admin_user, login, make_agent, acme):
    agent = make_agent(acme, name="reader", capabilities=["recall"], subjects=["user:bob"])
    agent.get("/api/v1/claims")
    response = login(admin_user).get("/tokens/")
    html = response.content.decode()
    assert response.status_code == 200
    row = html[html.index('data-token="reader"') :]
    row = row[: row.index("</tr>")]
    assert agent.token.prefix in row and "recall" in row and "user:bob" in row
    assert "agent_inferred" in row and "<time" in row and "never" not in row
    assert 'class="chip active"' in row
    assert 'href="/tokens/"' in html  # the navigation links admins here


def test_it_issues_a_token_and_shows_the_secret_exactly_once(admin_user, login, acme, caplog):
    client = login(admin_user)
    with caplog.at_level(logging.DEBUG):
        response = issue(client)
    html = response.content.decode()
    assert response.status_code == 201
    assert "no-store" in response["Cache-Control"]
    secret = secret_of(html)
    assert secret.startswith("mdk_") and html.count(secret) == 1
    token = AgentToken.objects.get(tenant=acme, name="publisher")
    assert token.capabilities == ["claims:write", "events:write"]
    assert token.allowed_subjects == ["project:crm", "user:alice"]
    assert token.max_authority == "tool_verified"
    assert token.secret_hash == hash_token_secret(secret)
    # The secret is stored nowhere: not in any row of the database, not in the audit, not in logs.
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(t)::text FROM accounts_agenttoken t")
        assert all(secret not in row for (row,) in cursor.fetchall())
    audit = AuditEvent.objects.get(verb="agent_token.created", target_id=str(token.pk))
    assert audit.actor_label == "ada"
    assert secret not in json.dumps(audit.data) + audit.reason
    assert all(secret not in record.getMessage() for record in caplog.records)
    assert secret not in client.get("/tokens/").content.decode()
    # And it works, within its limits.
    agent = APIClient()
    agent.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert agent.get("/api/v1/claims").status_code == 200
    outside = agent.post("/api/v1/recall", {"subject": "user:alice"}, format="json")
    assert outside.status_code == 403 and outside.json()["code"] == "capability_required"


def test_issuing_refuses_bad_input_and_changes_nothing(admin_user, login, make_agent, acme):
    make_agent(acme, name="publisher")
    client = login(admin_user)
    taken = issue(client)
    assert taken.status_code == 400
    assert "A token with this name exists" in taken.content.decode()
    for overrides, message in (
        ({"name": "other", "capabilities": []}, "Choose at least one capability."),
        ({"name": "other", "subjects": "alice"}, "is not a subject; write kind:ref."),
        ({"name": "other", "max_authority": "root"}, "Select a valid choice."),
        ({"name": "other", "capabilities": ["admin"]}, "Select a valid choice."),
        ({"name": "bad name!"}, "Use letters, digits"),
    ):
        response = issue(client, **overrides)
        assert response.status_code == 400
        assert message in response.content.decode()
        assert "token-secret" not in response.content.decode()
    assert AgentToken.objects.filter(tenant=acme).count() == 1


def test_revoking_needs_a_reason_is_audited_and_refuses_the_token_at_once(
    admin_user, login, make_agent, acme
):
    agent = make_agent(acme, name="publisher")
    assert agent.get("/api/v1/claims").status_code == 200
    client = login(admin_user)
    token = csrf(client)
    url = f"/tokens/{agent.token.pk}/revoke"
    refused = client.post(url, {"reason": "  "}, HTTP_X_CSRFTOKEN=token)
    assert refused.status_code == 400
    assert "Say why the token is revoked." in refused.content.decode()
    assert agent.get("/api/v1/claims").status_code == 200
    done = client.post(url, {"reason": "laptop stolen"}, HTTP_X_CSRFTOKEN=token, follow=True)
    assert "Revoked publisher" in done.content.decode()
    assert 'class="chip revoked"' in done.content.decode()
    assert agent.get("/api/v1/claims").status_code == 401
    audit = AuditEvent.objects.get(verb="agent_token.revoked", target_id=str(agent.token.pk))
    assert (audit.reason, audit.actor_label) == ("laptop stolen", "ada")
    again = client.post(url, {"reason": "twice"}, HTTP_X_CSRFTOKEN=token, follow=True)
    assert "was already revoked" in again.content.decode()
    assert AuditEvent.objects.filter(verb="agent_token.revoked").count() == 1


@pytest.mark.parametrize("role", ["editor", "auditor", "user"])
def test_only_admins_reach_the_page(role, acme, make_member, login, make_agent):
    agent = make_agent(acme, name="publisher")
    client = login(make_member(acme, f"someone-{role}", role))
    page = client.get("/tokens/")
    assert page.status_code == 403
    assert "publisher" not in page.content.decode()
    nav = client.get("/me/").content.decode()
    assert "My memories" in nav and 'href="/tokens/"' not in nav
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    posts = (
        client.post(
            "/tokens/", {"name": "mine", "capabilities": ["recall"]}, HTTP_X_CSRFTOKEN=token
        ),
        client.post(f"/tokens/{agent.token.pk}/revoke", {"reason": "x"}, HTTP_X_CSRFTOKEN=token),
    )
    assert [p.status_code for p in posts] == [403, 403]
    assert AgentToken.objects.filter(tenant=acme).count() == 1
    assert AgentToken.objects.get(pk=agent.token.pk).revoked_at is None


def test_signed_out_people_are_sent_to_sign_in(client):
    response = client.get("/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_another_tenants_tokens_are_invisible(admin_user, login, make_agent, globex, acme):
    theirs = make_agent(globex, name="globex-secret-bot")
    client = login(admin_user)
    assert "globex-secret-bot" not in client.get("/tokens/").content.decode()
    response = client.post(
        f"/tokens/{theirs.token.pk}/revoke", {"reason": "x"}, HTTP_X_CSRFTOKEN=csrf(client)
    )
    assert response.status_code == 404
    assert AgentToken.objects.get(pk=theirs.token.pk).revoked_at is None
    assert theirs.get("/api/v1/claims").status_code == 200


def test_posts_need_the_csrf_token(admin_user, login, make_agent, acme):
    agent = make_agent(acme, name="publisher")
    client = login(admin_user)
    created = client.post("/tokens/", {"name": "x", "capabilities": ["recall"]})
    revoked = client.post(f"/tokens/{agent.token.pk}/revoke", {"reason": "x"})
    assert (created.status_code, revoked.status_code) == (403, 403)
    assert AgentToken.objects.filter(tenant=acme).count() == 1
    assert AgentToken.objects.get(pk=agent.token.pk).revoked_at is None


def test_the_pages_carry_no_inline_script_style_or_handlers(admin_user, login, make_agent, acme):
    make_agent(acme, name="publisher")
    client = login(admin_user)
    pages = [client.get("/tokens/").content.decode(), issue(client).content.decode()]
    for html in pages:
        body = html[html.index("<main") :]
        assert "<script" not in body and "style=" not in body
        for handler in ("onclick=", "onsubmit=", "hx-on"):
            assert handler not in body


def test_the_list_query_count_is_flat(
    admin_user, login, make_agent, acme, django_assert_max_num_queries
):
    for n in range(20):
        make_agent(acme, name=f"bot-{n}", subjects=[f"user:u{n}"])
    client = login(admin_user)
    with django_assert_max_num_queries(8):
        html = client.get("/tokens/").content.decode()
    assert html.count("data-token=") == 20


def test_a_person_of_no_tenant_finds_no_token_page(outsider, login, make_agent, acme):
    agent = make_agent(acme, name="publisher")
    client = login(outsider)
    page = client.get("/tokens/")
    assert page.status_code == 404
    assert "publisher" not in page.content.decode()
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    posts = (
        client.post(
            "/tokens/", {"name": "mine", "capabilities": ["recall"]}, HTTP_X_CSRFTOKEN=token
        ),
        client.post(f"/tokens/{agent.token.pk}/revoke", {"reason": "x"}, HTTP_X_CSRFTOKEN=token),
    )
    assert [p.status_code for p in posts] == [404, 404]
    assert list(AgentToken.objects.values_list("name", "revoked_at")) == [("publisher", None)]


def test_a_token_acts_for_the_admin_who_issued_it(admin_user, login, acme):
    response = issue(login(admin_user), name="helper")
    token = AgentToken.objects.get(tenant=acme, name="helper")
    assert response.status_code == 201
    assert token.owner == admin_user
    created = AuditEvent.objects.get(verb="agent_token.created", target_id=str(token.pk))
    assert created.data["owner"] == admin_user.pk
    row = login(admin_user).get("/tokens/").content.decode()
    row = row[row.index('data-token="helper"') :]
    assert '<td data-label="Acts for">ada</td>' in row[: row.index("</tr>")]


def test_an_admin_may_name_another_staff_member_as_owner(admin_user, editor, login, acme):
    response = issue(login(admin_user), name="erins-bot", owner=str(editor.memberships.get().pk))
    assert response.status_code == 201
    assert AgentToken.objects.get(tenant=acme, name="erins-bot").owner == editor


def test_an_owner_from_elsewhere_is_refused_and_nothing_is_issued(
    admin_user, alice, globex, make_member, login, acme
):
    stranger = make_member(globex, "gus", "admin")
    client = login(admin_user)
    for membership in (stranger.memberships.get(), alice.memberships.get()):
        response = issue(client, name="sneaky", owner=str(membership.pk))
        assert response.status_code == 400
        assert "Select a valid choice" in response.content.decode()
    assert not AgentToken.objects.filter(name="sneaky").exists()


def test_a_tokens_owner_cannot_be_moved_to_another_person(admin_user, editor, make_agent, acme):
    token = make_agent(acme, name="bound", owner=admin_user).token
    with (
        pytest.raises(ProgrammingError, match="Cannot update rows"),
        connection.cursor() as cursor,
        transaction.atomic(),
    ):
        cursor.execute(
            "UPDATE accounts_agenttoken SET owner_id = %s WHERE id = %s", [editor.pk, token.pk]
        )
    token.refresh_from_db()
    assert token.owner == admin_user
