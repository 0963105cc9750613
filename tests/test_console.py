"""The console shell: sign-in, navigation, CSRF, pages for each role."""

import re

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


# --- Content-Security-Policy -------------------------------------------------------------------

STRICT = {
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
}
INLINE = re.compile(
    r"<script(?![^>]*\ssrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+=|\shx-on[:-]", re.IGNORECASE
)


def policy(response) -> set[str]:
    return {part.strip() for part in response["Content-Security-Policy"].split(";")}


def test_every_console_page_sends_a_strict_policy_and_has_no_inline_code(
    editor, admin_user, alice, login, client
):
    pages = [(client, "/accounts/login/")]
    queues = ("/review/candidates/", "/review/conflicts/", "/skills/")
    pages += [(login(editor), path) for path in queues]
    pages += [(login(admin_user), path) for path in ("/dashboard/", "/skills/", "/me/")]
    pages += [(login(alice), "/me/")]
    for session, path in pages:
        response = session.get(path)
        assert response.status_code == 200, path
        assert policy(response) >= STRICT, path
        assert "unsafe" not in response["Content-Security-Policy"], path
        html = response.content.decode()
        assert INLINE.search(html) is None, (path, INLINE.search(html))
        # htmx is told not to inject its indicator <style> (and not to eval).
        assert '"includeIndicatorStyles": false' in html, path


def test_htmx_fragments_carry_the_policy_too(editor, login):
    response = login(editor).get("/dashboard/", HTTP_HX_REQUEST="true")
    assert policy(response) >= STRICT
    assert INLINE.search(response.content.decode()) is None


def test_api_docs_run_without_inline_script(client):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert policy(page) >= STRICT
    html = page.content.decode()
    assert INLINE.search(html) is None
    assert 'src="/api/docs/?script="' in html
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


def test_redoc_relaxes_styles_only(client):
    page = client.get("/api/redoc/")
    assert page.status_code == 200
    directives = policy(page)
    assert "script-src 'self'" in directives
    assert "style-src 'self' 'unsafe-inline'" in directives
    assert "fonts.googleapis.com" not in page.content.decode()
    assert INLINE.search(page.content.decode()) is None
