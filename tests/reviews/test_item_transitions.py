"""The review item state machine is guarded in the database: a move
`REVIEW_ITEM_MACHINE` does not list is refused with `check_violation`, raw SQL included;
reopening a decided item passes only inside the undo service."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.actors import Actor
from accounts.models import Role
from common.transitions import ANY_ROLE
from reviews.models import ITEM_UNDO_ROLE, REVIEW_ITEM_MACHINE, ItemStatus, ReviewItem
from reviews.services import review_claim, review_decide, review_undo, reviews_cancel_for_targets
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db

CHECK_VIOLATION = "23514"


@pytest.fixture(autouse=True)
def _undo_window_longer_than_a_test(settings) -> None:
    settings.REVIEW_UNDO_SECONDS = 3600


def candidate_item(agent, n: int = 0) -> ReviewItem:
    verdict = submit(agent, authority="reported", basis="reported", predicate=f"p{n}", value=str(n))
    return ReviewItem.objects.get(pk=verdict["review_item"]["id"])


def refused_by_database(item: ReviewItem, to: str) -> None:
    with (
        pytest.raises(IntegrityError, match="illegal review item transition") as caught,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE reviews_reviewitem SET status = %s WHERE id = %s", [to, item.pk])
    assert getattr(caught.value.__cause__, "sqlstate", None) == CHECK_VIOLATION
    assert f"{item.status} -> {to}" in str(caught.value)


def test_a_decided_item_cannot_be_reopened_by_hand(acme, agent, editor):
    erin = Actor.for_user(editor, Role.EDITOR)
    item = candidate_item(agent)
    review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    review_decide(tenant=acme, item_id=item.pk, actor=erin, verdict="approve")
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED

    for target in (ItemStatus.OPEN, ItemStatus.CLAIMED, ItemStatus.CANCELLED):
        refused_by_database(item, target)
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED and item.decided_at is not None


def test_the_undo_service_alone_reopens_a_decided_item(acme, agent, editor):
    erin = Actor.for_user(editor, Role.EDITOR)
    item = candidate_item(agent)
    decision = review_decide(tenant=acme, item_id=item.pk, actor=erin, verdict="approve")

    review_undo(tenant=acme, decision_id=decision.pk, actor=erin, user=editor)

    item.refresh_from_db()
    assert (item.status, item.claimed_by, item.decided_at) == (ItemStatus.CLAIMED, editor, None)
    # The role lasted only for the undo's own statement.
    review_decide(
        tenant=acme, item_id=item.pk, actor=erin, verdict="reject", reason_code="unsupported"
    )
    item.refresh_from_db()
    refused_by_database(item, ItemStatus.CLAIMED)


def test_a_cancelled_item_stays_cancelled(acme, agent):
    items = [candidate_item(agent, n) for n in range(2)]
    cancelled = reviews_cancel_for_targets(
        tenant=acme, target_type="claim", target_ids=[item.target_id for item in items]
    )
    assert cancelled == 2
    for item in items:
        item.refresh_from_db()
        assert item.status == ItemStatus.CANCELLED
        for target in set(ItemStatus.values) - {ItemStatus.CANCELLED}:
            refused_by_database(item, target)
    assert REVIEW_ITEM_MACHINE.targets(ItemStatus.CANCELLED, ANY_ROLE) == []
    assert REVIEW_ITEM_MACHINE.targets(ItemStatus.CANCELLED, ITEM_UNDO_ROLE) == []
    assert set(ReviewItem.objects.values_list("status", flat=True)) == {ItemStatus.CANCELLED}
