import pytest

from memory.receipts.selectors.recovery_log import recovery_decision_counts
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db

KEY = ("fresh", "no_checkpoint")


def test_dashboard_draws_the_governance_charts(editor, login, agent):
    submit(agent)
    submit(
        agent,
        authority="agent_inferred",
        basis="inference",
        predicate="employer",
        value="Acme",
        text="works at Acme",
    )
    client = login(editor)
    html = client.get("/dashboard/").content.decode()
    assert html.count("<svg") >= 3
    assert "Accepted · the user said so" in html
    assert "Sent to review · source not verified" in html
    assert "needs_review" not in html.split("<main")[1]
    partial = client.get("/dashboard/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="charts"')


def test_dashboard_escapes_labels(editor, login, agent):
    submit(agent, predicate="x", value="y", text="<script>alert(1)</script> lives here")
    html = login(editor).get("/dashboard/").content.decode()
    assert "<script>alert(1)" not in html


def test_end_users_are_refused_the_dashboard(alice, login):
    assert login(alice).get("/dashboard/").status_code == 403


def test_a_person_of_no_tenant_finds_no_dashboard(outsider, login):
    client = login(outsider)
    assert client.get("/dashboard/").status_code == 404
    assert client.get("/").status_code == 404


def test_recovery_chart_counts_only_the_viewers_tenant(
    acme, globex, make_member, login, agent, globex_agent
):
    acme_before = recovery_decision_counts(tenant=acme)[KEY]
    globex_before = recovery_decision_counts(tenant=globex)[KEY]
    for client, n in ((agent, 1), (globex_agent, 3)):
        for i in range(n):
            response = client.post(
                "/api/v1/recovery",
                {"task_key": f"task-{i}", "input_fingerprint": "sha256:x"},
                format="json",
            )
            assert response.json()["decision"] == "fresh"
    acme_html = login(make_member(acme, "erin")).get("/dashboard/").content.decode()
    globex_html = login(make_member(globex, "gary")).get("/dashboard/").content.decode()
    assert f"Start fresh · no checkpoint: {acme_before + 1}<" in acme_html
    assert f"Start fresh · no checkpoint: {globex_before + 3}<" in globex_html
