"""Times that say when something was seen or became true cannot lie ahead: a claim
`available_at: 9999-12-31` would turn every later correction into a conflict (issue
"People behind tokens…", item 4). Ends and reminders may lie ahead: they are meant to."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.claims.models import Claim, ClaimSource, Event, Subject
from tests.memory.helpers import candidate, post_event

pytestmark = pytest.mark.django_db

FAR_FUTURE = "9999-12-31T00:00:00Z"


def in_(delta: timedelta) -> str:
    return (timezone.now() + delta).isoformat()


def stored_rows() -> tuple[int, int, int, int]:
    return (
        Claim.objects.count(),
        ClaimSource.objects.count(),
        Event.objects.count(),
        Subject.objects.count(),
    )


def with_time(event_id: str, field: str, when: str) -> tuple[dict, str]:
    """A candidate with `when` in `field`, and the name its field error carries."""
    if field == "source_observed_at":
        sources = [{"event": event_id}, {"uri": "chat://s1/m8", "observed_at": when}]
        return candidate(sources=sources, basis="reported"), "sources.1.observed_at"
    return candidate(event_id, basis="reported", **{field: when}), field


@pytest.mark.parametrize("when", [FAR_FUTURE, "in_a_day"])
def test_an_event_observed_in_the_future_is_refused_and_stores_nothing(agent, when):
    before = stored_rows()
    response = agent.post(
        "/api/v1/events",
        {
            "subject": "user:carol",
            "kind": "user_statement",
            "text": "I live in Lyon",
            "observed_at": in_(timedelta(days=1)) if when == "in_a_day" else when,
        },
        format="json",
    )
    assert response.status_code == 400, response.json()
    problem = response.json()
    assert problem["code"] == "time_in_future"
    assert list(problem["errors"]) == ["observed_at"]
    assert stored_rows() == before


@pytest.mark.parametrize("path", ["single", "derive"])
@pytest.mark.parametrize("field", ["available_at", "valid_from", "source_observed_at"])
def test_a_claim_dated_in_the_future_is_refused_and_stores_nothing(agent, field, path):
    said = post_event(agent)
    url = "/api/v1/claims"
    if path == "derive":
        parent = agent.post(
            "/api/v1/claims", candidate(said["id"], basis="reported"), format="json"
        )
        url = f"/api/v1/claims/{parent.json()['id']}/derive"
    body, error_field = with_time(said["id"], field, FAR_FUTURE)
    body.update(predicate="home_city" if path == "single" else "timezone")
    before = stored_rows()

    response = agent.post(url, body, format="json")

    assert response.status_code == 400, response.json()
    problem = response.json()
    assert problem["code"] == "time_in_future"
    assert list(problem["errors"]) == [error_field]
    assert stored_rows() == before


@pytest.mark.parametrize("field", ["available_at", "valid_from", "source_observed_at"])
def test_a_time_within_the_clock_skew_is_accepted(agent, field):
    body, _ = with_time(post_event(agent)["id"], field, in_(timedelta(minutes=1)))
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["decision"] == "accepted"


def test_an_event_observed_within_the_clock_skew_is_accepted(agent):
    post_event(agent, observed_at=in_(timedelta(minutes=1)))


def test_the_skew_is_a_setting(agent, settings):
    settings.MEMDESK_FUTURE_SKEW = timedelta(0)
    body, _ = with_time(post_event(agent)["id"], "available_at", in_(timedelta(minutes=1)))
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.json()["code"] == "time_in_future"


def test_ends_and_reminders_may_lie_in_the_future(agent):
    response = agent.post(
        "/api/v1/claims",
        candidate(
            post_event(agent)["id"],
            basis="reported",
            valid_to=FAR_FUTURE,
            expires_at=in_(timedelta(days=365)),
            refresh_after=in_(timedelta(days=30)),
        ),
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["decision"] == "accepted"


def test_in_a_batch_only_the_future_item_errors(agent):
    said = post_event(agent)
    future, _ = with_time(said["id"], "available_at", FAR_FUTURE)
    present = candidate(said["id"], basis="reported", predicate="work_city")

    response = agent.post("/api/v1/claims:batch", {"items": [future, present]}, format="json")

    assert response.status_code == 200, response.json()
    error, verdict = response.json()["results"]
    assert error["error"]["code"] == "time_in_future"
    assert list(error["error"]["errors"]) == ["available_at"]
    assert verdict["decision"] == "accepted"
    assert list(Claim.objects.values_list("predicate", flat=True)) == ["work_city"]
