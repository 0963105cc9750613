from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts.models import (
    DEFAULT_CAPABILITIES,
    AgentToken,
    AuditEvent,
    Capability,
    Membership,
    SubjectOwnership,
    Tenant,
)
from accounts.services import hash_token_secret


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_create_tenant_is_idempotent():
    first = run("create_tenant", "initech")
    second = run("create_tenant", "initech")
    assert "created" in first
    assert "already exists" in second
    assert Tenant.objects.filter(slug="initech").count() == 1
    assert AuditEvent.objects.filter(verb="tenant.created").count() == 1


@pytest.mark.django_db
def test_create_member_creates_user_with_role_and_password():
    run("create_tenant", "initech")
    run(
        "create_member",
        "--tenant",
        "initech",
        "--username",
        "peter",
        "--password",
        "tps-report-9",
        "--role",
        "editor",
    )
    user = get_user_model().objects.get(username="peter")
    assert user.check_password("tps-report-9")
    assert Membership.objects.get(user=user).role == "editor"
    # Re-running changes the role instead of failing.
    run("create_member", "--tenant", "initech", "--username", "peter", "--role", "admin")
    assert Membership.objects.get(user=user).role == "admin"
    assert user.check_password("tps-report-9")


@pytest.mark.django_db
def test_create_member_refuses_unknown_tenant():
    with pytest.raises(CommandError, match="no tenant"):
        run("create_member", "--tenant", "nope", "--username", "x", "--role", "editor")


@pytest.mark.django_db
def test_link_subject_links_user_to_subject():
    run("create_tenant", "initech")
    run("create_member", "--tenant", "initech", "--username", "milton", "--role", "user")
    run("link_subject", "--tenant", "initech", "--username", "milton", "--subject", "user:milton")
    run("link_subject", "--tenant", "initech", "--username", "milton", "--subject", "user:milton")
    assert list(SubjectOwnership.objects.values_list("subject_key", flat=True)) == ["user:milton"]
    with pytest.raises(CommandError, match="kind:ref"):
        run("link_subject", "--tenant", "initech", "--username", "milton", "--subject", "milton")


@pytest.mark.django_db
def test_create_agent_token_prints_secret_last_and_stores_only_its_hash():
    run("create_tenant", "initech")
    out = run("create_agent_token", "--tenant", "initech", "--name", "bot")
    secret = out.strip().splitlines()[-1]
    assert secret.startswith("mdk_")
    token = AgentToken.objects.get(name="bot")
    assert token.secret_hash == hash_token_secret(secret)
    # Every capability but reaching other tokens' receipts, which is always asked for.
    assert sorted(token.capabilities) == sorted(DEFAULT_CAPABILITIES)
    assert set(Capability.values) - set(token.capabilities) == {"receipts:operate"}
    assert not AgentToken.objects.filter(secret_hash=secret).exists()
    assert secret not in str(list(AgentToken.objects.values()))


@pytest.mark.django_db
def test_create_agent_token_with_selected_capabilities_and_subjects():
    run("create_tenant", "initech")
    run(
        "create_agent_token",
        "--tenant",
        "initech",
        "--name",
        "reader",
        "--capability",
        "recall",
        "--capability",
        "skills:read",
        "--subject",
        "user:milton",
    )
    token = AgentToken.objects.get(name="reader")
    assert token.capabilities == ["recall", "skills:read"]
    assert token.allowed_subjects == ["user:milton"]
    with pytest.raises(CommandError, match="exists"):
        run("create_agent_token", "--tenant", "initech", "--name", "reader")


@pytest.mark.django_db
def test_revoke_agent_token_revokes_audits_and_is_idempotent(acme, make_agent):
    agent = make_agent(acme, name="publisher")
    assert agent.get("/api/v1/claims").status_code == 200
    out = run("revoke_agent_token", "--tenant", "acme", "--name", "publisher", "--reason", "leaked")
    assert "revoked token publisher of acme" in out
    token = AgentToken.objects.get(tenant=acme, name="publisher")
    assert token.revoked_at is not None
    assert agent.get("/api/v1/claims").status_code == 401
    again = run("revoke_agent_token", "--tenant", "acme", "--name", "publisher")
    assert "already revoked" in again and "nothing changed" in again
    token.refresh_from_db()
    rows = AuditEvent.objects.filter(verb="agent_token.revoked", target_id=str(token.pk))
    assert [(row.reason, row.actor_label) for row in rows] == [("leaked", "operator")]


@pytest.mark.django_db
def test_revoke_agent_token_names_unknown_tokens_and_tenants(acme, globex, make_agent):
    make_agent(acme, name="publisher")
    make_agent(globex, name="globex-bot")
    with pytest.raises(CommandError, match=r"no token named 'nope' in acme; its tokens are: publ"):
        run("revoke_agent_token", "--tenant", "acme", "--name", "nope")
    # A token of another tenant is not found by name in this one.
    with pytest.raises(CommandError, match="no token named 'globex-bot' in acme"):
        run("revoke_agent_token", "--tenant", "acme", "--name", "globex-bot")
    with pytest.raises(CommandError, match="no tenant 'initech'"):
        run("revoke_agent_token", "--tenant", "initech", "--name", "publisher")
    assert not AgentToken.objects.filter(revoked_at__isnull=False).exists()


def test_create_agent_token_records_the_owner_it_is_given(acme, globex, make_member):
    owner = make_member(acme, "ada", "admin")
    make_member(globex, "gus", "admin")
    assert "acting for ada" in run(
        "create_agent_token", "--tenant", "acme", "--name", "ci", "--owner", "ada"
    )
    assert AgentToken.objects.get(tenant=acme, name="ci").owner == owner
    with pytest.raises(CommandError, match="not staff of acme"):
        run("create_agent_token", "--tenant", "acme", "--name", "ci2", "--owner", "gus")
    with pytest.raises(CommandError, match="no user 'nobody-here'"):
        run("create_agent_token", "--tenant", "acme", "--name", "ci3", "--owner", "nobody-here")
    assert not AgentToken.objects.filter(name__in=["ci2", "ci3"]).exists()
