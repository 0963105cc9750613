import pytest

pytestmark = pytest.mark.django_db


def test_unknown_api_path_is_a_problem(agent):
    response = agent.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


def test_wrong_method_is_405_problem(agent):
    response = agent.delete("/api/v1/recall")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"


def test_malformed_json_is_400_problem(agent):
    response = agent.post("/api/v1/events", "{not json", content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "malformed_json"
    assert {"type", "title", "status", "detail", "code"} <= set(body)


def test_validation_errors_list_fields(agent):
    response = agent.post("/api/v1/events", {"subject": "user:alice"}, format="json")
    body = response.json()
    assert response.status_code == 400
    assert body["code"] == "validation_error"
    assert set(body["errors"]) >= {"kind", "observed_at"}


def test_console_404_is_html(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert "text/html" in response.headers["Content-Type"]
