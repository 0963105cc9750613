"""Editors working the queues in a real browser."""

import pytest

from memory.models import Claim, Receipt
from reviews.models import ReviewItem
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_item(page, queue: str, item: ReviewItem) -> None:
    page.goto(f"/review/{queue}/")
    page.click(f"[data-item='{item.pk}'] .row-link")
    page.wait_for_selector("#claim-status")
    page.wait_for_load_state("networkidle")


def test_editor_approves_a_candidate(sign_in):
    item = ReviewItem.objects.filter(
        queue="candidates", reason_codes__contains=["unverified_authority"]
    ).get()
    page = sign_in("editor")
    open_item(page, "candidates", item)
    assert "probably works at Acme" in page.inner_text("#detail")
    page.keyboard.press("a")
    page.wait_for_selector("text=Approve: done.")
    screenshot(page, "approve-candidate")
    assert Claim.objects.get(pk=item.target_id).status == "active"


def test_reject_needs_a_reason_then_succeeds(sign_in):
    item = ReviewItem.objects.filter(
        queue="candidates", reason_codes__contains=["instruction_injection"]
    ).get()
    page = sign_in("editor")
    open_item(page, "candidates", item)
    page.click("button[value=reject]")
    page.wait_for_selector("#decision-error")
    assert "needs a reason code" in page.inner_text("#decision-error")
    screenshot(page, "reject-without-reason")
    assert Claim.objects.get(pk=item.target_id).status == "quarantined"
    page.select_option("#reason_code", "injection")
    page.click("button[value=reject]")
    page.wait_for_selector("text=Reject: done.")
    screenshot(page, "reject-with-reason")
    assert Claim.objects.get(pk=item.target_id).status == "rejected"


def test_conflict_is_resolved_by_superseding(sign_in):
    item = ReviewItem.objects.get(queue="conflicts")
    newer = Claim.objects.get(pk=item.target_id)
    older = Claim.objects.get(pk=newer.conflicts_with[0])
    page = sign_in("editor")
    open_item(page, "conflicts", item)
    assert "Beijing" in page.inner_text("#detail") and "Shanghai" in page.inner_text("#detail")
    page.check(f"input[name=winner][value='{older.pk}']")
    page.click("button[value=supersede]")
    page.wait_for_selector("text=Supersede: done.")
    screenshot(page, "resolve-conflict")
    older.refresh_from_db()
    newer.refresh_from_db()
    assert (older.status, newer.status) == ("active", "superseded")


def test_manual_review_receipt_settled_as_succeeded(sign_in):
    item = ReviewItem.objects.get(queue="manual_review")
    page = sign_in("editor")
    open_item(page, "manual_review", item)
    assert "Reconciliation reads" in page.inner_text("#detail")
    page.click("button[value=succeeded]")
    page.wait_for_selector("#decision-error")
    page.fill("#external_id", "article-98123")
    page.select_option("#reason_code", "verified")
    page.click("button[value=succeeded]")
    page.wait_for_selector("text=Succeeded: done.")
    screenshot(page, "settle-manual-review")
    receipt = Receipt.objects.get(pk=item.target_id)
    assert (receipt.state, receipt.external_id) == ("succeeded", "article-98123")


def test_second_editor_is_blocked_by_a_claim(sign_in):
    item = ReviewItem.objects.filter(queue="candidates").order_by("created_at").first()
    first = sign_in("editor")
    open_item(first, "candidates", item)
    first.wait_for_selector("text=Held by editor")
    second = sign_in("editor2")
    open_item(second, "candidates", item)
    second.wait_for_selector("text=editor is working on this item")
    screenshot(second, "second-editor-blocked")
    second.click("button[value=approve]")
    second.wait_for_selector("#decision-error")
    assert "holds this item" in second.inner_text("#decision-error")
    assert ReviewItem.objects.get(pk=item.pk).status == "claimed"
