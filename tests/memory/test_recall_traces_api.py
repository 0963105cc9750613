"""Recall traces an agent or an editor can read, and the injection traces agents report:
GET /api/v1/recall/traces/{id} and POST /api/v1/recall/traces/{id}/used."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memory.claims.models import Claim, RecallTrace, RecallUse, Subject
from memory.claims.selectors.traces import claim_value, unused_recalls
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.memory.helpers import recall, submit

LONG = "Alice keeps a long list of every Shanghai restaurant she has visited since 2019"


@pytest.fixture
def four_legal(agent) -> dict[str, str]:
    """Four legal claims that rank by predicate name on an empty query (same authority and
    scope), one claim out of scope and one invalidated."""
    ids = {
        "long": submit(agent, predicate="a_long", value="list", text=LONG)["id"],
        "home": submit(agent, predicate="b_home", value="Shanghai")["id"],
        "food": submit(agent, predicate="c_food", value="xlb", text="Alice likes dumplings")["id"],
        "visit": submit(agent, predicate="d_visit", value="2019", text="Alice went in 2019")["id"],
        "scoped": submit(agent, predicate="e_crm", value="x", scope={"project": "crm"})["id"],
        "gone": submit(agent, predicate="f_gone", value="x", text="Alice had a dog")["id"],
    }
    invalidated = agent.post(
        f"/api/v1/claims/{ids['gone']}/invalidate", {"reason": "the dog left"}, format="json"
    )
    assert invalidated.status_code == 200
    return ids


def trace_of(client, trace_id: str) -> dict:
    response = client.get(f"/api/v1/recall/traces/{trace_id}")
    assert response.status_code == 200, response.json()
    return response.json()


@pytest.mark.django_db
def test_it_shows_the_legal_set_the_signals_and_what_the_limit_and_budget_cut(agent, four_legal):
    answer = recall(agent, limit=2, budget_chars=60)
    ids = four_legal
    assert [item["id"] for item in answer["items"]] == [ids["home"], ids["food"]]
    assert answer["trace_url"] == f"/api/v1/recall/traces/{answer['trace_id']}"

    trace = trace_of(agent, answer["trace_id"])
    assert trace["kind"] == "recall" and trace["subject"] == "user:alice"
    assert trace["legal_set"]["legal"] == 4
    excluded = trace["legal_set"]["excluded"]
    assert excluded["out_of_scope"] == 1 and excluded["inactive"] == 1
    assert excluded == answer["excluded"]
    returned = trace["returned"]
    assert [(r["id"], r["position"], r["predicate"]) for r in returned] == [
        (ids["home"], 0, "b_home"),
        (ids["food"], 1, "c_food"),
    ]
    for item, shown in zip(answer["items"], returned, strict=True):
        assert shown["signals"] == item["why"]["signals"] and shown["rank"] == item["why"]["rank"]
        assert shown["used"] is None and shown["status"] == "active"
    assert returned[0]["text"] == "Alice lives in Shanghai" and returned[0]["chars"] == 23
    # The long claim came first and did not fit; the last one came after the limit.
    assert [(c["id"], c["reason"], c["chars"]) for c in trace["cut"]] == [
        (ids["long"], "over_budget", len(LONG)),
        (ids["visit"], "below_limit", len("Alice went in 2019")),
    ]
    assert trace["cut"][0]["signals"]["authority"]["rank"] == 1
    assert trace["budget"] == {
        "budget_chars": 60,
        "used_chars": 23 + len("Alice likes dumplings"),
        "over_budget": 1,
        "below_limit": 1,
    }
    assert answer["excluded"]["over_budget"] == 1


@pytest.mark.django_db
def test_another_tenant_another_subject_or_an_unknown_id_is_not_found(
    agent, globex_agent, make_agent, acme, four_legal
):
    trace_id = recall(agent)["trace_id"]
    bob_only = make_agent(acme, name="bob-only", capabilities=["recall"], subjects=["user:bob"])
    for client in (globex_agent, bob_only):
        response = client.get(f"/api/v1/recall/traces/{trace_id}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"
        used = client.post(
            f"/api/v1/recall/traces/{trace_id}/used",
            {"items": [{"id": four_legal["home"]}]},
            format="json",
        )
        assert used.status_code == 404 and used.json()["code"] == "not_found"
    unknown = agent.get("/api/v1/recall/traces/00000000-0000-0000-0000-000000000000")
    assert unknown.status_code == 404
    assert not RecallUse.objects.exists()


@pytest.mark.django_db
def test_editors_read_traces_end_users_and_tokens_without_recall_do_not(
    agent, make_agent, acme, editor, alice, session_api, four_legal
):
    trace_id = recall(agent)["trace_id"]
    assert trace_of(session_api(editor), trace_id)["id"] == trace_id
    refused = session_api(alice).get(f"/api/v1/recall/traces/{trace_id}")
    assert refused.status_code == 403 and refused.json()["code"] == "role_required"
    writer = make_agent(acme, name="writer-only", capabilities=["claims:write"])
    refused = writer.get(f"/api/v1/recall/traces/{trace_id}")
    assert refused.status_code == 403 and refused.json()["code"] == "capability_required"


@pytest.mark.django_db
def test_an_agent_reports_what_it_put_into_the_context_once(agent, four_legal):
    ids = four_legal
    answer = recall(agent, limit=3)
    returned = [item["id"] for item in answer["items"]]
    assert returned == [ids["long"], ids["home"], ids["food"]]
    url = f"/api/v1/recall/traces/{answer['trace_id']}/used"
    body = {
        "items": [{"id": ids["home"], "position": 0, "cited": True}, {"id": ids["long"]}],
        "run_id": "run-42",
        "task_id": "task:publish/7",
    }
    first = agent.post(url, body, format="json")
    assert first.status_code == 201, first.json()
    assert first.json() == {
        "trace_id": answer["trace_id"],
        "recorded": [ids["home"], ids["long"]],
        "already_reported": [],
        "unused": [ids["food"]],
    }
    uses = {str(u.claim_id): u for u in RecallUse.objects.filter(trace_id=answer["trace_id"])}
    assert uses[ids["home"]].position == 0 and uses[ids["home"]].cited is True
    assert uses[ids["long"]].position is None and uses[ids["long"]].cited is False
    assert {u.run_id for u in uses.values()} == {"run-42"}
    assert uses[ids["home"]].token_id == agent.token.pk

    # A retry records nothing twice, and says so; a later report adds what is new.
    again = agent.post(url, body, format="json")
    assert again.status_code == 200
    assert again.json()["recorded"] == [] and again.json()["already_reported"] == [
        ids["home"],
        ids["long"],
    ]
    later = agent.post(url, {"items": [{"id": ids["food"], "position": 2}]}, format="json")
    assert later.status_code == 201 and later.json()["unused"] == []
    assert RecallUse.objects.filter(trace_id=answer["trace_id"]).count() == 3

    trace = trace_of(agent, answer["trace_id"])
    assert [(r["used"], r["cited"], r["prompt_position"]) for r in trace["returned"]] == [
        (True, False, None),
        (True, True, 0),
        (True, False, 2),
    ]
    assert {use["claim"] for use in trace["uses"]} == set(returned)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"items": []}, "validation_error", "items"),
        ({"items": [{"id": "not-a-uuid"}]}, "validation_error", "items.0.id"),
        ({"items": [{"id": "HOME"}, {"id": "HOME"}]}, "validation_error", "items"),
        ({"items": [{"id": "HOME", "position": -1}]}, "validation_error", "items.0.position"),
        ({"items": [{"id": "HOME"}], "run_id": "run 42; drop"}, "validation_error", "run_id"),
        ({"items": [{"id": "HOME"}], "task_id": "x" * 201}, "validation_error", "task_id"),
        ({"items": [{"id": "GONE"}]}, "item_not_in_trace", "items"),
        (
            {"items": [{"id": "HOME"}], "run_id": "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"},
            "secret_detected",
            None,
        ),
    ],
)
def test_a_bad_report_is_a_problem_and_records_nothing(agent, four_legal, body, code, field):
    answer = recall(agent)
    for item in body["items"]:
        if item["id"] in ("HOME", "GONE"):
            item["id"] = four_legal[item["id"].lower()]
    response = agent.post(f"/api/v1/recall/traces/{answer['trace_id']}/used", body, format="json")
    assert response.status_code == 400, response.json()
    problem = response.json()
    assert response["Content-Type"] == "application/problem+json"
    assert problem["code"] == code
    if field:
        assert any(key.startswith(field) for key in problem["errors"]), problem
    assert not RecallUse.objects.exists()


@pytest.mark.django_db
def test_hot_memory_is_traced_and_its_uses_reported_the_same_way(agent, four_legal):
    before = Claim.objects.get(pk=four_legal["home"]).use_count
    hot = agent.get("/api/v1/subjects/user:alice/hot-memory?budget_chars=4000")
    assert hot.status_code == 200
    block = hot.json()
    trace = trace_of(agent, block["trace_id"])
    assert trace["kind"] == "hot_memory"
    assert [r["id"] for r in trace["returned"]] == block["claims"]
    assert four_legal["home"] in block["claims"] and four_legal["gone"] not in block["claims"]
    used = agent.post(
        f"/api/v1/recall/traces/{block['trace_id']}/used",
        {"items": [{"id": four_legal["home"], "position": 3}]},
        format="json",
    )
    assert used.status_code == 201
    assert set(used.json()["unused"]) == set(block["claims"]) - {four_legal["home"]}
    # Reading the block counts no use: the block is ordered by use.
    assert Claim.objects.get(pk=four_legal["home"]).use_count == before


@pytest.mark.django_db
def test_unused_recalls_per_claim_and_for_the_tenant(acme, agent, four_legal):
    ids = four_legal
    for cited in (True, False):
        answer = recall(agent, limit=3)
        agent.post(
            f"/api/v1/recall/traces/{answer['trace_id']}/used",
            {"items": [{"id": ids["home"], "cited": cited, "harmful": not cited}]},
            format="json",
        )
    recall(agent, limit=3)  # nothing reported: neither used nor unused
    home = claim_value(tenant=acme, claim_id=ids["home"])
    assert (home.returned, home.reported, home.used, home.cited, home.unused) == (3, 2, 2, 1, 0)
    assert home.harmful == 1
    detail = agent.get(f"/api/v1/claims/{ids['home']}").json()
    assert detail["value_signals"] == {
        "returned": 3,
        "reported": 2,
        "used": 2,
        "cited": 1,
        "harmful": 1,
        "unused": 0,
    }
    food = claim_value(tenant=acme, claim_id=ids["food"])
    assert (food.returned, food.reported, food.used, food.unused) == (3, 2, 0, 2)
    assert food.unused_rate == 1.0

    overview = unused_recalls(tenant=acme)
    assert (overview.reported_traces, overview.returned, overview.unused) == (2, 6, 4)
    assert overview.redundancy == pytest.approx(4 / 6)
    top = {str(claim_id): n for claim_id, _p, _s, n in overview.top_unused}
    assert top == {ids["long"]: 2, ids["food"]: 2}


@pytest.mark.django_db
def test_a_trace_a_deletion_redacted_takes_no_reports(acme, agent, four_legal):
    answer = recall(agent, query="Shanghai")
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    worker = Actor.system("test")
    deletion, _ = deletion_request_create(tenant=acme, actor=worker, subject=subject)
    deletion_run(deletion_id=deletion.pk, worker=worker)
    assert RecallTrace.objects.get(pk=answer["trace_id"]).redacted_at is not None
    response = agent.post(
        f"/api/v1/recall/traces/{answer['trace_id']}/used",
        {"items": [{"id": answer["items"][0]["id"]}]},
        format="json",
    )
    assert response.status_code == 409 and response.json()["code"] == "trace_redacted"
    trace = trace_of(agent, answer["trace_id"])
    assert trace["redacted"] is True and trace["query"] == "" and trace["cut"] == []
    assert not RecallUse.objects.exists()
