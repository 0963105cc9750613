"""A recall trace in a real browser: an editor reads why a recall answered as it did
(legal set, signals, what the budget cut, what the agent used) and follows a claim to
"where was this used"."""

from __future__ import annotations

import pytest
from django.utils import timezone

from accounts.models import Tenant
from accounts.services import agent_token_create
from memory.claims.models import Claim, RecallTrace
from memory.privacy.services.erasure import redact_traces_choosing
from tests.conftest import AgentClient
from tests.e2e.conftest import screenshot, settle
from tests.memory.helpers import recall, submit


def demo_agent() -> AgentClient:
    issued = agent_token_create(
        tenant=Tenant.objects.get(slug="demo"), name="trace-e2e", max_authority="user_explicit"
    )
    client = AgentClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    client.token = issued.token
    return client


def test_an_editor_reads_a_trace_and_where_a_claim_was_used(sign_in):
    page = sign_in("editor")
    agent = demo_agent()
    subject = "user:dana"
    for predicate, text in [
        ("home_city", "Dana lives in Hangzhou"),
        ("employer", "Dana works at a Hangzhou tea exporter with offices near West Lake"),
        ("pet", "Dana has a dog"),
    ]:
        submit(agent, subject=subject, predicate=predicate, value=predicate, text=text)
    answer = recall(agent, subject=subject, query="where does Dana live", limit=2, budget_chars=40)
    first = answer["items"][0]
    used = agent.post(
        f"/api/v1/recall/traces/{answer['trace_id']}/used",
        {"items": [{"id": first["id"], "position": 0, "cited": True}], "run_id": "run-demo-1"},
        format="json",
    )
    assert used.status_code == 201, used.json()
    trace_id = answer["trace_id"]
    cut = agent.get(f"/api/v1/recall/traces/{trace_id}").json()["cut"]
    assert cut

    page.goto(f"/memory/traces/{trace_id}/")
    assert page.get_by_role("heading", name="The legal set").is_visible()
    assert "could be used" in page.locator("#legal-set").inner_text()
    returned = page.locator("#returned")
    row = returned.get_by_role("row").nth(1)
    assert first["text"][:20] in row.inner_text()
    # Rows count from 1, as people count; the prompt position is the agent's own number.
    assert row.get_by_role("cell").first.inner_text() == "1"
    assert "used at 0" in row.inner_text() and "cited" in row.inner_text()
    cut_rows = page.locator("#cut").get_by_role("row")
    assert cut_rows.count() == len(cut) + 1
    assert cut[0]["text"][:20] in cut_rows.nth(1).inner_text()
    assert "run-demo-1" in page.locator("#uses").inner_text()
    screenshot(page, "recall-trace")

    # What the agent would have seen without the first claim.
    row.get_by_role("link", name="Without it").click()
    page.wait_for_url("**/counterfactual?*")
    assert "missing without it" in page.locator("#baseline").inner_text()
    assert first["text"] not in page.locator("#counterfactual").inner_text()
    screenshot(page, "recall-counterfactual")
    page.go_back()

    row.get_by_role("link").first.click()
    page.wait_for_url(f"**/memory/claims/{first['id']}/")
    where = page.locator("#where-used")
    assert where.get_by_role("link", name=f"recall {str(trace_id)[:8]}").is_visible()
    assert page.locator('[data-metric="cited"]').inner_text() == "1"
    screenshot(page, "claim-where-used")
    where.get_by_role("link").first.click()
    page.wait_for_url(f"**/memory/traces/{trace_id}/")


def test_an_editor_finds_a_run_in_the_ledger_and_reads_it(sign_in):
    agent = demo_agent()
    for n in range(1, 31):
        text = "Dana asked to move the dentist visit" if n == 15 else f"step {n}: routine check"
        agent.post(
            "/api/v1/events",
            {
                "subject": "user:dana",
                "kind": "agent_step",
                "text": text,
                "run_id": "run-dana-7",
                "agent": "planner",
                "observed_at": f"2026-11-30T10:{n:02d}:00Z",
            },
            format="json",
        )
    page = sign_in("editor")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Ledger").click()
    page.wait_for_url("**/memory/ledger/")
    page.get_by_label("Subject").fill("user:dana")
    page.get_by_label("Mentions").fill("dentist")
    page.get_by_role("button", name="Search").click()
    run = page.get_by_role("article", name="Run run-dana-7")
    run.wait_for()
    assert "Dana asked to move the dentist visit" in run.inner_text()
    assert "… 10 events …" in run.inner_text()
    screenshot(page, "ledger-discovery")
    run.get_by_role("link", name="run-dana-7").click()
    page.wait_for_url("**mode=scroll**")
    assert page.locator("#ledger-results li").count() == 30


@pytest.mark.parametrize("width", [1280, 390])
def test_a_trace_agrees_with_itself_before_and_after_a_deletion_redacts_it(sign_in, width):
    agent = demo_agent()
    subject = "user:erin"
    for predicate, text in [("home_city", "Erin lives in Lisbon"), ("pet", "Erin has a cat")]:
        submit(agent, subject=subject, predicate=predicate, value=predicate, text=text)
    answer = recall(agent, subject=subject, query="where does Erin live")
    trace_id = answer["trace_id"]
    page = sign_in("editor", width=width)
    page.goto(f"/memory/traces/{trace_id}/")
    settle(page)
    screenshot(page, f"trace-plain-{width}")
    first = page.locator("#returned tbody tr").first
    assert first.locator("td").first.inner_text().endswith("1")
    assert page.inner_text("#budget").startswith("No character budget was set")
    assert "none" not in page.inner_text("#trace-query")
    # The rank is one number on one line: its text makes a single line box.
    lines = first.locator("td.rank").evaluate(
        "(td) => { const r = document.createRange(); r.selectNodeContents(td);"
        " return r.getClientRects().length; }"
    )
    assert lines == 1

    trace = RecallTrace.objects.get(pk=trace_id)
    claim = Claim.objects.get(subject__ref="erin", predicate="home_city")
    redact_traces_choosing(
        tenant_id=trace.tenant_id,
        subject_ids=[trace.subject_id],
        claim_ids=[claim.pk],
        now=timezone.now(),
    )
    page.reload()
    settle(page)
    screenshot(page, f"trace-redacted-{width}")
    assert "ranks and ranking signals are gone" in page.inner_text("#redacted-notice")
    returned = page.inner_text("#returned")
    for signal in ("fulltext", "vector", "ngram", "recency", "authority", "#1"):
        assert signal not in returned, signal
    assert page.inner_text("#trace-query-text") == "erased by a deletion"
    assert "Every ranked candidate was returned" not in page.inner_text("#cut")
    assert "Raw trace" not in page.inner_text("main")
