"""Receipts that wait for a person: the manual_review queue, and the editor who settles
one (succeeded with the platform's id, safe to retry, or rejected with a reason)."""

from __future__ import annotations

import pytest

from accounts.models import AuditEvent
from memory.receipts.models.receipts import ReceiptState, ReceiptTransition
from memory.receipts.services.receipts import receipt_resolve_manual
from reviews.models import Decision, ItemStatus, ReviewItem

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("blog_platform")]


@pytest.fixture
def waiting(make_receipt):
    """A receipt reconciliation could not settle, waiting for an editor."""
    return make_receipt(ReceiptState.MANUAL_REVIEW)


def test_manual_review_receipts_wait_in_the_manual_review_queue(waiting, session_api, editor):
    listing = session_api(editor).get("/api/v1/reviews?queue=manual_review").json()
    assert [(i["target_type"], i["target_id"]) for i in listing["results"]] == [
        ("receipt", str(waiting.pk))
    ]


def review_item_of(receipt):
    return ReviewItem.objects.get(queue="manual_review", target_id=str(receipt.pk))


def test_an_editor_settles_a_receipt_as_succeeded_with_the_platform_id(
    waiting, session_api, editor
):
    item = review_item_of(waiting)
    client = session_api(editor)
    missing = client.post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "succeeded", "reason_code": "verified"},
        format="json",
    )
    assert missing.status_code == 400
    assert missing.json()["code"] == "external_id_required"
    decided = client.post(
        f"/api/v1/reviews/{item.pk}/decide",
        {
            "verdict": "succeeded",
            "reason_code": "verified",
            "note": "live at /a/77",
            "external_id": "art_77",
            "evidence": {"url": "https://blog.example/a/77"},
        },
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    waiting.refresh_from_db()
    assert (waiting.state, waiting.external_id) == ("succeeded", "art_77")
    last = ReceiptTransition.objects.filter(receipt=waiting).latest("at", "id")
    assert (last.from_state, last.to_state, last.actor_label) == (
        "manual_review",
        "succeeded",
        "erin",
    )
    assert last.reason == "verified — live at /a/77"
    assert last.evidence == {"url": "https://blog.example/a/77"}
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED
    assert Decision.objects.filter(item=item, verdict="succeeded").exists()
    assert AuditEvent.objects.filter(verb="receipt.resolved", target_id=str(waiting.pk)).exists()


def test_an_editor_can_declare_a_retry_safe(waiting, session_api, editor):
    item = review_item_of(waiting)
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "safe_to_retry", "reason_code": "verified", "note": "not on the blog"},
        format="json",
    )
    assert response.status_code == 200
    waiting.refresh_from_db()
    assert waiting.state == "safe_to_retry"


def test_rejecting_needs_a_reason(waiting, session_api, editor):
    item = review_item_of(waiting)
    client = session_api(editor)
    bare = client.post(f"/api/v1/reviews/{item.pk}/decide", {"verdict": "rejected"}, format="json")
    assert bare.status_code == 400
    assert bare.json()["code"] == "reason_required"
    rejected = client.post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "rejected", "reason_code": "other", "note": "the platform refused it"},
        format="json",
    )
    assert rejected.status_code == 200
    waiting.refresh_from_db()
    assert waiting.state == "rejected"


def test_only_the_receipt_verdicts_exist_in_the_queue(waiting, session_api, editor):
    item = review_item_of(waiting)
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "approve", "reason_code": "verified"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["allowed"] == ["succeeded", "safe_to_retry", "rejected"]


def test_a_decision_on_a_receipt_that_moved_meanwhile_is_refused(
    waiting, session_api, editor, actors
):
    item = review_item_of(waiting)
    receipt_resolve_manual(
        tenant=waiting.tenant,
        receipt_id=waiting.pk,
        actor=actors.editor,
        verdict="safe_to_retry",
        reason="settled by phone",
        review_item_id=item.pk,  # pretend the item is the one being decided elsewhere
    )
    response = session_api(editor).post(
        f"/api/v1/reviews/{item.pk}/decide",
        {"verdict": "succeeded", "reason_code": "verified", "external_id": "art_9"},
        format="json",
    )
    assert response.status_code == 409
    assert response.json()["code"] == "target_changed"
