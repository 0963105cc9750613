"""The review console: queues, the detail pane, claiming, decisions, bulk approval."""

import pytest

from memory.claims.models import Claim
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
    assert "Nothing waiting that matches the filters" in empty


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
    assert 'hx-swap-oob="true"' in html and "Approved “Alice probably works at Acme”." in html
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


# --- findings of the console review (each failed before its fix) ---------------------------------


@pytest.fixture
def demo_desk(login):
    """The demo tenant's editor, as after `make run`."""
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("seed_demo", stdout=StringIO())
    client = login(get_user_model().objects.get(username="editor"))
    client.get("/review/candidates/")
    client.csrf = client.cookies["csrftoken"].value
    return client


def test_manual_review_offers_receipt_reasons_and_says_a_note_is_enough(demo_desk):
    item = ReviewItem.objects.get(queue="manual_review")
    page = demo_desk.get(f"/review/manual_review/?item={item.pk}").content.decode()
    assert "a reason or a note is required for every verdict" in page
    assert "required to reject" not in page
    assert "Checked on the outside system" in page
    assert "Instruction injection" not in page and "About the wrong subject" not in page
    assert "It did not happen: safe to retry" in page


def test_manual_review_succeeds_on_a_note_alone(demo_desk):
    from memory.receipts.models import Receipt

    item = ReviewItem.objects.get(queue="manual_review")
    response = demo_desk.post(
        f"/review/manual_review/{item.pk}/decide",
        {"verdict": "succeeded", "external_id": "a-1", "note": "found it by key on the blog"},
        HTTP_X_CSRFTOKEN=demo_desk.csrf,
        **HTMX,
    )
    assert 'id="decision-error"' not in response.content.decode()
    receipt = Receipt.objects.get(pk=item.target_id)
    assert (receipt.state, receipt.external_id) == ("succeeded", "a-1")


def test_a_refused_settlement_keeps_what_was_typed_and_marks_the_field(demo_desk):
    from memory.receipts.models import Receipt

    item = ReviewItem.objects.get(queue="manual_review")
    refused = demo_desk.post(
        f"/review/manual_review/{item.pk}/decide",
        {"verdict": "succeeded", "external_id": "a-1", "evidence": "looked up by key at 14:02"},
        HTTP_X_CSRFTOKEN=demo_desk.csrf,
        **HTMX,
    ).content.decode()
    assert "needs a reason code or a note" in refused
    assert 'value="looked up by key at 14:02"' in refused
    assert 'value="a-1"' in refused
    assert 'aria-invalid="true" aria-describedby="reason_code-error"' in refused
    assert Receipt.objects.get(pk=item.target_id).state == "manual_review"


def test_the_next_item_respects_the_filters_and_sort(editor, login, agent):
    ids = {}
    for subject in ("user:alice", "user:bob", "user:alice"):
        verdict = submit(
            agent,
            subject=subject,
            authority="reported",
            basis="reported",
            predicate=f"p{len(ids)}",
            value="x",
            text=f"reported about {subject} {len(ids)}",
        )
        ids[len(ids)] = verdict["review_item"]["id"]
    client = login(editor)
    token = csrf(client)
    response = client.post(
        f"/review/candidates/{ids[0]}/decide",
        {"verdict": "approve", "return_query": "subject=user:alice&sort=newest"},
        HTTP_X_CSRFTOKEN=token,
    )
    # The oldest open item is bob's, but the list shown was alice's, newest first.
    assert response.status_code == 302
    assert f"item={ids[2]}" in response.url and "subject=user%3Aalice" in response.url


def test_items_held_by_a_colleague_show_the_holder_and_disabled_actions(
    editor, editor2, login, candidate_item
):
    first = login(editor)
    first.post(f"/review/candidates/{candidate_item.pk}/claim", HTTP_X_CSRFTOKEN=csrf(first))
    page = login(editor2).get(f"/review/candidates/{candidate_item.pk}/", **HTMX).content.decode()
    assert "Held by erin" in page
    assert 'value="approve" class="primary"\n          disabled' in page
    assert 'hx-trigger="load"' not in page


