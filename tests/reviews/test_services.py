"""reviews.services: opening, claiming with a lease, deciding and cancelling items.

The rules are checked on the services the console and the API share; the
bulk approval is the console's loop over `review_decide`, checked through it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from common.problems import Problem
from memory.claims.models import Claim, ClaimRole, ClaimStatus
from memory.claims.services.claim_moves import claim_move
from reviews.models import Decision, ItemStatus, Queue, ReviewItem
from reviews.services import (
    review_claim,
    review_decide,
    review_open,
    reviews_cancel_for_targets,
)
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db


def reported(agent, n: int = 0) -> ReviewItem:
    """A reported fact: the gate keeps it a candidate and opens a candidates item."""
    verdict = submit(
        agent,
        authority="reported",
        basis="reported",
        predicate=f"p{n}",
        value=str(n),
        text=f"reported {n}",
    )
    return ReviewItem.objects.get(pk=verdict["review_item"]["id"])


@pytest.fixture
def item(agent) -> ReviewItem:
    return reported(agent)


@pytest.fixture
def erin(editor) -> Actor:
    return Actor.for_user(editor, Role.EDITOR)


@pytest.fixture
def eddie(editor2) -> Actor:
    return Actor.for_user(editor2, Role.EDITOR)


def claim_status(item: ReviewItem) -> str:
    return Claim.objects.get(pk=item.target_id).status


def refusal(call: Any) -> tuple[int, str]:
    with pytest.raises(Problem) as caught:
        call()
    return caught.value.status_code, caught.value.code


def assert_untouched(item: ReviewItem, *, status: str = ItemStatus.OPEN, holder: Any = None):
    item.refresh_from_db()
    assert (item.status, item.claimed_by) == (status, holder)
    assert item.decided_at is None
    assert not Decision.objects.filter(item=item).exists()
    assert not AuditEvent.objects.filter(verb__startswith="review.").exists()


# --- open ---------------------------------------------------------------------------------------


def test_opening_an_item_again_for_the_same_target_returns_the_open_one(acme, item):
    again = review_open(
        tenant=acme,
        queue=Queue.CANDIDATES,
        target_type="claim",
        target_id=item.target_id,
        reason_codes=["another_reason"],
    )
    assert again.pk == item.pk and again.reason_codes == item.reason_codes
    assert ReviewItem.objects.filter(target_id=item.target_id).count() == 1


# --- claim and lease ----------------------------------------------------------------------------


def test_claiming_takes_the_item_for_the_lease(acme, item, editor, erin, settings):
    settings.REVIEW_LEASE_SECONDS = 900
    before = timezone.now()
    claimed = review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    after = timezone.now()
    item.refresh_from_db()
    assert (item.status, item.claimed_by) == (ItemStatus.CLAIMED, editor)
    lease = timedelta(seconds=900)
    assert before + lease <= item.lease_expires_at <= after + lease
    assert claimed.lease_expires_at == item.lease_expires_at


def test_claiming_again_renews_the_holders_lease(acme, item, editor, erin):
    first = review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor).lease_expires_at
    again = review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    assert again.claimed_by == editor and again.lease_expires_at >= first


def test_a_colleague_can_neither_claim_nor_decide_an_item_held_by_someone(
    acme, item, editor, editor2, erin, eddie
):
    review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    with pytest.raises(Problem) as claimed:
        review_claim(tenant=acme, item_id=item.pk, actor=eddie, user=editor2)
    assert (claimed.value.status_code, claimed.value.code) == (409, "item_claimed")
    assert claimed.value.extra["claimed_by"] == "erin"
    decide = lambda: review_decide(  # noqa: E731
        tenant=acme, item_id=item.pk, actor=eddie, verdict="approve"
    )
    assert refusal(decide) == (409, "item_claimed")
    assert_untouched(item, status=ItemStatus.CLAIMED, holder=editor)
    assert claim_status(item) == ClaimStatus.CANDIDATE


def test_a_colleague_takes_the_item_over_once_the_lease_ran_out(
    acme, item, editor, editor2, erin, eddie, settings
):
    settings.REVIEW_LEASE_SECONDS = 0  # the holder's lease ends as it begins
    review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    taken = review_claim(tenant=acme, item_id=item.pk, actor=eddie, user=editor2)
    assert (taken.status, taken.claimed_by) == (ItemStatus.CLAIMED, editor2)
    decision = review_decide(tenant=acme, item_id=item.pk, actor=eddie, verdict="approve")
    assert decision.actor_label == "eddie"
    assert claim_status(item) == ClaimStatus.ACTIVE


def test_auditors_and_agents_may_neither_claim_nor_decide(acme, item, make_member, agent):
    auditor = make_member(acme, "audrey", Role.AUDITOR)
    for actor, user in (
        (Actor.for_user(auditor, Role.AUDITOR), auditor),
        (Actor.for_token(agent.token), None),
    ):
        assert refusal(
            lambda a=actor, u=user: review_claim(tenant=acme, item_id=item.pk, actor=a, user=u)
        ) == (403, "role_required")
        assert refusal(
            lambda a=actor: review_decide(tenant=acme, item_id=item.pk, actor=a, verdict="approve")
        ) == (403, "role_required")
    assert_untouched(item)
    assert claim_status(item) == ClaimStatus.CANDIDATE


def test_another_tenants_item_does_not_exist(globex, item, make_member):
    gary = make_member(globex, "gary", Role.EDITOR)
    actor = Actor.for_user(gary, Role.EDITOR)
    assert refusal(
        lambda: review_claim(tenant=globex, item_id=item.pk, actor=actor, user=gary)
    ) == (404, "not_found")
    assert refusal(
        lambda: review_decide(tenant=globex, item_id=item.pk, actor=actor, verdict="approve")
    ) == (404, "not_found")
    assert_untouched(item)


# --- decide -------------------------------------------------------------------------------------


def test_deciding_moves_the_target_and_writes_the_decision_and_audit_rows(acme, item, editor, erin):
    review_claim(tenant=acme, item_id=item.pk, actor=erin, user=editor)
    decision = review_decide(
        tenant=acme, item_id=item.pk, actor=erin, verdict="approve", note="checked the CRM"
    )
    assert claim_status(item) == ClaimStatus.ACTIVE
    stored = Decision.objects.get(item=item)
    assert stored.pk == decision.pk
    assert (stored.verdict, stored.note, stored.actor_kind, stored.actor_id) == (
        "approve",
        "checked the CRM",
        "user",
        str(editor.pk),
    )
    item.refresh_from_db()
    assert (item.status, item.lease_expires_at) == (ItemStatus.DECIDED, None)
    assert item.decided_at is not None
    audit = AuditEvent.objects.get(verb="review.approve")
    assert (audit.actor_label, audit.target_type, audit.target_id) == (
        "erin",
        "claim",
        item.target_id,
    )
    assert audit.data == {"review_item": item.pk, "queue": Queue.CANDIDATES}
    moved = AuditEvent.objects.get(verb="claim.active", target_id=item.target_id)
    assert moved.actor_label == "erin"


@pytest.mark.parametrize(
    ("verdict", "reason_code", "note", "code"),
    [
        ("publish", "", "", "invalid_verdict"),
        ("reject", "", "", "reason_required"),
        ("reject", "because", "", "invalid_reason_code"),
        ("reject", "other", "  ", "note_required"),
    ],
)
def test_a_refused_verdict_changes_nothing(acme, item, erin, verdict, reason_code, note, code):
    with pytest.raises(Problem) as caught:
        review_decide(
            tenant=acme,
            item_id=item.pk,
            actor=erin,
            verdict=verdict,
            reason_code=reason_code,
            note=note,
        )
    assert (caught.value.status_code, caught.value.code) == (400, code)
    assert_untouched(item)
    assert claim_status(item) == ClaimStatus.CANDIDATE


def test_a_decided_item_is_closed_to_claims_and_decisions(acme, item, editor, erin, eddie):
    review_decide(
        tenant=acme, item_id=item.pk, actor=erin, verdict="reject", reason_code="unsupported"
    )
    assert refusal(
        lambda: review_decide(tenant=acme, item_id=item.pk, actor=eddie, verdict="approve")
    ) == (409, "item_closed")
    assert refusal(
        lambda: review_claim(tenant=acme, item_id=item.pk, actor=eddie, user=editor)
    ) == (409, "item_closed")
    assert claim_status(item) == ClaimStatus.REJECTED
    assert list(Decision.objects.filter(item=item).values_list("verdict", flat=True)) == ["reject"]


def test_a_target_that_changed_since_the_item_opened_is_not_decided(acme, item, erin):
    # Meanwhile the writer quarantined the candidate: the editor decided on what they saw.
    claim_move(
        tenant=acme,
        actor=Actor.system(),
        claim_id=item.target_id,
        to=ClaimStatus.QUARANTINED,
        by=ClaimRole.WRITER,
        reason="screened",
    )
    assert refusal(
        lambda: review_decide(tenant=acme, item_id=item.pk, actor=erin, verdict="approve")
    ) == (409, "target_changed")
    assert_untouched(item)
    assert claim_status(item) == ClaimStatus.QUARANTINED


def test_decisions_cannot_be_rewritten_or_removed_with_raw_sql(acme, item, erin):
    decision = review_decide(tenant=acme, item_id=item.pk, actor=erin, verdict="approve")
    for sql in (
        "UPDATE reviews_decision SET verdict = 'reject' WHERE id = %s",
        "UPDATE reviews_decision SET actor_label = 'someone else' WHERE id = %s",
        "DELETE FROM reviews_decision WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match=r"Cannot (update|delete)"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [decision.pk])
    stored = Decision.objects.get(pk=decision.pk)
    assert (stored.verdict, stored.actor_label) == ("approve", "erin")


def test_a_decision_may_be_scrubbed_once_and_never_again(acme, item, erin):
    decision = review_decide(
        tenant=acme, item_id=item.pk, actor=erin, verdict="approve", note="quoted words"
    )
    scrub = "UPDATE reviews_decision SET note = 'erased:1', scrubbed_at = now() WHERE id = %s"
    with connection.cursor() as cursor:
        cursor.execute(scrub, [decision.pk])
    with (
        pytest.raises(DatabaseError, match="Cannot update"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(scrub.replace("erased:1", "something else"), [decision.pk])
    stored = Decision.objects.get(pk=decision.pk)
    assert (stored.note, stored.verdict) == ("erased:1", "approve")


# --- bulk ---------------------------------------------------------------------------------------


def test_bulk_approval_decides_each_item_on_its_own(acme, agent, editor, editor2, eddie, login):
    items = [reported(agent, n) for n in range(3)]
    # A colleague holds the last one: it is refused, the others are approved.
    review_claim(tenant=acme, item_id=items[2].pk, actor=eddie, user=editor2)
    client = login(editor)
    client.get("/review/candidates/")
    response = client.post(
        "/review/candidates/bulk",
        {"items": [i.pk for i in items] + ["not-a-number"]},
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
        follow=True,
    )
    html = response.content.decode()
    assert "Approved 2 items." in html and f"#{items[2].pk}:" in html
    assert [claim_status(i) for i in items] == [
        ClaimStatus.ACTIVE,
        ClaimStatus.ACTIVE,
        ClaimStatus.CANDIDATE,
    ]
    decided = Decision.objects.order_by("item_id").values_list("item_id", "verdict", "actor_label")
    assert list(decided) == [(items[0].pk, "approve", "erin"), (items[1].pk, "approve", "erin")]
    assert AuditEvent.objects.filter(verb="review.approve").count() == 2
    items[2].refresh_from_db()
    assert (items[2].status, items[2].claimed_by) == (ItemStatus.CLAIMED, editor2)


# --- cancel -------------------------------------------------------------------------------------


def test_cancelling_for_targets_closes_only_their_open_items(acme, agent, erin):
    items = [reported(agent, n) for n in range(3)]
    review_decide(tenant=acme, item_id=items[0].pk, actor=erin, verdict="approve")
    closed = reviews_cancel_for_targets(
        tenant=acme, target_type="claim", target_ids=[i.target_id for i in items[:2]]
    )
    assert closed == 1  # the decided item stays decided
    for i in items:
        i.refresh_from_db()
    assert [i.status for i in items] == [
        ItemStatus.DECIDED,
        ItemStatus.CANCELLED,
        ItemStatus.OPEN,
    ]
