"""Session search over the ledger: GET /api/v1/events/search in its three modes, inside the
legal set (tenant, the token's subjects, cutoff, no redacted event)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.actors import Actor
from memory.claims.models import Event, Subject
from memory.claims.services.events import event_record
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.memory.helpers import post_event

START = timezone.now() - timedelta(days=2)


def search(client, status: int = 200, **params):
    query = urlencode(params, doseq=True)
    response = client.get(f"/api/v1/events/search?{query}")
    assert response.status_code == status, response.json()
    return response.json()


def seed_run(tenant, run_id: str, n: int, mentions: dict[int, str], subject="user:alice"):
    """A run of `n` events (positions 1..n, one second apart); `mentions` puts text at
    some positions, the others are small talk."""
    for position in range(1, n + 1):
        event_record(
            tenant=tenant,
            actor=Actor.system("test agent"),
            subject_key=subject,
            kind="agent_step",
            text=mentions.get(position, f"step {position}: checked the weather"),
            run_id=run_id,
            agent="planner",
            observed_at=START + timedelta(seconds=position),
        )


@pytest.fixture
def long_run(acme):
    seed_run(
        acme,
        "run-200",
        200,
        {
            50: "Booked the ferry to Zanzibar for Alice",
            150: "Alice asked whether the Zanzibar ferry leaves at nine",
        },
    )
    seed_run(acme, "run-short", 5, {3: "Alice once mentioned Zanzibar"})


@pytest.mark.django_db
def test_discovery_answers_the_bookend_window_of_a_200_event_run(agent, long_run):
    with CaptureQueriesContext(connection) as captured:
        answer = search(agent, subject="user:alice", q="zanzibar ferry", window=2)
    assert answer["mode"] == "discovery" and answer["next"] is None
    runs = answer["results"]
    assert [run["run_id"] for run in runs] == ["run-200", "run-short"]
    best = runs[0]
    assert (best["events"], best["hits"], best["subjects"], best["agents"]) == (
        200,
        2,
        ["user:alice"],
        ["planner"],
    )
    assert "Zanzibar" in best["snippet"] and "zanzibar" in best["matched"]
    positions = [event["position"] for event in best["window"]]
    assert positions == [1, 2, 3, 48, 49, 50, 51, 52, 148, 149, 150, 151, 152, 198, 199, 200]
    roles = {event["position"]: event["roles"] for event in best["window"]}
    assert roles[1] == ["first"] and roles[200] == ["last"]
    assert roles[50] == ["hit"] and roles[150] == ["hit"] and roles[49] == ["around"]
    skipped = {event["position"]: event["skipped_before"] for event in best["window"]}
    assert skipped[48] == 44 and skipped[148] == 95 and skipped[198] == 45 and skipped[2] == 0
    event_50 = best["window"][5]
    stored = Event.objects.get(pk=event_50["id"])
    assert stored.text == event_50["text"] == "Booked the ferry to Zanzibar for Alice"
    # A five-event run: every event is a bookend, the hit among them.
    short = runs[1]
    assert [e["position"] for e in short["window"]] == [1, 2, 3, 4, 5]
    assert short["window"][2]["roles"] == ["first", "hit", "last"]
    # One statement for the search (plus the token's and the subject's lookups).
    assert len(captured.captured_queries) <= 6


@pytest.mark.django_db
def test_scroll_reads_a_run_in_order_and_a_cursor_cannot_be_edited(agent, long_run):
    page = search(agent, mode="scroll", subject="user:alice", run_id="run-200", limit=120)
    assert [e["position"] for e in page["results"]] == list(range(1, 121))
    assert page["results"][49]["text"] == "Booked the ferry to Zanzibar for Alice"
    assert page["next"].startswith("http://testserver/api/v1/events/search?")
    rest = agent.get(page["next"]).json()
    assert [e["position"] for e in rest["results"]] == list(range(121, 201))
    assert rest["next"] is None

    cursor = page["next"].split("cursor=")[1].split("&")[0]
    edited = search(
        agent, 400, mode="scroll", subject="user:alice", run_id="run-200", cursor=cursor + "x"
    )
    assert edited["code"] == "cursor_invalid"
    # A cursor of one run does not scroll another.
    other = search(
        agent, 400, mode="scroll", subject="user:alice", run_id="run-short", cursor=cursor
    )
    assert other["code"] == "cursor_invalid"


@pytest.mark.django_db
def test_browse_lists_the_most_recent_runs(agent, acme, long_run):
    seed_run(acme, "run-new", 2, {1: "Fresh start"})
    runs = search(agent, mode="browse", subject="user:alice")["results"]
    # Most recently active first: run-200 went on longest.
    assert [run["run_id"] for run in runs] == ["run-200", "run-short", "run-new"]
    by_id = {run["run_id"]: run for run in runs}
    assert by_id["run-200"]["events"] == 200
    assert by_id["run-new"]["first_text"] == "Fresh start"
    assert runs == sorted(runs, key=lambda run: run["last_at"], reverse=True)
    only = search(agent, mode="browse", subject="user:alice", agent="nobody")["results"]
    assert only == []


@pytest.mark.django_db
def test_chinese_and_identifiers_are_found_by_their_ngrams(agent):
    post_event(agent, text="我下个月搬到上海", run_id="run-cn")
    post_event(agent, text="deploy failed with ERR_4711 on node-3", run_id="run-err")
    assert [r["run_id"] for r in search(agent, subject="user:alice", q="上海")["results"]] == [
        "run-cn"
    ]
    assert [r["run_id"] for r in search(agent, subject="user:alice", q="ERR_4711")["results"]] == [
        "run-err"
    ]


@pytest.mark.django_db
def test_the_legal_set_holds_tenant_subjects_cutoff_and_redaction(
    agent, acme, globex, globex_agent, make_agent
):
    post_event(agent, text="Alice mentioned the Zanzibar trip", run_id="run-a")
    post_event(agent, subject="user:bob", text="Bob mentioned the Zanzibar trip", run_id="run-b")
    post_event(globex_agent, text="Globex Alice: Zanzibar", run_id="run-g")
    both = search(agent, subject=["user:alice", "user:bob"], q="zanzibar")["results"]
    assert sorted(r["run_id"] for r in both) == ["run-a", "run-b"]
    # Another tenant's events with the same subject never appear.
    assert [
        r["run_id"] for r in search(globex_agent, subject="user:alice", q="zanzibar")["results"]
    ] == ["run-g"]
    # A token limited to Bob: Alice is not found (404, like recall), nor mixed in.
    bob_only = make_agent(acme, name="bob-only", capabilities=["recall"], subjects=["user:bob"])
    refused = search(bob_only, 404, subject=["user:bob", "user:alice"], q="zanzibar")
    assert refused["code"] == "not_found"
    # Before the events were recorded, nothing.
    early = (timezone.now() - timedelta(hours=1)).isoformat()
    assert search(agent, subject="user:alice", q="zanzibar", cutoff=early)["results"] == []
    # An unknown subject finds nothing and is not created.
    assert search(agent, subject="user:zed", q="zanzibar")["results"] == []


@pytest.mark.django_db
def test_an_erased_event_is_never_found(agent, acme):
    post_event(agent, text="Alice mentioned the Zanzibar trip", run_id="run-a")
    assert search(agent, subject="user:alice", q="zanzibar")["results"]
    worker = Actor.system("test")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(tenant=acme, actor=worker, subject=subject)
    deletion_run(deletion_id=deletion.pk, worker=worker)
    assert search(agent, subject="user:alice", q="zanzibar")["results"] == []
    assert search(agent, mode="browse", subject="user:alice")["results"] == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "code", "field"),
    [
        ({"q": "x"}, "validation_error", "subject"),
        ({"subject": "user:alice"}, "query_required", "q"),
        ({"subject": "user:alice", "mode": "scroll"}, "run_id_required", "run_id"),
        ({"subject": "user:alice", "q": "x", "mode": "rewind"}, "validation_error", "mode"),
        ({"subject": "user:alice", "q": "x", "limit": 51}, "validation_error", "limit"),
        ({"subject": "user:alice", "q": "x", "window": 11}, "validation_error", "window"),
        ({"subject": "alice", "q": "x"}, "subject_invalid", None),
        ({"subject": "user:alice", "q": "x", "cutoff": "yesterday"}, "validation_error", "cutoff"),
    ],
)
def test_bad_searches_are_problems(agent, params, code, field):
    problem = search(agent, 400, **params)
    assert problem["code"] == code
    if field:
        assert field in problem["errors"], problem


@pytest.mark.django_db
def test_a_token_without_a_reading_capability_is_refused(make_agent, acme):
    token = make_agent(acme, name="receipts-only", capabilities=["receipts:write"])
    refused = search(token, 403, subject="user:alice", q="x")
    assert refused["code"] == "capability_required"
