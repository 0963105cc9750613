from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.claims.models import Claim, ClaimSource, RecallTrace, Subject
from memory.claims.selectors.claims import claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery
from tests.common.plans import executed_plan_nodes
from tests.memory.helpers import recall, submit

pytestmark = pytest.mark.django_db


def test_look_alike_facts_of_another_subject_never_leak(agent):
    submit(agent)
    submit(
        agent,
        subject="project:crm",
        predicate="region",
        value="cn-shanghai",
        text="CRM is deployed in the Shanghai region",
        authority="tool_verified",
    )
    alice = recall(agent, query="Shanghai")
    assert [i["predicate"] for i in alice["items"]] == ["home_city"]
    crm = recall(agent, subject="project:crm", query="Shanghai")
    assert [i["predicate"] for i in crm["items"]] == ["region"]


def test_recall_after_correction_returns_only_the_new_value(agent):
    submit(agent, value="Beijing", text="Alice lives in Beijing", authority="tool_verified")
    submit(agent)
    result = recall(agent, query="where does alice live")
    assert [i["value"] for i in result["items"]] == ["Shanghai"]
    assert result["excluded"]["inactive"] == 1
    assert result["items"][0]["why"]["matched"]


def test_never_provided_information_is_not_claimed_to_match(agent):
    # Recall fills the limit from the legal set, best first, so the only memory
    # comes back; nothing in it matches the question, and the answer says so.
    claim = submit(agent)
    result = recall(agent, query="what is alice's favourite colour")
    assert [i["id"] for i in result["items"]] == [claim["id"]]
    assert not {"fulltext", "ngram"} & set(result["items"][0]["why"]["signals"])
    assert result["excluded"]["no_match"] == 1
    unknown = recall(agent, subject="user:nobody", query="anything")
    assert unknown["items"] == []
    assert RecallTrace.objects.filter(subject_key="user:nobody", subject=None).exists()


def test_cutoff_and_as_of_exclude_and_count(agent):
    now = timezone.now()
    submit(
        agent,
        available_at=(now - timedelta(days=1)).isoformat(),
        valid_from=(now - timedelta(days=10)).isoformat(),
    )
    before_known = recall(agent, cutoff=(now - timedelta(days=2)).isoformat())
    assert before_known["items"] == []
    assert before_known["excluded"]["after_cutoff"] == 1
    before_valid = recall(agent, as_of=(now - timedelta(days=20)).isoformat())
    assert before_valid["items"] == []
    assert before_valid["excluded"]["not_yet_valid"] == 1
    assert len(recall(agent)["items"]) == 1


def test_cutoff_bounds_event_time_as_well_as_availability(agent, editor, login):
    # Announced ten days ago, the move happened five days ago: a week ago it was
    # knowable and had not happened yet.
    now = timezone.now()
    moved = submit(
        agent,
        predicate="home_city",
        value="Lisbon",
        text="Alice lives in Lisbon",
        available_at=(now - timedelta(days=10)).isoformat(),
        valid_from=(now - timedelta(days=5)).isoformat(),
    )
    submit(
        agent,
        predicate="employer",
        value="Acme",
        text="Alice works at Acme",
        available_at=(now - timedelta(days=30)).isoformat(),
        valid_from=(now - timedelta(days=400)).isoformat(),
    )
    week_ago = recall(
        agent, query="where does alice live", cutoff=(now - timedelta(days=7)).isoformat()
    )
    assert [item["predicate"] for item in week_ago["items"]] == ["employer"]
    assert week_ago["excluded"]["event_after_cutoff"] == 1
    assert week_ago["excluded"]["after_cutoff"] == 0

    yesterday = recall(
        agent, query="where does alice live", cutoff=(now - timedelta(days=1)).isoformat()
    )
    assert moved["id"] in [item["id"] for item in yesterday["items"]]
    assert yesterday["excluded"]["event_after_cutoff"] == 0

    # The trace keeps the count, and the console says which rule removed the claim.
    trace = RecallTrace.objects.get(pk=week_ago["trace_id"])
    assert trace.excluded["event_after_cutoff"] == 1
    page = login(editor).get(f"/memory/traces/{trace.pk}/")
    assert page.status_code == 200
    assert "event_after_cutoff" in page.content.decode()


def test_project_scope_beats_global_and_other_projects_get_global(agent):
    submit(
        agent,
        kind="preference",
        predicate="notify_channel",
        value="email",
        text="Alice prefers email notifications",
    )
    submit(
        agent,
        kind="preference",
        predicate="notify_channel",
        value="in_app",
        text="For CRM Alice wants in-app notifications only",
        scope={"project": "crm"},
    )
    crm = recall(agent, scope={"project": "crm"}, kinds=["preference"])
    assert [i["value"] for i in crm["items"]] == ["in_app", "email"]
    assert crm["items"][0]["why"]["scope_match"] == "exact"
    erp = recall(agent, scope={"project": "erp"}, kinds=["preference"])
    assert [i["value"] for i in erp["items"]] == ["email"]
    assert erp["excluded"]["out_of_scope"] == 1


