"""Every bad input is a 4xx problem+json that changes nothing, never a 500.

One test per input that once crashed a view, through the real API or console.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import urlencode

import pytest

from memory.claims.models import Claim, Event
from memory.receipts.models.receipts import Checkpoint, Receipt
from tests.memory.helpers import candidate, submit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def event_body(**overrides):
    body = {
        "subject": "user:alice",
        "kind": "user_statement",
        "text": "I live in Shanghai",
        "observed_at": "2026-01-01T00:00:00Z",
    }
    body.update(overrides)
    return body


def post_raw(client, path: str, raw: str | bytes, method: str = "post"):
    return getattr(client, method)(path, raw, content_type="application/json")


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    assert body["status"] == status
    return body


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps(event_body(text="nul \u0000 inside")),
        json.dumps(event_body(body={"note": "nul \u0000 deep in a value"})),
        json.dumps(event_body(body={"key\u0000": "nul in a key"})),
    ],
    ids=["text", "nested-value", "key"],
)
def test_a_nul_character_anywhere_is_400(agent, raw):
    assert_problem(post_raw(agent, "/api/v1/events", raw), 400, "nul_character")
    assert not Event.objects.exists()


def test_a_lone_surrogate_is_400(agent):
    raw = json.dumps(event_body()).replace("Shanghai", "Shang\\ud800hai")
    assert_problem(post_raw(agent, "/api/v1/events", raw), 400, "lone_surrogate")
    assert not Event.objects.exists()


@pytest.mark.parametrize("depth", [65, 990, 5000])
def test_deep_nesting_is_400(agent, depth):
    raw = json.dumps(event_body()).replace('"I live in Shanghai"', "[" * depth + "]" * depth)
    assert_problem(post_raw(agent, "/api/v1/events", raw), 400, "nesting_too_deep")
    assert not Event.objects.exists()


def test_nesting_within_the_bound_is_accepted(agent):
    body = event_body(body={"a": [[[[{"b": [1, 2, 3]}]]]]})
    response = agent.post("/api/v1/events", body, format="json")
    assert response.status_code == 201
    assert Event.objects.get().body == body["body"]


@pytest.mark.parametrize(
    "number",
    [str(2**63), str(-(2**63) - 1), "1" + "0" * 40, "1" + "0" * 5000],
    ids=["2^63", "-2^63-1", "10^40", "10^5000"],
)
def test_an_integer_beyond_64_bits_is_400(agent, number):
    raw = json.dumps({"task_key": "t", "input_fingerprint": "f", "stage": "s"})
    raw = raw[:-1] + f', "retry_count": {number}}}'
    response = post_raw(agent, "/api/v1/checkpoints/t", raw, method="put")
    assert_problem(response, 400, "integer_out_of_range")
    assert not Checkpoint.objects.exists()


@pytest.mark.parametrize("field", ["retry_count", "max_retries"])
def test_a_count_beyond_the_columns_range_is_a_field_error(agent, field):
    # Fits in 64 bits, so the parser lets it through; the column holds 32.
    body = {"input_fingerprint": "f", "stage": "s", field: 61951605193634528}
    response = agent.put("/api/v1/checkpoints/t", body, format="json")
    assert_problem(response, 400, "validation_error")
    assert field in response.json()["errors"]
    assert not Checkpoint.objects.exists()


def test_a_number_too_large_for_a_float_is_400(agent):
    raw = json.dumps(event_body())[:-1] + ', "body": {"x": 1e999}}'
    assert_problem(post_raw(agent, "/api/v1/events", raw), 400, "number_out_of_range")


def test_a_derive_body_that_is_not_an_object_is_400(agent):
    parent = submit(agent)
    for raw in ("[1, 2]", '"text"', "7", "null"):
        response = post_raw(agent, f"/api/v1/claims/{parent['id']}/derive", raw)
        assert_problem(response, 400, "validation_error")
    assert Claim.objects.count() == 1


@pytest.mark.parametrize("url", ["http://[::1/", "http://[::1", "https://[zz]/x"])
def test_a_broken_url_is_400(agent, url):
    body = {
        "operation": "articles.create",
        "target": "https://blog.example/api/articles",
        "intent": {"title": "x"},
        "idempotency_key": "k-1",
        "reconciler": {"adapter": "http", "lookup_url": url, "external_id_field": "id"},
    }
    response = agent.post("/api/v1/receipts", body, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert not Receipt.objects.exists()


def test_a_claim_source_with_a_broken_url_is_a_4xx(agent):
    response = agent.post(
        "/api/v1/claims", candidate(sources=[{"uri": "http://[::1/"}]), format="json"
    )
    assert response.status_code < 500
    assert response.status_code in (201, 400)


def _cursor(**fields) -> str:
    return base64.b64encode(urlencode(fields).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        _cursor(o="0", r="0", p="2026-01-01T00:00:00+00:00\x00"),
        _cursor(o="-5", r="0"),
        _cursor(o="0", r="x"),
    ],
    ids=["garbage", "nul", "offset-negative", "reverse-flag"],
)
@pytest.mark.parametrize("path", ["/api/v1/claims", "/api/v1/receipts", "/api/v1/skills"])
def test_an_edited_cursor_is_400_cursor_invalid(agent, path, cursor):
    response = agent.get(path, {"cursor": cursor})
    assert_problem(response, 400, "cursor_invalid")


@pytest.mark.parametrize(
    "position", ["not-a-date", "2026-13-45T00:00:00+00:00", "2026-01-01T00:00:00+99:00"]
)
@pytest.mark.parametrize("path", ["/api/v1/claims", "/api/v1/receipts"])
def test_a_cursor_position_the_ordering_cannot_hold_is_400(agent, path, position):
    response = agent.get(path, {"cursor": _cursor(o="0", r="0", p=position)})
    assert_problem(response, 400, "cursor_invalid")


def test_a_real_cursor_still_pages(agent):
    for n in range(3):
        submit(agent, predicate=f"p{n}", value=str(n), text=f"fact {n}")
    first = agent.get("/api/v1/claims", {"limit": 2}).json()
    assert len(first["results"]) == 2 and first["next"]
    second = agent.get(first["next"]).json()
    assert len(second["results"]) == 1
    seen = {c["id"] for c in first["results"]} | {c["id"] for c in second["results"]}
    assert len(seen) == 3


def test_a_nul_in_a_query_parameter_is_400(agent):
    response = agent.get("/api/v1/claims", {"subject": "user:al\x00ice"})
    assert_problem(response, 400, "nul_character")


def test_unknown_api_paths_are_problems_with_debug_on(agent, settings):
    settings.DEBUG = True
    for path in ("/api/v1/nothing-here", "/api/nothing", "/api/v1/claims/not-a-uuid"):
        response = agent.get(path)
        assert_problem(response, 404, "not_found")
    assert "text/html" in agent.get("/no-such-page/").headers["Content-Type"]


# -- the console ----------------------------------------------------------------


@pytest.fixture
def candidate_item(agent):
    from reviews.models import ReviewItem

    verdict = submit(
        agent,
        authority="agent_inferred",
        basis="inference",
        text="Alice probably works at Acme",
        predicate="employer",
        value="Acme",
    )
    return ReviewItem.objects.get(pk=verdict["review_item"]["id"])


def _csrf(client) -> str:
    client.get("/review/candidates/")
    return client.cookies["csrftoken"].value


@pytest.mark.parametrize("payload_json", ["[1, 2]", '"text"', "7", "null", '[["a", 1]]'])
def test_console_payload_json_that_is_not_an_object_is_refused(
    editor, login, candidate_item, payload_json
):
    client = login(editor)
    response = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve", "payload_json": payload_json},
        HTTP_X_CSRFTOKEN=_csrf(client),
        **HTMX,
    )
    # The console answers HTMX refusals in the detail pane, with the reason.
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#detail"
    assert "must be a JSON object" in response.content.decode()
    assert Claim.objects.get(pk=candidate_item.target_id).status == "candidate"


@pytest.mark.parametrize(
    "after",
    [
        "garbage",
        "1|2026-01-01T00:00:00+00:00|99999999999999999999999",
        "99999999999999999999|2026-01-01T00:00:00+00:00|1",
        "0|not-a-date|1",
        "0|2026-01-01T00:00:00|1",
        "0|2026-01-01T00:00:00+00:00|1\x00",
        "0|0001-01-01T00:00:00+01:00|1",
        "0|9999-12-31T23:59:59-23:59|1",
    ],
)
def test_console_queue_ignores_a_garbage_after_cursor(editor, login, candidate_item, after):
    for sort in ("age", "priority"):
        response = login(editor).get("/review/candidates/", {"after": after, "sort": sort})
        assert response.status_code == 200
        assert "Alice probably works at Acme" in response.content.decode()


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/checkpoints/task%00key",
        "/api/v1/skills/pdf%00tools",
        "/api/v1/skills/pdf-tools/versions/1/files/scripts/a%00.py",
        "/api/v1/subjects/user:al%00ice/hot-memory",
        "/api/v1/claims?predicate=home%00city",
        "/api/v1/receipts?operation=a%00b",
    ],
)
def test_a_nul_in_the_url_is_a_400_problem(agent, path):
    assert_problem(agent.get(path), 400, "nul_character")
