"""The review console: queues, the detail pane, claiming, decisions, bulk approval."""

import pytest

from memory.models import Claim
from reviews.models import Decision, ReviewItem
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def candidate_item(agent):
    verdict = submit(
        agent,
        authority="agent_inferred",
        basis="inference",
        text="Alice probably works at Acme",
        predicate="employer",
        value="Acme",
    )
    return ReviewItem.objects.get(pk=verdict["review_item"]["id"])


def csrf(client) -> str:
    client.get("/review/candidates/")
    return client.cookies["csrftoken"].value


def test_queue_page_lists_items_with_age_and_badges(editor, login, candidate_item):
    response = login(editor).get("/review/candidates/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Alice probably works at Acme" in html
    assert 'id="queue-nav"' in html and 'aria-label="1 open"' in html
    assert "<time" in html and "unverified_authority" in html


def test_list_partial_for_htmx_with_filters(editor, login, candidate_item):
    client = login(editor)
    response = client.get("/review/candidates/?subject=user:alice", **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="list"')
    assert "Alice probably works at Acme" in html
    empty = client.get("/review/candidates/?subject=user:bob", **HTMX).content.decode()
    assert "Nothing waiting here" in empty


def test_detail_partial_shows_evidence_and_claims_on_open(editor, editor2, login, candidate_item):
    first = login(editor)
    detail = first.get(f"/review/candidates/{candidate_item.pk}/", **HTMX).content.decode()
    assert detail.lstrip().startswith('<section id="detail"')
    assert "chat://s1/m7" in detail and "unverified_authority" in detail
    assert 'hx-trigger="load"' in detail
    token = csrf(first)
    claimed = first.post(
        f"/review/candidates/{candidate_item.pk}/claim", HTTP_X_CSRFTOKEN=token, **HTMX
    )
    assert "Held by erin" in claimed.content.decode()
    second = login(editor2)
    token2 = csrf(second)
    blocked = second.post(
        f"/review/candidates/{candidate_item.pk}/claim", HTTP_X_CSRFTOKEN=token2, **HTMX
    ).content.decode()
    assert "erin is working on this item" in blocked
    refused = second.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve"},
        HTTP_X_CSRFTOKEN=token2,
        **HTMX,
    )
    assert "holds this item" in refused.content.decode()
    assert Claim.objects.get(pk=candidate_item.target_id).status == "candidate"


def test_approve_through_the_console(editor, login, candidate_item):
    client = login(editor)
    token = csrf(client)
    response = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="workspace"')
    assert 'hx-swap-oob="true"' in html and "Approve: done." in html
    assert Claim.objects.get(pk=candidate_item.target_id).status == "active"
    assert Decision.objects.get(item=candidate_item).actor_label == "erin"


def test_reject_needs_a_reason(editor, login, candidate_item):
    client = login(editor)
    token = csrf(client)
    refused = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "reject"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    assert "a rejection needs a reason code" in refused.content.decode()
    assert Claim.objects.get(pk=candidate_item.target_id).status == "candidate"
    done = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "reject", "reason_code": "unsupported"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    assert done.status_code == 200
    assert Claim.objects.get(pk=candidate_item.target_id).status == "rejected"


def test_decide_without_javascript_redirects(editor, login, candidate_item):
    client = login(editor)
    token = csrf(client)
    response = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert response.url.startswith("/review/candidates/")


def test_bulk_approve(editor, login, agent):
    items = []
    for n in range(3):
        verdict = submit(
            agent,
            authority="reported",
            basis="reported",
            predicate=f"p{n}",
            value=str(n),
            text=f"reported {n}",
        )
        items.append(verdict["review_item"]["id"])
    client = login(editor)
    token = csrf(client)
    response = client.post(
        "/review/candidates/bulk", {"items": items[:2]}, HTTP_X_CSRFTOKEN=token, **HTMX
    )
    assert "Approved 2 items." in response.content.decode()
    assert Claim.objects.filter(status="active").count() == 2
    assert ReviewItem.objects.filter(status="open").count() == 1


def test_conflict_supersede_through_the_console(editor, login, agent):
    first = submit(agent, authority="tool_verified", value="Beijing", text="in Beijing")
    second = submit(agent, authority="agent_inferred", basis="inference")
    item = second["review_item"]["id"]
    client = login(editor)
    detail = client.get(f"/review/conflicts/{item}/", **HTMX).content.decode()
    assert "Both sides of the conflict" in detail and "in Beijing" in detail
    token = csrf(client)
    client.post(
        f"/review/conflicts/{item}/decide",
        {"verdict": "supersede", "winner": second["id"]},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    assert Claim.objects.get(pk=second["id"]).status == "active"
    assert Claim.objects.get(pk=first["id"]).status == "superseded"


def test_end_users_and_other_tenants_cannot_see_queues(
    alice, login, globex, make_member, candidate_item
):
    # A member whose role reads no queue is refused; another tenant's item does not exist.
    assert login(alice).get("/review/candidates/").status_code == 403
    outsider = make_member(globex, "gary")
    client = login(outsider)
    assert client.get(f"/review/candidates/{candidate_item.pk}/").status_code == 404
    assert "Alice probably" not in client.get("/review/candidates/").content.decode()


def test_queue_page_query_count_is_flat(editor, login, agent, django_assert_max_num_queries):
    for n in range(25):
        submit(
            agent,
            authority="reported",
            basis="reported",
            predicate=f"p{n}",
            value=str(n),
            text=f"reported {n}",
        )
    client = login(editor)
    with django_assert_max_num_queries(14):
        response = client.get("/review/candidates/")
    assert response.content.decode().count("data-row") == 25


def test_every_demo_queue_renders_its_evidence_and_deletions_can_be_acknowledged(login):
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("seed_demo", stdout=StringIO())
    client = login(get_user_model().objects.get(username="editor"))
    for queue, evidence in [
        ("candidates", "Nearest active claims"),
        ("conflicts", "Both sides of the conflict"),
        ("manual_review", "Reconciliation reads"),
        ("skill_publication", "Evaluation matrix"),
        ("deletions", "Verification probes"),
        ("stale", "Alice uses a Pixel 7"),
    ]:
        item = ReviewItem.objects.filter(queue=queue, status="open").order_by("id").first()
        page = client.get(f"/review/{queue}/?item={item.pk}")
        assert page.status_code == 200, queue
        assert evidence in page.content.decode(), queue
    item = ReviewItem.objects.get(queue="deletions")
    token = client.cookies["csrftoken"].value
    client.post(
        f"/review/deletions/{item.pk}/decide",
        {"verdict": "acknowledge"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    item.refresh_from_db()
    assert item.status == "decided"


def test_auditors_read_the_queue_but_cannot_claim_or_decide(
    acme, make_member, login, session_api, candidate_item
):
    auditor = make_member(acme, "audrey", "auditor")
    client = login(auditor)
    detail = client.get(f"/review/candidates/{candidate_item.pk}/", **HTMX).content.decode()
    assert "Alice probably works at Acme" in detail
    # Auditors get no auto-claim on open, and a hand-made POST is refused.
    assert 'hx-trigger="load"' not in detail
    token = csrf(client)
    claimed = client.post(
        f"/review/candidates/{candidate_item.pk}/claim", HTTP_X_CSRFTOKEN=token, **HTMX
    )
    assert claimed.status_code == 403
    decided = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve"},
        HTTP_X_CSRFTOKEN=token,
        **HTMX,
    )
    assert "needs the role editor or admin" in decided.content.decode()
    api = session_api(auditor)
    refused = api.post(f"/api/v1/reviews/{candidate_item.pk}/claim")
    assert refused.status_code == 403 and refused.json()["code"] == "role_required"
    candidate_item.refresh_from_db()
    assert candidate_item.status == "open" and candidate_item.claimed_by_id is None
    assert Claim.objects.get(pk=candidate_item.target_id).status == "candidate"


def test_a_person_of_no_tenant_finds_no_queue(outsider, login, candidate_item):
    client = login(outsider)
    assert client.get("/review/").status_code == 404
    assert client.get("/review/candidates/").status_code == 404
    assert client.get(f"/review/candidates/{candidate_item.pk}/").status_code == 404
    client.get("/accounts/login/")
    refused = client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve"},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert refused.status_code == 404
    candidate_item.refresh_from_db()
    assert (candidate_item.status, candidate_item.claimed_by_id) == ("open", None)
    assert not Decision.objects.exists()


def test_an_end_user_may_neither_claim_nor_decide(alice, login, candidate_item):
    client = login(alice)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    url = f"/review/candidates/{candidate_item.pk}"
    claimed = client.post(f"{url}/claim", HTTP_X_CSRFTOKEN=token)
    decided = client.post(f"{url}/decide", {"verdict": "approve"}, HTTP_X_CSRFTOKEN=token)
    assert (claimed.status_code, decided.status_code) == (403, 403)
    candidate_item.refresh_from_db()
    assert (candidate_item.status, candidate_item.claimed_by_id) == ("open", None)
    assert not Decision.objects.exists()
    assert Claim.objects.get(pk=candidate_item.target_id).status == "candidate"
