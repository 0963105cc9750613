"""`common.transitions`: one declaration per state machine, and the moves made from it.

The review item machine stands in for every machine here; each app's own tests prove its
machine's table and trigger (tests/*/test_*_transitions.py).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Role
from common.problems import InvalidTransition
from common.transitions import ANY_ROLE, StateMachine, move, move_many
from reviews.models import ITEM_UNDO_ROLE, REVIEW_ITEM_MACHINE, ItemStatus, ReviewItem
from reviews.services import review_decide
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db


def open_items(agent, count: int) -> list[ReviewItem]:
    ids = [
        submit(agent, authority="reported", basis="reported", predicate=f"p{n}", value=str(n))[
            "review_item"
        ]["id"]
        for n in range(count)
    ]
    return list(ReviewItem.objects.filter(pk__in=ids).order_by("pk"))


def test_a_machine_answers_which_moves_a_role_may_make():
    machine = StateMachine(
        label="door",
        moves={
            "shut": {"open": frozenset({ANY_ROLE}), "locked": frozenset({"keeper"})},
            "locked": {"shut": frozenset({"keeper"})},
        },
        gated_role="keeper",
    )
    assert machine.targets("shut") == ["open"]
    assert machine.targets("shut", "keeper") == ["locked", "open"]
    assert machine.targets("open", "keeper") == []
    with pytest.raises(InvalidTransition) as refused:
        machine.check("shut", "locked")
    assert refused.value.code == "illegal_transition" and refused.value.status_code == 409
    assert refused.value.extra["allowed"] == ["open"]


def test_a_plain_machine_gives_every_role_its_moves():
    machine = StateMachine.plain(label="lamp", table={"off": {"on"}, "on": {"off"}})
    assert machine.allows("off", "on", "whoever") and not machine.allows("on", "on")


def test_move_refuses_an_illegal_move_and_changes_nothing(acme, agent, editor):
    [item] = open_items(agent, 1)
    review_decide(
        tenant=acme, item_id=item.pk, actor=Actor.for_user(editor, Role.EDITOR), verdict="approve"
    )
    with pytest.raises(InvalidTransition) as refused:
        move(
            REVIEW_ITEM_MACHINE,
            ReviewItem.objects.filter(tenant=acme),
            pk=item.pk,
            to=ItemStatus.CANCELLED,
            tenant=acme,
            actor=None,
        )
    assert refused.value.extra["allowed"] == []
    item.refresh_from_db()
    assert item.status == ItemStatus.DECIDED


def test_move_of_another_tenants_row_is_not_found(acme, globex, agent):
    [item] = open_items(agent, 1)
    with pytest.raises(Exception, match="No such review item"):
        move(
            REVIEW_ITEM_MACHINE,
            ReviewItem.objects.filter(tenant=globex),
            pk=item.pk,
            to=ItemStatus.CANCELLED,
            tenant=globex,
            actor=None,
        )
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN


def test_move_many_refuses_the_whole_set_when_one_move_is_illegal(acme, agent, editor):
    first, second, third = open_items(agent, 3)
    review_decide(
        tenant=acme, item_id=second.pk, actor=Actor.for_user(editor, Role.EDITOR), verdict="approve"
    )
    rows = ReviewItem.objects.filter(tenant=acme)
    with pytest.raises(InvalidTransition):
        move_many(REVIEW_ITEM_MACHINE, rows, to=ItemStatus.CANCELLED, tenant=acme, actor=None)
    assert sorted(rows.values_list("status", flat=True)) == ["decided", "open", "open"]

    moved = move_many(
        REVIEW_ITEM_MACHINE,
        rows,
        to=ItemStatus.CANCELLED,
        tenant=acme,
        actor=None,
        skip_illegal=True,
    )
    assert moved == [first.pk, third.pk]
    assert dict(rows.values_list("pk", "status")) == {
        first.pk: "cancelled",
        second.pk: "decided",
        third.pk: "cancelled",
    }


def test_move_many_costs_the_same_statements_for_two_rows_or_twenty(acme, agent):
    items = open_items(agent, 22)

    def statements(ids: list[int]) -> int:
        with CaptureQueriesContext(connection) as queries:
            move_many(
                REVIEW_ITEM_MACHINE,
                ReviewItem.objects.filter(tenant=acme, pk__any=ids),
                to=ItemStatus.CANCELLED,
                tenant=acme,
                actor=None,
            )
        return len(queries)

    few = statements([item.pk for item in items[:2]])
    many = statements([item.pk for item in items[2:]])
    assert few == many
    assert set(ReviewItem.objects.values_list("status", flat=True)) == {"cancelled"}


def test_a_gated_move_passes_the_database_only_as_its_role(acme, agent, editor):
    [item] = open_items(agent, 1)
    review_decide(
        tenant=acme, item_id=item.pk, actor=Actor.for_user(editor, Role.EDITOR), verdict="approve"
    )
    with pytest.raises(InvalidTransition):
        move(
            REVIEW_ITEM_MACHINE,
            ReviewItem.objects.filter(tenant=acme),
            pk=item.pk,
            to=ItemStatus.CLAIMED,
            tenant=acme,
            actor=None,
        )
    reopened = move(
        REVIEW_ITEM_MACHINE,
        ReviewItem.objects.filter(tenant=acme),
        pk=item.pk,
        to=ItemStatus.CLAIMED,
        by=ITEM_UNDO_ROLE,
        tenant=acme,
        actor=None,
        changes={"claimed_by": editor, "lease_expires_at": timezone.now() + timedelta(minutes=5)},
    )
    assert reopened.status == ItemStatus.CLAIMED
    item.refresh_from_db()
    assert item.status == ItemStatus.CLAIMED
