import pytest
from rest_framework.test import APIClient

from accounts.actors import Actor
from accounts.models import AgentToken
from accounts.selectors import agent_token_by_secret_hash
from accounts.services import agent_token_revoke, hash_token_secret
from tests.memory.helpers import post_event, submit

pytestmark = pytest.mark.django_db


def test_missing_token_is_401_problem():
    response = APIClient().get("/api/v1/claims")
    assert response.status_code == 401
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_authenticated"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_unknown_token_is_401():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer mdk_not-a-real-token")
    response = client.get("/api/v1/claims")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_revoked_token_is_401(agent):
    assert agent.get("/api/v1/claims").status_code == 200
    agent_token_revoke(token=agent.token, actor=Actor.system(), reason="leaked")
    response = agent.get("/api/v1/claims")
    assert response.status_code == 401


def test_token_without_capability_is_403_capability_required(acme, make_agent):
    reader = make_agent(acme, name="reader", capabilities=["recall"])
    response = reader.post(
        "/api/v1/events",
        {"subject": "user:alice", "kind": "x", "observed_at": "2026-11-01T00:00:00Z"},
        format="json",
    )
    assert response.status_code == 403
    body = response.json()
    assert body["code"] == "capability_required"
    assert body["capability"] == "events:write"


def test_token_use_is_recorded(agent):
    assert agent.token.last_used_at is None
    agent.get("/api/v1/claims")
    agent.token.refresh_from_db()
    assert agent.token.last_used_at is not None


def test_objects_of_another_tenant_are_404(agent, globex_agent):
    event = post_event(agent)
    claim = submit(agent, event_id=event["id"])
    for url in (f"/api/v1/events/{event['id']}", f"/api/v1/claims/{claim['id']}"):
        response = globex_agent.get(url)
        assert response.status_code == 404, url
        assert response.json()["code"] == "not_found"
    response = globex_agent.post(
        f"/api/v1/claims/{claim['id']}/invalidate", {"reason": "x"}, format="json"
    )
    assert response.status_code == 404
    # A foreign event cannot be used as a source either.
    response = globex_agent.post(
        "/api/v1/claims",
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": "p",
            "value": "v",
            "authority": "user_explicit",
            "basis": "verified",
            "sources": [{"event": event["id"]}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "source_not_found"


def test_people_cannot_use_agent_endpoints_and_agents_cannot_review(editor, session_api, agent):
    response = session_api(editor).post("/api/v1/recall", {"subject": "user:alice"}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "capability_required"
    assert agent.get("/api/v1/reviews").json()["code"] == "role_required"


def test_the_token_and_its_tenant_are_read_in_one_statement_as_the_orm_would(
    agent, globex_agent, django_assert_num_queries
):
    secret_hash = hash_token_secret(agent.secret)
    with django_assert_num_queries(1):
        token = agent_token_by_secret_hash(secret_hash=secret_hash)
        assert token is not None
        assert token.tenant.slug == "acme"  # loaded with it: no second query
    expected = AgentToken.objects.select_related("tenant").get(pk=agent.token.pk)
    for field in AgentToken._meta.concrete_fields:
        assert getattr(token, field.attname) == getattr(expected, field.attname), field.name
    assert token.tenant == expected.tenant and token.tenant.name == expected.tenant.name
    assert not token._state.adding  # a loaded row: save() updates, never inserts
    # The hash of one tenant's token never finds another's, and a revoked one is gone.
    assert (
        agent_token_by_secret_hash(secret_hash=hash_token_secret(globex_agent.secret)).tenant.slug
        == "globex"
    )
    agent_token_revoke(token=agent.token, actor=Actor.system(), reason="leaked")
    assert agent_token_by_secret_hash(secret_hash=secret_hash) is None
    assert agent_token_by_secret_hash(secret_hash="0" * 64) is None
