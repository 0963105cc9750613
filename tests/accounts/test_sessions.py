"""Console sessions: signing in with a password, staying signed in, and being signed out
when the session expires or the person is deactivated (sessions and users are loaded with
fixed SQL, `accounts.sessions` and `accounts.backends`)."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

pytestmark = pytest.mark.django_db


def _signed_in(client: Client) -> bool:
    response = client.get("/review/")
    if response.wsgi_request.user.is_authenticated:
        assert response.status_code in (200, 302) and "/accounts/login/" not in response.get(
            "Location", ""
        )
        return True
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    return False


def test_a_person_signs_in_with_a_password_and_stays_signed_in(editor):
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": "erin", "password": "correct horse battery"}
    )
    assert response.status_code == 302
    session = Session.objects.get(session_key=client.cookies["sessionid"].value)
    assert session.get_decoded()["_auth_user_id"] == str(editor.pk)
    assert session.get_decoded()["_auth_user_backend"] == "accounts.backends.ModelBackend"
    assert _signed_in(client)


def test_an_expired_or_unknown_session_signs_out_and_is_not_revived(editor, login):
    client = login(editor)
    assert _signed_in(client)
    key = client.cookies["sessionid"].value
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(1))
    assert not _signed_in(client)
    client.cookies["sessionid"] = "no-such-session-key-at-all-0000"
    assert not _signed_in(client)
    # The expired row was not brought back to life by the requests that found it.
    assert Session.objects.get(session_key=key).expire_date < timezone.now()


def test_a_deactivated_person_is_signed_out_at_their_next_request(editor, login):
    client = login(editor)
    assert _signed_in(client)
    type(editor).objects.filter(pk=editor.pk).update(is_active=False)
    assert not _signed_in(client)
