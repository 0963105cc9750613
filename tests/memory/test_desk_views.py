"""The editors' memory desk: a trace page, a claim's "where was this used", the dashboard's
context redundancy."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import Tenant
from tests.memory.helpers import recall, submit
from tests.memory.test_ledger_search import seed_run


@pytest.fixture
def recalled(agent) -> dict[str, str]:
    long = submit(agent, predicate="a_long", value="x", text="Alice " + "very " * 20 + "long")
    home = submit(agent, predicate="b_home", value="Shanghai")
    answer = recall(agent, budget_chars=40)
    assert [item["id"] for item in answer["items"]] == [home["id"]]
    used = agent.post(
        f"/api/v1/recall/traces/{answer['trace_id']}/used",
        {"items": [{"id": home["id"], "position": 1, "cited": True}], "run_id": "run-7"},
        format="json",
    )
    assert used.status_code == 201
    return {"trace": answer["trace_id"], "home": home["id"], "long": long["id"]}


@pytest.mark.django_db
def test_the_trace_page_shows_the_legal_set_the_cut_and_the_uses(editor, login, recalled):
    page = login(editor).get(reverse("desk:trace", args=[recalled["trace"]]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<strong>2</strong> claims of the subject could be used" in html
    assert "over budget" in html and "Alice very very" in html
    assert reverse("desk:claim", args=[recalled["long"]]) in html
    assert "used at 1" in html and ">cited<" in html and "run-7" in html
    assert "fulltext" not in html  # an empty query matches no words: no such signal


@pytest.mark.django_db
def test_the_claim_page_says_where_it_was_used_and_what_it_was_worth(
    editor, login, agent, recalled
):
    recall(agent, budget_chars=40)  # returned again, nothing reported
    client = login(editor)
    with CaptureQueriesContext(connection) as captured:
        page = client.get(reverse("desk:claim", args=[recalled["home"]]))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count(reverse("desk:trace", args=[recalled["trace"]])) == 1
    assert 'data-metric="returned">2<' in html and 'data-metric="cited">1<' in html
    assert "not reported" in html and ">used<" in html
    # The long claim was cut by the budget each time: never returned, never used.
    long = client.get(reverse("desk:claim", args=[recalled["long"]])).content.decode()
    assert 'data-metric="returned">0<' in long and "No recall or hot-memory read" in long
    assert len(captured.captured_queries) <= 12


@pytest.mark.django_db
def test_another_tenant_sees_no_trace_and_end_users_no_desk(
    globex, make_member, alice, login, recalled
):
    outsider = make_member(globex, "gus")
    for url in (
        reverse("desk:trace", args=[recalled["trace"]]),
        reverse("desk:claim", args=[recalled["home"]]),
    ):
        assert login(outsider).get(url).status_code == 404
        assert login(alice).get(url).status_code == 403


@pytest.mark.django_db
def test_the_dashboard_shows_context_redundancy(editor, login, agent, recalled):
    html = login(editor).get(reverse("console:dashboard")).content.decode()
    # One reported answer with one claim, used: nothing redundant.
    assert 'data-metric="context_redundancy">0.00<' in html
    other = submit(agent, predicate="c_pet", value="cat", text="Alice has a cat")
    answer = recall(agent, limit=5)
    assert other["id"] in [item["id"] for item in answer["items"]]
    agent.post(
        f"/api/v1/recall/traces/{answer['trace_id']}/used",
        {"items": [{"id": recalled["home"]}]},
        format="json",
    )
    html = login(editor).get(reverse("console:dashboard")).content.decode()
    # The second reported answer returned three claims and used one.
    assert 'data-metric="context_redundancy">0.50<' in html
    assert reverse("desk:claim", args=[other["id"]]) in html


@pytest.mark.django_db
def test_the_ledger_page_finds_runs_with_their_bookends_and_scrolls_one(editor, login, acme):
    seed_run(acme, "run-200", 200, {120: "Alice asked about the Zanzibar ferry"})
    client = login(editor)
    html = client.get(reverse("desk:ledger"), {"subject": "user:alice", "q": "zanzibar"}).content
    page = html.decode()
    assert "<strong>Alice asked about the Zanzibar ferry</strong>" in page
    assert "#1 agent_step" in page and "#200 agent_step" in page and "#118 agent_step" in page
    assert "#117 agent_step" not in page and "… 114 events …" in page
    # The htmx request gets the results alone.
    partial = client.get(
        reverse("desk:ledger"), {"subject": "user:alice", "q": "zanzibar"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in partial and 'id="ledger-results"' in partial
    scroll = client.get(
        reverse("desk:ledger"), {"subject": "user:alice", "mode": "scroll", "run_id": "run-200"}
    ).content.decode()
    assert "#100 agent_step" in scroll and "#101 agent_step" not in scroll
    assert "after=100" in scroll
    browse = client.get(reverse("desk:ledger"), {"subject": "user:alice"}).content.decode()
    assert ">run-200</a>" in browse
    bad = client.get(reverse("desk:ledger"), {"subject": "alice"}).content.decode()
    assert 'role="alert"' in bad


@pytest.mark.django_db
def test_end_users_have_no_ledger_page(alice, login):
    assert login(alice).get(reverse("desk:ledger")).status_code == 403


@pytest.mark.django_db
def test_the_counterfactual_page_shows_what_the_agent_would_have_seen_without_a_claim(
    editor, login, agent
):
    submit(agent, predicate="a_first", value="1", text="Alice fact one")
    second = submit(agent, predicate="b_second", value="2", text="Alice fact two")
    third = submit(agent, predicate="c_third", value="3", text="Alice fact three")
    answer = recall(agent, limit=2)
    client = login(editor)
    trace_page = client.get(reverse("desk:trace", args=[answer["trace_id"]])).content.decode()
    link = f"{reverse('desk:counterfactual', args=[answer['trace_id']])}?claim={second['id']}"
    assert link in trace_page
    html = client.get(link + "&change=hide").content.decode()
    assert "<del>Alice fact two</del>" in html and "<ins>Alice fact three</ins>" in html
    assert "1 claim would have been missing, and 1 other would have taken its place" in html
    quiet = client.get(
        reverse("desk:counterfactual", args=[answer["trace_id"]]),
        {"claim": third["id"], "change": "hide"},
    ).content.decode()
    assert "would have seen the same answer" in quiet
    bad = client.get(reverse("desk:counterfactual", args=[answer["trace_id"]]), {"claim": "x"})
    assert bad.status_code == 404


@pytest.mark.django_db
def test_the_demo_fills_the_ledger_and_the_context_redundancy(login, make_member):
    call_command("seed_demo", stdout=StringIO())
    client = login(make_member(Tenant.objects.get(slug="demo"), "desk-reader"))
    ledger = client.get(
        reverse("desk:ledger"), {"subject": "project:crm", "q": "region"}
    ).content.decode()
    assert "crm-deploy-7" in ledger and "<strong>cloud API: api is healthy" in ledger
    dashboard = client.get(reverse("console:dashboard")).content.decode()
    assert 'data-metric="context_redundancy">0.50<' in dashboard
