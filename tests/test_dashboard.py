import pytest

from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db


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
    assert "accepted · user_explicit_verified" in html
    assert "needs_review · unverified_authority" in html
    partial = client.get("/dashboard/", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="charts"')


def test_dashboard_escapes_labels(editor, login, agent):
    submit(agent, predicate="x", value="y", text="<script>alert(1)</script> lives here")
    html = login(editor).get("/dashboard/").content.decode()
    assert "<script>alert(1)" not in html


def test_end_users_have_no_dashboard(alice, login):
    assert login(alice).get("/dashboard/").status_code == 404
