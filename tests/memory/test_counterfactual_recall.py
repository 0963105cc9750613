"""Counterfactual recall: a recorded trace replayed without a claim, with it stale or
corrected, and the difference — POST /api/v1/recall/traces/{id}/counterfactual."""

from __future__ import annotations

import pytest

from memory.claims.models import Claim, RecallTrace, RecallUse
from tests.memory.helpers import recall, submit


@pytest.fixture(autouse=True)
def _lexical_only(settings):
    # Meaning would add a signal the assertions do not follow; the replay is the subject.
    settings.MEMDESK_EMBEDDER = "none"


@pytest.fixture
def ranked(agent) -> dict[str, str]:
    """Four legal claims that rank by predicate name on an empty query."""
    return {
        "a": submit(agent, predicate="a_first", value="1", text="Alice fact one")["id"],
        "b": submit(agent, predicate="b_second", value="2", text="Alice fact two")["id"],
        "c": submit(agent, predicate="c_third", value="3", text="Alice fact three")["id"],
        "d": submit(agent, predicate="d_fourth", value="4", text="Alice fact four")["id"],
    }


def counterfactual(client, trace_id: str, status: int = 200, **body) -> dict:
    response = client.post(f"/api/v1/recall/traces/{trace_id}/counterfactual", body, format="json")
    assert response.status_code == status, response.json()
    return response.json()


@pytest.mark.django_db
def test_hiding_a_claim_shows_its_absence_and_the_next_candidate(agent, ranked):
    answer = recall(agent, limit=2)
    assert [item["id"] for item in answer["items"]] == [ranked["a"], ranked["b"]]
    traces, uses = RecallTrace.objects.count(), Claim.objects.get(pk=ranked["a"]).use_count

    found = counterfactual(agent, answer["trace_id"], claim=ranked["b"], change="hide")
    assert found["recorded"] == [ranked["a"], ranked["b"]]
    assert [i["id"] for i in found["baseline"]["items"]] == [ranked["a"], ranked["b"]]
    assert [i["id"] for i in found["counterfactual"]["items"]] == [ranked["a"], ranked["c"]]
    assert found["counterfactual"]["excluded"]["hidden"] == 1
    assert found["difference"] == {
        "removed": [ranked["b"]],
        "added": [ranked["c"]],
        "moved": [],
        "unchanged": False,
    }
    # A replay writes nothing: no trace, no use.
    assert RecallTrace.objects.count() == traces
    assert Claim.objects.get(pk=ranked["a"]).use_count == uses
    assert not RecallUse.objects.exists()

    # Hiding the first moves the second up and brings in the third.
    first = counterfactual(agent, answer["trace_id"], claim=ranked["a"], change="hide")
    assert first["difference"]["moved"] == [{"id": ranked["b"], "before": 1, "after": 0}]
    # Hiding one that was not returned changes nothing.
    quiet = counterfactual(agent, answer["trace_id"], claim=ranked["d"], change="hide")
    assert quiet["difference"]["unchanged"] is True


@pytest.mark.django_db
def test_a_stale_claim_drops_out_or_is_marked_as_the_trace_asked(agent, ranked):
    strict = recall(agent, limit=2)
    found = counterfactual(agent, strict["trace_id"], claim=ranked["a"], change="stale")
    assert [i["id"] for i in found["counterfactual"]["items"]] == [ranked["b"], ranked["c"]]
    assert found["counterfactual"]["excluded"]["stale"] == 1
    lenient = recall(agent, limit=2, include_stale=True)
    found = counterfactual(agent, lenient["trace_id"], claim=ranked["a"], change="stale")
    items = found["counterfactual"]["items"]
    assert [(i["id"], i["stale"]) for i in items] == [(ranked["a"], True), (ranked["b"], False)]
    assert found["difference"]["unchanged"] is True


@pytest.mark.django_db
def test_a_correction_is_ranked_by_what_it_would_say(agent, ranked):
    answer = recall(agent, query="Hangzhou", limit=1)
    newest = answer["items"][0]["id"]
    assert newest == ranked["d"]  # nothing matches: the most recent leads
    found = counterfactual(
        agent,
        answer["trace_id"],
        claim=ranked["a"],
        change="correct",
        text="Alice moved to Hangzhou",
        value="Hangzhou",
    )
    (item,) = found["counterfactual"]["items"]
    assert (item["id"], item["text"]) == (ranked["a"], "Alice moved to Hangzhou")
    assert found["difference"]["removed"] == [newest]
    assert found["difference"]["added"] == [ranked["a"]]
    assert Claim.objects.get(pk=ranked["a"]).text == "Alice fact one"  # nothing written


@pytest.mark.django_db
def test_bad_counterfactuals_are_problems(agent, globex_agent, ranked):
    answer = recall(agent, limit=2)
    trace_id = answer["trace_id"]
    bob = submit(agent, subject="user:bob", predicate="drink", value="tea", text="Bob: tea")
    cases = [
        ({"claim": ranked["a"], "change": "forget"}, 400, "validation_error"),
        ({"claim": ranked["a"], "change": "correct"}, 400, "validation_error"),
        ({"claim": "nope", "change": "hide"}, 400, "validation_error"),
        ({"claim": bob["id"], "change": "hide"}, 400, "claim_not_in_subject"),
        ({"claim": "00000000-0000-0000-0000-000000000000", "change": "hide"}, 404, "not_found"),
    ]
    for body, status, code in cases:
        assert counterfactual(agent, trace_id, status, **body)["code"] == code, body
    foreign = counterfactual(globex_agent, trace_id, 404, claim=ranked["a"], change="hide")
    assert foreign["code"] == "not_found"
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory").json()
    refused = counterfactual(agent, hot["trace_id"], 400, claim=ranked["a"], change="hide")
    assert refused["code"] == "trace_kind_unsupported"


@pytest.mark.django_db
def test_editors_replay_too(agent, editor, session_api, ranked):
    answer = recall(agent, limit=2)
    found = counterfactual(
        session_api(editor), answer["trace_id"], claim=ranked["b"], change="hide"
    )
    assert found["difference"]["added"] == [ranked["c"]]


@pytest.mark.django_db
def test_an_outdated_look_alike_or_an_unrelated_memory_in_the_claims_place(agent, ranked):
    old = submit(agent, predicate="home_city", value="Hangzhou", text="Alice lives in Hangzhou")
    new = submit(
        agent,
        predicate="home_city",
        value="Shanghai",
        text="Alice lives in Shanghai",
        supersedes=old["id"],
    )
    assert Claim.objects.get(pk=old["id"]).status == "superseded"
    answer = recall(agent, query="Alice lives", limit=1)
    assert [item["id"] for item in answer["items"]] == [new["id"]]

    outdated = counterfactual(agent, answer["trace_id"], claim=new["id"], change="outdated")
    # The claim's place now says what the superseded revision said.
    shown = outdated["counterfactual"]["items"]
    assert [(i["id"], i["text"]) for i in shown] == [(new["id"], "Alice lives in Hangzhou")]
    assert outdated["baseline"]["items"][0]["text"] == "Alice lives in Shanghai"

    irrelevant = counterfactual(agent, answer["trace_id"], claim=new["id"], change="irrelevant")
    texts = [i["text"] for i in irrelevant["counterfactual"]["items"]]
    assert "Alice lives in Shanghai" not in texts
    # With no superseded revision there is no outdated look-alike.
    refused = counterfactual(
        agent, answer["trace_id"], status=409, claim=ranked["a"], change="outdated"
    )
    assert refused["code"] == "no_outdated_revision"
