"""The console shell: sign-in, navigation, CSRF, pages for each role."""

import pytest

pytestmark = pytest.mark.django_db


def test_pages_require_login(client):
    response = client.get("/review/")
    assert response.status_code == 302
    assert response.url.startswith("/accounts/login/")


def test_login_with_password_and_csrf(editor, client):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    refused = strict.post(
        "/accounts/login/", {"username": "erin", "password": "correct horse battery"}
    )
    assert refused.status_code == 403
    strict.get("/accounts/login/")
    token = strict.cookies["csrftoken"].value
    ok = strict.post(
        "/accounts/login/",
        {"username": "erin", "password": "correct horse battery", "csrfmiddlewaretoken": token},
    )
    assert ok.status_code == 302


def test_editor_sees_the_navigation_and_htmx(editor, login):
    response = login(editor).get("/review/", follow=True)
    html = response.content.decode()
    for label in ("Review", "My memories", "Skills", "Dashboard"):
        assert label in html
    assert "htmx" in html
    assert "X-CSRFToken" in html


def test_end_user_lands_on_my_memories(alice, login):
    client = login(alice)
    response = client.get("/", follow=True)
    assert response.request["PATH_INFO"] == "/me/"
    assert "user:alice" in response.content.decode()
    assert "Dashboard" not in response.content.decode()


def test_dashboard_and_skills_render(editor, login):
    client = login(editor)
    assert client.get("/dashboard/").status_code == 200
    assert client.get("/skills/").status_code == 200
