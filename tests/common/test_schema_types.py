"""The API takes what its schema says and nothing else, and says every answer it gives.

Each test is one class of input that the schema refuses but the API once
stored (found by the schemathesis run in `test_schemathesis.py`): a 400 or 415
problem that changes nothing.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from memory.claims.models import Event
from memory.receipts.models.receipts import Checkpoint
from tests.common.test_bad_input import assert_problem, event_body

pytestmark = pytest.mark.django_db


def test_echo_of_with_a_boolean_is_refused_not_stored_as_the_zero_uuid(agent):
    response = agent.post("/api/v1/events", event_body(echo_of=[False]), format="json")
    body = assert_problem(response, 400, "validation_error")
    assert "echo_of.0" in body["errors"] or "echo_of" in body["errors"]
    assert not Event.objects.exists()


def test_a_checkpoint_effect_that_is_a_number_is_refused(agent):
    response = agent.put(
        "/api/v1/checkpoints/task-1",
        {"input_fingerprint": "f1", "stage": "draft", "effects": [0]},
        format="json",
    )
    assert_problem(response, 400, "validation_error")
    assert not Checkpoint.objects.exists()


def test_a_number_for_a_string_is_refused(agent):
    response = agent.post("/api/v1/events", event_body(source_uri=42), format="json")
    body = assert_problem(response, 400, "validation_error")
    assert "source_uri" in body["errors"]
    assert not Event.objects.exists()


def test_a_string_for_a_boolean_is_refused(agent):
    response = agent.post(
        "/api/v1/recall", {"subject": "user:alice", "include_stale": "true"}, format="json"
    )
    body = assert_problem(response, 400, "validation_error")
    assert "include_stale" in body["errors"]


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "multipart"])
def test_a_form_body_to_a_json_endpoint_is_415(agent, content_type):
    if content_type == "multipart":
        response = agent.post("/api/v1/events", event_body(), format="multipart")
    else:
        response = agent.post("/api/v1/events", urlencode(event_body()), content_type=content_type)
    assert_problem(response, 415, "unsupported_media_type")
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("path", "query"),
    [("/api/v1/claims", "subject="), ("/api/v1/receipts", "state=")],
)
def test_an_empty_filter_below_its_min_length_is_refused(agent, path, query):
    response = agent.get(f"{path}?{query}")
    body = assert_problem(response, 400, "validation_error")
    assert query.rstrip("=") in body["errors"]


@pytest.mark.parametrize("limit", ["true", "null", "0", "-1", "1.5"])
def test_a_limit_that_is_not_a_positive_integer_is_refused(agent, limit):
    response = agent.get(f"/api/v1/claims?limit={limit}")
    body = assert_problem(response, 400, "validation_error")
    assert "limit" in body["errors"]


def test_a_limit_still_pages(agent):
    for key in ("k1", "k2"):
        body = {
            "operation": "articles.create",
            "target": "https://blog.example/api",
            "intent": {"title": key},
            "idempotency_key": key,
        }
        assert agent.post("/api/v1/receipts", body, format="json").status_code == 201
    page = agent.get("/api/v1/receipts?limit=1").json()
    assert len(page["results"]) == 1
    assert page["next"]


def test_a_post_to_an_unknown_path_without_csrf_is_a_404_problem(editor, login, settings):
    settings.DEBUG = True
    browser = login(editor)
    response = browser.post("/api/v1/claims/null,null/archive", {})
    assert_problem(response, 404, "not_found")


def test_the_schema_documents_each_operations_problems(agent):
    schema = agent.get("/api/schema/", {"format": "json"}).json()
    detail = schema["paths"]["/api/v1/claims/{claim_id}"]["get"]["responses"]
    assert {"401", "403", "404", "429"} <= set(detail)
    assert "400" not in detail and "415" not in detail
    problem = {"$ref": "#/components/schemas/Problem"}
    assert detail["401"]["content"]["application/problem+json"]["schema"] == problem
    create = schema["paths"]["/api/v1/events"]["post"]
    assert {"400", "401", "403", "413", "415", "429"} <= set(create["responses"])
    assert list(create["requestBody"]["content"]) == ["application/json"]
    upload = schema["paths"]["/api/v1/skills/{slug}/versions"]["post"]["requestBody"]
    assert list(upload["content"]) == ["multipart/form-data"]
