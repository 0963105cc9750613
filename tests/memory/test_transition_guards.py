"""The receipt and deletion state machines are guarded in the database too: an UPDATE
their transition table does not list is refused with `check_violation`, raw SQL
included, while the moves the services make still go through. A receipt is settled
by hand only through the editor's service."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.actors import Actor
from memory.claims.models import Subject
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.privacy.models.lifecycle import DELETION_TRANSITIONS
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.receipts.models import Receipt, ReceiptState
from memory.receipts.models.receipts import RECEIPT_TRANSITIONS, TransitionRole
from tests.memory.conftest import move_as
from tests.memory.helpers import post_event

pytestmark = pytest.mark.django_db

CHECK_VIOLATION = "23514"
WORKER = Actor.system("test lifecycle worker")


def refused_by_database(sql: str, *params: Any) -> IntegrityError:
    with (
        pytest.raises(IntegrityError, match=r"illegal (receipt|deletion) transition") as caught,
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, list(params))
    assert getattr(caught.value.__cause__, "sqlstate", None) == CHECK_VIOLATION
    return caught.value


def test_the_database_refuses_every_receipt_move_the_table_does_not_list(make_receipt):
    for state in ReceiptState.values:
        # Walked there through the services: every move they make is admitted.
        receipt = make_receipt(state)
        assert receipt.state == state
        listed = set(RECEIPT_TRANSITIONS.get(state, {}))
        for target in set(ReceiptState.values) - listed - {state}:
            refusal = refused_by_database(
                "UPDATE memory_receipt SET state = %s WHERE id = %s", target, receipt.pk
            )
            assert f"illegal receipt transition: {state} -> {target}" in str(refusal)
        assert Receipt.objects.get(pk=receipt.pk).state == state


def test_a_succeeded_receipt_cannot_be_planned_again_by_hand(make_receipt):
    receipt = make_receipt(ReceiptState.SUCCEEDED)
    refused_by_database("UPDATE memory_receipt SET state = 'planned' WHERE id = %s", receipt.pk)
    # Changing other columns without moving the state is not the guard's business.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_receipt SET agent = 'renamed' WHERE id = %s", [receipt.pk])
    stored = Receipt.objects.get(pk=receipt.pk)
    assert (stored.state, stored.agent) == (ReceiptState.SUCCEEDED, "renamed")


def test_only_an_editor_settles_a_receipt_by_hand(make_receipt, actors):
    waiting, other = (
        make_receipt(ReceiptState.MANUAL_REVIEW),
        make_receipt(ReceiptState.MANUAL_REVIEW),
    )
    for target in RECEIPT_TRANSITIONS[ReceiptState.MANUAL_REVIEW]:
        refused_by_database(
            "UPDATE memory_receipt SET state = %s WHERE id = %s", target, waiting.pk
        )

    settled = move_as(waiting, TransitionRole.EDITOR, ReceiptState.SUCCEEDED, actors)

    assert Receipt.objects.get(pk=settled.pk).state == ReceiptState.SUCCEEDED
    # The editor's role lasted only for the editor's own move.
    refused_by_database("UPDATE memory_receipt SET state = 'rejected' WHERE id = %s", other.pk)
    assert Receipt.objects.get(pk=other.pk).state == ReceiptState.MANUAL_REVIEW


def test_a_completed_deletion_cannot_be_put_back_to_work(acme, agent):
    post_event(agent, text="I live in Shanghai")
    alice = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=alice)
    # pending → propagating → verifying → completed, through the worker's service.
    deletion_run(deletion_id=deletion.pk, worker=WORKER)
    assert DeletionRequest.objects.get(pk=deletion.pk).status == DeletionStatus.COMPLETED

    for target in set(DeletionStatus.values) - {DeletionStatus.COMPLETED}:
        refusal = refused_by_database(
            "UPDATE memory_deletionrequest SET status = %s WHERE id = %s", target, deletion.pk
        )
        assert f"illegal deletion transition: completed -> {target}" in str(refusal)
    assert DeletionRequest.objects.get(pk=deletion.pk).status == DeletionStatus.COMPLETED
    assert DeletionStatus.COMPLETED not in DELETION_TRANSITIONS