def test_exact_code_and_chinese_text_are_found(agent):
    submit(
        agent,
        predicate="last_error",
        value="ERR_4711",
        text="Deploy failed with ERR_4711 in src/app/main.py",
        authority="tool_verified",
    )
    submit(agent, predicate="home_city_zh", value="上海", text="爱丽丝住在上海浦东")
    submit(agent, predicate="employer", value="Acme", text="Alice works at Acme")

    def matching(query: str) -> list[str]:
        # Every legal claim comes back, best first; only the right one matches the text.
        items = recall(agent, query=query)["items"]
        assert len(items) == 3
        return [i["predicate"] for i in items if {"fulltext", "ngram"} & set(i["why"]["signals"])]

    assert matching("ERR_4711") == ["last_error"]
    assert matching("src/app/main.py") == ["last_error"]
    assert matching("住在上海") == ["home_city_zh"]


def test_stale_claims_are_excluded_unless_asked_for(agent):
    submit(agent, refresh_after=(timezone.now() - timedelta(days=1)).isoformat())
    result = recall(agent)
    assert result["items"] == [] and result["excluded"]["stale"] == 1
    with_stale = recall(agent, include_stale=True)
    assert with_stale["items"][0]["stale"] is True


def test_recall_writes_a_trace_and_bumps_use_and_nothing_else(agent):
    claim = submit(agent)
    before = Claim.objects.values().get(pk=claim["id"])
    result = recall(agent, query="Shanghai", budget_chars=500)
    trace = RecallTrace.objects.get(pk=result["trace_id"])
    assert [str(c) for c in trace.chosen] == [claim["id"]]
    assert trace.used_chars == len("Alice lives in Shanghai")
    after = Claim.objects.values().get(pk=claim["id"])
    assert after["use_count"] == before["use_count"] + 1
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"use_count", "last_used_at"}


def test_budget_is_respected(agent):
    for n in range(5):
        submit(agent, predicate=f"fact_{n}", value=str(n), text=f"Fact number {n} " + "x" * 40)
    result = recall(agent, budget_chars=120, limit=10)
    assert sum(len(i["text"]) for i in result["items"]) <= 120
    assert result["excluded"]["over_budget"] == 5 - len(result["items"])


def test_subject_is_required(agent):
    response = agent.post("/api/v1/recall", {"query": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "subject_required"


def test_recall_needs_the_capability(acme, make_agent):
    writer = make_agent(acme, name="writer", capabilities=["claims:write"])
    response = writer.post("/api/v1/recall", {"subject": "user:alice"}, format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "capability_required"


def test_recall_query_count_does_not_grow_with_claims(agent, django_assert_max_num_queries):
    for n in range(30):
        submit(agent, predicate=f"p{n}", value=str(n), text=f"Alice fact {n}")
    with django_assert_max_num_queries(12):
        recall(agent, query="Alice fact", limit=20)


def test_recalled_claims_come_with_their_sources_oldest_first_in_the_same_statement(
    agent, acme, globex
):
    claim = submit(agent)
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    with CaptureQueriesContext(connection) as captured:
        result = claims_recall(tenant=acme, q=RecallQuery(subject=subject, query="Shanghai"))
    [item] = result.items
    stored = list(ClaimSource.objects.filter(claim_id=claim["id"]).order_by("id"))
    assert stored and item.sources == stored
    assert [s.event_id for s in item.sources] == [s.event_id for s in stored]
    # The ranking statement, then the returned claims with their sources: nothing more.
    assert len(captured.captured_queries) == 2
    # Another tenant naming the same subject reads nothing: the lookup fails closed.
    assert (
        claims_recall(tenant=globex, q=RecallQuery(subject=subject, query="Shanghai")).items == []
    )


def test_a_long_history_is_counted_without_judging_each_old_claim(agent):
    submit(agent)
    alice = Subject.objects.get(kind="user", ref="alice")
    # Years of revisions and rejected candidates beside one active claim.
    old = Claim.objects.bulk_create(
        [
            Claim(
                tenant_id=alice.tenant_id,
                subject=alice,
                kind="fact",
                predicate=f"note_{n}",
                text=f"an old note {n}",
                authority="agent_inferred",
                basis="inference",
                status="superseded" if n % 2 else "rejected",
                available_at=timezone.now(),
            )
            for n in range(3_000)
        ]
    )
    answer = recall(agent, query="Shanghai")
    assert [item["predicate"] for item in answer["items"]] == ["home_city"]
    assert answer["excluded"]["inactive"] == 3_000

    # A replay that hides two old claims counts them as hidden, the rest as inactive.
    q = RecallQuery(subject=alice, query="Shanghai", hidden=[old[0].id, old[1].id])
    result = claims_recall(tenant=alice.tenant, q=q)
    assert result.excluded["inactive"] == 2_998
    assert result.excluded["hidden"] == 2
    assert result.excluded_by_subject[alice.pk]["inactive"] == 2_998

    # Only the active claim is read and judged by every rule; the old ones are a count.
    with CaptureQueriesContext(connection) as captured:
        claims_recall(tenant=alice.tenant, q=q)
    ranking = next(c["sql"] for c in captured.captured_queries if "subject_claims" in c["sql"])
    plan = executed_plan_nodes(ranking)
    judged = next(n for n in plan if n.get("Subplan Name") == "CTE subject_claims")
    assert judged["Actual Rows"] == 1
