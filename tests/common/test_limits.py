"""Limits: API throttles per token and per person, login lockout, body size limits."""

from __future__ import annotations

import copy
import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from common import schema_view
from common.schema_view import SchemaView
from common.throttles import AgentTokenThrottle
from memory.claims.models import Claim, Event
from tests.memory.helpers import candidate

pytestmark = pytest.mark.django_db


def event_body(**overrides):
    body = {
        "subject": "user:alice",
        "kind": "user_statement",
        "text": "I live in Shanghai",
        "observed_at": "2026-01-01T00:00:00Z",
    }
    body.update(overrides)
    return body


@pytest.fixture(autouse=True)
def isolated_counts(settings) -> None:
    """A cache key prefix per test: ids restart in every test database, counts must not leak."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"test-limits-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture
def rates(settings):
    """Small rates, and counters of earlier runs forgotten."""

    def set_rates(**overrides: str) -> None:
        settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, **overrides}

    return set_rates


def forget_counts(*idents: str) -> None:
    for ident in idents:
        for scope in ("agent", "user", "anon", "claims_batch", "skill_upload"):
            cache.delete(f"throttle:{scope}:{ident}")


def assert_throttled(response) -> dict:
    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "throttled"
    assert body["status"] == 429
    wait = int(response["Retry-After"])
    assert 1 <= wait <= 60
    assert body["retry_after"] == wait
    assert f"{wait} seconds" in body["detail"]
    return body


def test_an_agent_token_is_throttled_with_a_429_problem(agent, rates):
    forget_counts(f"agent:{agent.token.pk}")
    rates(agent="3/minute")
    for _ in range(3):
        assert agent.get("/api/v1/claims").status_code == 200
    assert_throttled(agent.get("/api/v1/claims"))
    # Writes are refused before they change anything.
    assert_throttled(agent.post("/api/v1/events", event_body(), format="json"))
    assert not Event.objects.exists()


def test_the_count_belongs_to_the_token_not_the_connection(agent, make_agent, acme, rates):
    forget_counts(f"agent:{agent.token.pk}")
    rates(agent="2/minute")
    # A second client with the same token (another process or machine) shares
    # the count, because it lives in Redis.
    twin = APIClient()
    twin.credentials(HTTP_AUTHORIZATION=f"Bearer {agent.secret}")
    assert agent.get("/api/v1/claims").status_code == 200
    assert twin.get("/api/v1/claims").status_code == 200
    assert_throttled(agent.get("/api/v1/claims"))
    assert_throttled(twin.get("/api/v1/claims"))
    other = make_agent(acme, name="other-agent")
    forget_counts(f"agent:{other.token.pk}")
    assert other.get("/api/v1/claims").status_code == 200


def test_a_person_is_throttled_per_user(alice, bob, session_api, rates):
    forget_counts(f"user:{alice.pk}", f"user:{bob.pk}")
    rates(user="2/minute")
    client = session_api(alice)
    assert client.get("/api/v1/me/memories").status_code == 200
    assert client.get("/api/v1/me/memories").status_code == 200
    assert_throttled(client.get("/api/v1/me/memories"))
    assert session_api(bob).get("/api/v1/me/memories").status_code == 200


class _Principal:
    is_authenticated = True

    def __init__(self, pk: str) -> None:
        self.pk = pk


def _request(pk: str) -> Request:
    """A DRF request authenticated as the principal `pk` ("agent:<id>")."""
    request = Request(APIRequestFactory().get("/api/v1/claims"))
    # Agent principals are not Django users (accounts.actors); the stubs know only users.
    request.user = _Principal(pk)  # type: ignore[assignment]
    return request


def test_concurrent_requests_never_share_the_last_slot(rates):
    # Many web processes ask at once: the count moves atomically in Redis, so exactly the
    # rate passes however the requests interleave.

    principal = f"agent:race-{uuid.uuid4().hex}"
    rates(agent="5/minute")
    barrier = threading.Barrier(16)

    def ask(_: int) -> bool:
        barrier.wait()
        return AgentTokenThrottle().allow_request(_request(principal), None)

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(ask, range(16)))
    assert answers.count(True) == 5


def test_after_the_burst_one_request_frees_every_period_over_the_rate(rates):
    principal = f"agent:pace-{uuid.uuid4().hex}"
    rates(agent="3/minute")
    throttle = AgentTokenThrottle()
    assert [throttle.allow_request(_request(principal), None) for _ in range(3)] == [True] * 3
    assert throttle.allow_request(_request(principal), None) is False
    # The next slot frees a third of a minute after the burst, not a whole minute.
    assert 19 < throttle.wait() <= 20


def test_a_counter_left_in_an_older_format_starts_over(rates):
    principal = f"agent:old-{uuid.uuid4().hex}"
    rates(agent="1/minute")
    # What the previous throttle kept under the same key: a pickled list of timestamps.
    cache.set(f"throttle:agent:{principal}", [1.0, 2.0, 3.0])
    throttle = AgentTokenThrottle()
    assert throttle.allow_request(_request(principal), None) is True
    assert throttle.allow_request(_request(principal), None) is False


def test_claims_batch_has_its_own_tighter_scope(agent, rates):
    forget_counts(f"agent:{agent.token.pk}")
    rates(claims_batch="1/minute")
    batch = {"items": [candidate()]}
    assert agent.post("/api/v1/claims:batch", batch, format="json").status_code == 200
    assert_throttled(agent.post("/api/v1/claims:batch", batch, format="json"))
    # Other calls of the same token still pass.
    assert agent.get("/api/v1/claims").status_code == 200


def test_default_rates_are_generous(settings):
    for scope, rate in settings.API_THROTTLE_RATES.items():
        count, _, period = rate.partition("/")
        assert period == "minute", scope
        assert int(count) >= 60, scope


# -- body limits ------------------------------------------------------------------


def test_a_json_body_over_the_limit_is_413(agent, settings):
    settings.API_MAX_BODY_BYTES = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = agent.post("/api/v1/events", event_body(text="x" * 20_000), format="json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "payload_too_large"
    assert body["limit"] == 10_000
    assert not Event.objects.exists()


def test_the_parser_bounds_the_body_even_when_django_would_buffer_it(agent, settings):
    settings.API_MAX_BODY_BYTES = 10_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = None
    response = agent.post("/api/v1/events", event_body(text="x" * 20_000), format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_multipart_body_over_the_limit_is_413(admin_user, session_api, settings):
    settings.API_MAX_UPLOAD_BYTES = 5_000
    client = session_api(admin_user)
    assert client.post("/api/v1/skills", {"slug": "pdf-tools"}, format="json").status_code == 201

    upload = SimpleUploadedFile("skill.zip", b"x" * 10_000, content_type="application/zip")
    response = client.post(
        "/api/v1/skills/pdf-tools/versions", {"package": upload}, format="multipart"
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_batch_over_1000_items_is_refused_whole(agent):
    items = [candidate(predicate=f"p{n}") for n in range(1001)]
    response = agent.post("/api/v1/claims:batch", {"items": items}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert not Claim.objects.exists()


def test_a_batch_over_the_body_limit_is_413(agent, settings):
    # The size bound of a batch is the body limit: 1,000 items of a few KB
    # each cannot tie up a worker for long.
    settings.API_MAX_BODY_BYTES = 50_000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    items = [candidate(predicate=f"p{n}", text="x" * 500) for n in range(200)]
    response = agent.post(
        "/api/v1/claims:batch", json.dumps({"items": items}), content_type="application/json"
    )
    assert response.status_code == 413
    assert not Claim.objects.exists()


# -- login lockout ----------------------------------------------------------------


def _login(client: Client, password: str):
    return client.post("/accounts/login/", {"username": "erin", "password": password})


def test_login_locks_out_after_repeated_failures(editor, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        response = _login(client, "wrong")
        assert response.status_code == 200
        assert "did not match" in response.content.decode()
    locked = _login(client, "wrong")
    assert locked.status_code == 429
    html = locked.content.decode()
    assert "Too many failed attempts" in html
    assert "Try again in 15 minutes" in html
    assert locked["Retry-After"] == "900"
    # Even the right password is refused until the cool-off ends.
    still = _login(client, "correct horse battery")
    assert still.status_code == 429
    assert "_auth_user_id" not in client.session


def test_lockout_is_per_username_and_address(editor, editor2, settings):
    settings.AXES_FAILURE_LIMIT = 2
    client = Client()
    _login(client, "wrong")
    assert _login(client, "wrong").status_code == 429
    # Another user from the same address is not locked out.
    other = client.post(
        "/accounts/login/", {"username": "eddie", "password": "correct horse battery"}
    )
    assert other.status_code == 302
    # The same user from another address is not either.
    elsewhere = Client(REMOTE_ADDR="10.1.2.3")
    assert _login(elsewhere, "correct horse battery").status_code == 302


def test_forty_usernames_from_one_address_are_locked_out_per_address(editor, settings):
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_ADDRESS_FAILURE_LIMIT = 30
    client = Client(REMOTE_ADDR="198.51.100.20")
    answers = [
        client.post("/accounts/login/", {"username": f"guess{n}", "password": "wrong"}).status_code
        for n in range(40)
    ]
    assert answers[:29] == [200] * 29
    assert set(answers[30:]) == {429}
    # Even a real account with its right password, from that address.
    assert _login(client, "correct horse battery").status_code == 429
    # Another address is not affected.
    assert _login(Client(REMOTE_ADDR="198.51.100.21"), "correct horse battery").status_code == 302


def test_the_address_limit_is_higher_than_the_username_limit(settings):
    assert settings.AXES_ADDRESS_FAILURE_LIMIT > settings.AXES_FAILURE_LIMIT


def test_a_successful_login_resets_the_failures(editor, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, "correct horse battery").status_code == 302
    client.logout()
    _login(client, "wrong")
    _login(client, "wrong")
    assert _login(client, "correct horse battery").status_code == 302


def test_an_anonymous_flood_gets_429_with_retry_after_after_the_limit(rates):
    rates(anon="3/minute")
    flood = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(3):
        assert flood.get("/api/v1/claims").status_code == 401
    assert_throttled(flood.get("/api/v1/claims"))
    assert_throttled(flood.post("/api/v1/events", event_body(), content_type="application/json"))
    # The count is the address's: another address still gets its 401.
    assert Client(REMOTE_ADDR="198.51.100.8").get("/api/v1/claims").status_code == 401


def test_a_bad_bearer_flood_gets_429_and_stops_looking_tokens_up(rates, django_assert_num_queries):
    rates(anon="3/minute")
    flood = Client(REMOTE_ADDR="198.51.100.9", HTTP_AUTHORIZATION="Bearer not-a-token")
    for n in range(3):
        refused = flood.get("/api/v1/claims", HTTP_AUTHORIZATION=f"Bearer guess-{n}")
        assert refused.status_code == 401
    with django_assert_num_queries(0):
        assert_throttled(flood.get("/api/v1/claims"))


def test_valid_tokens_and_people_do_not_spend_the_address_budget(agent, alice, session_api, rates):
    rates(anon="2/minute")
    for _ in range(5):
        assert agent.get("/api/v1/claims").status_code == 200
    person = session_api(alice)
    for _ in range(5):
        assert person.get("/api/v1/me/memories").status_code == 200
    assert Client().get("/api/v1/claims").status_code == 401


def test_the_schema_is_throttled_per_address_even_for_people(alice, session_api, rates):
    rates(schema="2/minute")
    person = session_api(alice)
    for _ in range(2):
        assert person.get("/api/schema/?format=json").status_code == 200
    assert_throttled(person.get("/api/schema/?format=json"))
    assert_throttled(Client().get("/api/schema/?format=json"))
    assert Client(REMOTE_ADDR="198.51.100.10").get("/api/schema/?format=json").status_code == 200


@pytest.fixture
def generated(monkeypatch) -> list[int]:
    """Counts schema generations, from an empty per-process store."""
    monkeypatch.setattr(schema_view, "_schemas", {})
    calls: list[int] = []
    generate = SchemaView.generator_class.get_schema

    def counted(self, *args, **kwargs):
        calls.append(1)
        return generate(self, *args, **kwargs)

    monkeypatch.setattr(SchemaView.generator_class, "get_schema", counted)
    return calls


def test_the_schema_is_generated_once_for_repeated_requests(generated):
    client = Client()
    first = client.get("/api/schema/?format=json")
    again = client.get("/api/schema/?format=json")
    as_yaml = client.get("/api/schema/")
    assert first.status_code == again.status_code == as_yaml.status_code == 200
    assert first.json() == again.json()
    assert "/api/v1/claims" in first.json()["paths"]
    assert "/api/v1/claims:" in as_yaml.content.decode()
    assert len(generated) == 1


def test_the_schema_is_generated_again_when_its_settings_change(generated, settings):
    Client().get("/api/schema/?format=json")
    settings.SPECTACULAR_SETTINGS = {**settings.SPECTACULAR_SETTINGS, "TITLE": "renamed"}
    Client().get("/api/schema/?format=json")
    assert len(generated) == 2


def test_anonymous_callers_cannot_dodge_the_count_with_x_forwarded_for(rates):
    rates(anon="2/minute")
    client = Client()
    for n in range(2):
        assert client.get("/api/schema/", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code == 200
    refused = client.get("/api/schema/", HTTP_X_FORWARDED_FOR="203.0.113.99")
    assert refused.status_code == 429
    assert refused["Retry-After"]
