"""Secrets offered as memories are rejected and stored nowhere, by a full-database search."""

import pytest

from tests.dump import tables_containing
from tests.memory.helpers import candidate

pytestmark = pytest.mark.django_db

SECRETS = {
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url_password": "https://deploy:Hunter2Secret99@git.example.com/repo.git",
}
# The distinctive part of each secret, searched for in every table.
NEEDLES = {
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_1234567890abcdefghij",
    "private_key": "BEGIN RSA PRIVATE KEY",
    "jwt": "dozjgNryP4J3jVmNHl0w5N",
    "url_password": "Hunter2Secret99",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secret_in_text_or_value_is_stored_nowhere(agent, kind):
    secret = SECRETS[kind]
    for body in (
        candidate(text=f"Alice's credential is {secret}", value="x", predicate=f"t_{kind}"),
        candidate(value={"credential": secret}, text="a credential", predicate=f"v_{kind}"),
    ):
        response = agent.post("/api/v1/claims", body, format="json")
        assert response.status_code == 201
        assert response.json()["decision"] == "rejected"
        assert response.json()["reasons"] == ["secret_detected"]
    batch = agent.post(
        "/api/v1/claims:batch",
        {"items": [candidate(text=f"again {secret}", predicate=f"b_{kind}")]},
        format="json",
    )
    assert batch.json()["results"][0]["decision"] == "rejected"
    assert tables_containing(NEEDLES[kind]) == {}


def test_secret_in_a_source_uri_is_stored_nowhere(agent):
    body = candidate(sources=[{"uri": SECRETS["url_password"]}])
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.json()["decision"] == "rejected"
    assert tables_containing(NEEDLES["url_password"]) == {}


def test_the_dump_search_finds_what_is_stored(agent):
    agent.post("/api/v1/claims", candidate(text="Alice lives in Zanzibar-4471"), format="json")
    found = tables_containing("Zanzibar-4471")
    assert found["memory_claim"] == 1
