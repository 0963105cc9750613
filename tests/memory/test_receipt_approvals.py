"""Approvals for impactful operations: a policy saying `approval_required` holds each receipt in
`awaiting_approval` until a person other than the one its token acts for approves the intent in
the console's approvals queue; the agent cannot submit before, and a rejection settles it."""

from __future__ import annotations

import pytest

from accounts.models import AuditEvent
from memory.receipts.models.receipts import Receipt, ReceiptState, ReceiptTransition
from reviews.models import ItemStatus, ReviewItem

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("blog_platform")]

INTENT = {"title": "Quarterly numbers", "audience": "all-customers"}


@pytest.fixture
def requester(acme, make_member):
    """The person the agent's token acts for: an editor, so they could decide other items."""
    return make_member(acme, "rita")


@pytest.fixture
def owned_agent(acme, make_agent, requester):
    return make_agent(acme, name="mailer", capabilities=["receipts:write"], owner=requester)


@pytest.fixture
def approval_policy(session_api, admin_user):
    client = session_api(admin_user)
    response = client.post(
        "/api/v1/platforms/blog/policies",
        {"operation": "newsletter.send", "approval_required": True},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["requirements"] == ["approval"]
    return response.json()


def plan(agent, key="send-q3", operation="newsletter.send"):
    return agent.post(
        "/api/v1/receipts",
        {
            "operation": operation,
            "target": "https://blog.example/api/newsletters",
            "intent": INTENT,
            "idempotency_key": key,
        },
        format="json",
    )


def submit(agent, receipt_id):
    return agent.post(
        f"/api/v1/receipts/{receipt_id}/transitions", {"to": "submitted"}, format="json"
    )


def decide_in_console(client, item, verdict, **fields):
    client.get(f"/review/approvals/{item.pk}/")
    return client.post(
        f"/review/approvals/{item.pk}/decide",
        {"verdict": verdict, **fields},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
        HTTP_HX_REQUEST="true",
    )


def approval_item(receipt_id):
    return ReviewItem.objects.get(queue="approvals", target_id=str(receipt_id))


def test_an_approved_receipt_is_submitted_only_after_another_person_approves_it(
    approval_policy, owned_agent, requester, editor, login
):
    planned = plan(owned_agent)
    assert planned.status_code == 201, planned.json()
    receipt_id = planned.json()["id"]
    assert planned.json()["state"] == "awaiting_approval"

    refused = submit(owned_agent, receipt_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "approval_required")
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.AWAITING_APPROVAL
    assert not ReceiptTransition.objects.filter(receipt_id=receipt_id, to_state="submitted")

    item = approval_item(receipt_id)
    # The person the token acts for sees the intent but cannot approve it.
    own = login(requester)
    page = own.get(f"/review/approvals/{item.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Intent to approve" in html and "all-customers" in html
    selfish = decide_in_console(own, item, "approve", reason_code="intent_checked")
    assert "approve or reject its effect" in selfish.content.decode()
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.AWAITING_APPROVAL
    item.refresh_from_db()
    assert item.status != ItemStatus.DECIDED

    approved = decide_in_console(login(editor), item, "approve", reason_code="intent_checked")
    assert approved.status_code == 200
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED
    receipt = Receipt.objects.get(pk=receipt_id)
    assert receipt.state == ReceiptState.PLANNED
    moves = list(
        ReceiptTransition.objects.filter(receipt=receipt)
        .order_by("at", "id")
        .values_list("from_state", "to_state", "actor_label")
    )
    assert moves == [
        ("", "planned", "mailer"),
        ("planned", "awaiting_approval", "memdesk"),
        ("awaiting_approval", "planned", "erin"),
    ]
    assert AuditEvent.objects.filter(verb="receipt.approved", target_id=receipt_id).exists()

    accepted = submit(owned_agent, receipt_id)
    assert accepted.status_code == 200, accepted.json()
    assert accepted.json()["state"] == "submitted"


def test_a_rejection_settles_the_receipt_rejected_with_the_reason(
    approval_policy, owned_agent, editor, login
):
    receipt_id = plan(owned_agent).json()["id"]
    item = approval_item(receipt_id)
    client = login(editor)
    no_reason = decide_in_console(client, item, "reject")
    assert no_reason.status_code in (200, 400)
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.AWAITING_APPROVAL

    decide_in_console(client, item, "reject", reason_code="wrong_target", note="not this list")
    receipt = Receipt.objects.get(pk=receipt_id)
    assert receipt.state == ReceiptState.REJECTED
    last = ReceiptTransition.objects.filter(receipt=receipt).latest("at", "id")
    assert (last.from_state, last.to_state, last.reason) == (
        "awaiting_approval",
        "rejected",
        "wrong_target — not this list",
    )
    refused = submit(owned_agent, receipt_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "illegal_transition")


def test_a_second_token_of_the_same_person_is_not_a_second_pair_of_eyes(
    approval_policy, owned_agent, requester, session_api
):
    receipt_id = plan(owned_agent).json()["id"]
    item = approval_item(receipt_id)
    response = session_api(requester).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "approve", "reason_code": "intent_checked"},
        format="json",
    )
    assert (response.status_code, response.json()["code"]) == (409, "approver_is_requester")
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.AWAITING_APPROVAL


def test_a_receipt_planned_before_the_policy_asks_for_approval_when_submitted(
    owned_agent, session_api, admin_user, editor
):
    receipt_id = plan(owned_agent).json()["id"]
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.PLANNED
    session_api(admin_user).post(
        "/api/v1/platforms/blog/policies",
        {"operation": "newsletter.send", "approval_required": True},
        format="json",
    )
    refused = submit(owned_agent, receipt_id)
    assert (refused.status_code, refused.json()["code"]) == (409, "approval_required")
    assert Receipt.objects.get(pk=receipt_id).state == ReceiptState.AWAITING_APPROVAL
    item = approval_item(receipt_id)
    decided = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "approve", "reason_code": "intent_checked"},
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    assert submit(owned_agent, receipt_id).json()["state"] == "submitted"


def test_operations_without_the_policy_are_submitted_at_once(approval_policy, owned_agent):
    receipt_id = plan(owned_agent, key="other", operation="articles.create").json()["id"]
    assert submit(owned_agent, receipt_id).json()["state"] == "submitted"
    assert not ReviewItem.objects.filter(queue="approvals").exists()