def test_approve_selected_with_nothing_selected_keeps_the_open_item(editor, login, candidate_item):
    client = login(editor)
    response = client.post(
        "/review/candidates/bulk",
        {"open_item": candidate_item.pk},
        HTTP_X_CSRFTOKEN=csrf(client),
        **HTMX,
    ).content.decode()
    assert "Select at least one item" in response
    assert f"#{candidate_item.pk} · Candidates" in response


def test_an_empty_queue_does_not_ask_to_select_an_item(editor, login):
    page = login(editor).get("/review/conflicts/").content.decode()
    assert "Nothing waiting." in page and "Nothing here needs a person now." in page
    assert "Claims land here when two active ones disagree" in page
    assert 'placeholder="e.g. contradicts_active"' in page
    assert "Select an item" not in page


def test_the_age_filter_says_any_age_and_the_list_has_no_empty_listbox(
    editor, login, candidate_item
):
    page = login(editor).get("/review/candidates/").content.decode()
    assert "---------" not in page
    assert '<option value="">any age</option>' in page
    assert 'role="listbox"' not in page


def test_auditors_are_told_the_console_is_read_only_and_get_no_decision_shortcuts(
    acme, make_member, login, candidate_item
):
    auditor = make_member(acme, "audrey", "auditor")
    page = login(auditor).get(f"/review/candidates/?item={candidate_item.pk}").content.decode()
    assert 'id="auditor-notice"' in page and "Read-only" in page
    # One read-only banner, not the queue's second one saying it again.
    assert page.count('class="notice"') == 1 and 'id="read-only"' not in page
    dialog = page[page.index('<dialog id="shortcuts"') :]
    assert "<kbd>a</kbd>" not in dialog and "<kbd>r</kbd>" not in dialog
    editor_page = login(make_member(acme, "edna", "editor")).get("/review/candidates/")
    assert "<kbd>a</kbd>" in editor_page.content.decode().split('<dialog id="shortcuts"')[1]


def test_messages_are_toasts_outside_the_layout(editor, login, candidate_item):
    client = login(editor)
    client.post(
        f"/review/candidates/{candidate_item.pk}/decide",
        {"verdict": "approve"},
        HTTP_X_CSRFTOKEN=csrf(client),
    )
    page = client.get("/review/candidates/").content.decode()
    toasts = page.index('id="messages" class="toasts"')
    assert toasts < page.index('<div class="shell')
    assert (
        "Approved “Alice probably works at Acme”." in page[toasts : page.index('<div class="shell')]
    )


def test_a_dirty_probe_tells_the_editor_what_to_do(demo_desk):
    item = ReviewItem.objects.get(queue="deletions")
    page = demo_desk.get(f"/review/deletions/?item={item.pk}").content.decode()
    guidance = page[page.index('id="deletion-guidance"') :]
    assert "A probe found a possible copy." in guidance
    assert "If the match is unrelated text (a false positive)" in guidance
    assert "(optional)" in page and "required to reject" not in page
    assert "The probe matched unrelated text" in page  # the deletions queue's own reasons


def test_the_skill_publication_review_shows_the_matrix_rows_the_approver_decides_on(login):
    # The demo's waiting version has a run for every category, one of them failed: the
    # approver sees all six rows with their results, not a header over an empty table.
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("seed_demo", stdout=StringIO())
    client = login(get_user_model().objects.get(username="admin"))
    item = ReviewItem.objects.get(queue="skill_publication", status="open")

    page = client.get(f"/review/skill_publication/?item={item.pk}").content.decode()

    matrix = page.split('id="evaluation-matrix"', 1)[1].split("</table>", 1)[0]
    rows = matrix.split("<tbody>", 1)[1]
    assert rows.count('<th scope="row">') == 6
    for category in ("normal", "missing_input", "injected_content", "version_incompatible"):
        assert category in rows
    assert "failed" in rows and "passed" in rows
