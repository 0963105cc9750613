import json

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


def test_a_refused_console_page_is_the_styled_403_with_the_navigation(editor, login):
    response = login(editor).get("/tokens/")
    assert response.status_code == 403
    assert "text/html" in response.headers["Content-Type"]
    page = response.content.decode()
    assert "<h1" in page and "You cannot open this page" in page
    assert '<nav class="sidebar"' in page and '<main id="main"' in page
    assert "This page is for the roles admin." in page


def test_a_refused_api_path_stays_a_problem_through_the_403_handler(rf):
    from django.core.exceptions import PermissionDenied

    from common.views import api_forbidden

    response = api_forbidden(rf.get("/api/v1/reviews"), PermissionDenied("no"))
    assert response.status_code == 403
    assert response.headers["Content-Type"] == "application/problem+json"
    assert json.loads(response.content)["code"] == "permission_denied"


def test_the_console_404_has_the_navigation(editor, login):
    response = login(editor).get("/no-such-page/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in page and '<nav class="sidebar"' in page and '<main id="main"' in page


def test_the_500_page_renders_without_a_request_and_leads_somewhere(client, settings):
    from django.template.loader import render_to_string

    page = render_to_string("500.html")
    assert '<main id="main"' in page and "Something went wrong" in page
    assert 'href="/"' in page and '<html lang="en">' in page
