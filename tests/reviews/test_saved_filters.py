"""Saved filters: a person's named views of a queue, kept, listed, shared by link."""

import pytest

from reviews.models import SavedFilter
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db


def csrf(client) -> str:
    client.get("/review/candidates/")
    return client.cookies["csrftoken"].value


@pytest.fixture
def candidates(agent):
    for subject in ("user:alice", "user:bob"):
        submit(
            agent,
            subject=subject,
            authority="reported",
            basis="reported",
            predicate="employer",
            value="Acme",
            text=f"{subject} reports working at Acme",
        )


def test_it_saves_the_filters_under_a_name_and_lists_them_as_links(editor, login, candidates):
    client = login(editor)
    response = client.post(
        "/review/candidates/filters",
        {"name": "  Alice,   newest ", "query": "subject=user:alice&sort=newest&item=9&x=1"},
        HTTP_X_CSRFTOKEN=csrf(client),
    )
    saved = SavedFilter.objects.get()
    # Only the queue page's own filters are kept; the view opens on them.
    assert (saved.name, saved.query, saved.queue) == (
        "Alice, newest",
        "subject=user%3Aalice&sort=newest",
        "candidates",
    )
    assert response.status_code == 302 and response.url.endswith(f"?{saved.query}")
    page = client.get(response.url).content.decode()
    link = saved.query.replace("&", "&amp;")
    assert f'href="/review/candidates/?{link}">Alice, newest</a>' in page
    assert "user:alice reports working at Acme" in page
    assert "user:bob reports working at Acme" not in page


def test_the_same_name_replaces_and_a_name_is_required(editor, login):
    client = login(editor)
    token = csrf(client)
    client.post(
        "/review/candidates/filters", {"name": "Mine", "query": "topic=a"}, HTTP_X_CSRFTOKEN=token
    )
    client.post(
        "/review/candidates/filters", {"name": "Mine", "query": "topic=b"}, HTTP_X_CSRFTOKEN=token
    )
    client.post(
        "/review/candidates/filters", {"name": "   ", "query": "topic=c"}, HTTP_X_CSRFTOKEN=token
    )
    assert list(SavedFilter.objects.values_list("name", "query")) == [("Mine", "topic=b")]


def test_filters_that_are_not_valid_are_not_saved(editor, login):
    client = login(editor)
    client.post(
        "/review/candidates/filters",
        {"name": "Bad age", "query": "older_than=forever"},
        HTTP_X_CSRFTOKEN=csrf(client),
    )
    assert not SavedFilter.objects.exists()


def test_saved_filters_are_each_persons_own(editor, editor2, login, globex, make_member):
    mine = login(editor)
    mine.post(
        "/review/candidates/filters",
        {"name": "Erin's view", "query": "topic=home"},
        HTTP_X_CSRFTOKEN=csrf(mine),
    )
    saved = SavedFilter.objects.get()
    colleague = login(editor2)
    assert "Erin&#x27;s view" not in colleague.get("/review/candidates/").content.decode()
    refused = colleague.post(
        f"/review/candidates/filters/{saved.pk}/delete", HTTP_X_CSRFTOKEN=csrf(colleague)
    )
    assert refused.status_code == 404
    outsider = login(make_member(globex, "gary"))
    assert (
        outsider.post(
            f"/review/candidates/filters/{saved.pk}/delete", HTTP_X_CSRFTOKEN=csrf(outsider)
        ).status_code
        == 404
    )
    assert SavedFilter.objects.filter(pk=saved.pk).exists()
    mine.post(f"/review/candidates/filters/{saved.pk}/delete", HTTP_X_CSRFTOKEN=csrf(mine))
    assert not SavedFilter.objects.exists()
