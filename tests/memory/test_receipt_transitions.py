"""The receipt state machine: every move allowed by the table works, every other is refused.

The cases are generated from RECEIPT_TRANSITIONS itself, exhaustively for each
(state, role, target) and as random walks with hypothesis' stateful testing.
"""

from __future__ import annotations

import itertools
import threading
import uuid
from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts.actors import Actor
from accounts.models import AuditEvent
from common.problems import InvalidTransition, Problem
from memory.receipts.models.receipts import (
    RECEIPT_TRANSITIONS,
    TERMINAL_RECEIPT_STATES,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
    TransitionRole,
    allowed_receipt_targets,
)
from memory.receipts.services import receipt_moves
from memory.receipts.services.receipt_sweeps import receipts_expire_submit_leases
from memory.receipts.services.receipts import (
    receipt_create,
    receipt_resolve_manual,
    receipt_transition,
)
from memory.receipts.tasks import reconcile_receipts
from reviews.models import ItemStatus, ReviewItem
from tests.memory.conftest import move_as, path_to

pytestmark = pytest.mark.django_db

STATES = list(ReceiptState.values)
ROLES = list(TransitionRole.values)


def test_the_table_is_the_design_state_machine():
    # docs/design.md, "State machines": the moves and who makes them, written out once more
    # by hand so a silent edit of the table fails here.
    moves = {
        (source, target, role)
        for source, targets in RECEIPT_TRANSITIONS.items()
        for target, roles in targets.items()
        for role in roles
    }
    assert moves == {
        ("planned", "submitted", "agent"),
        ("submitted", "succeeded", "agent"),
        ("submitted", "rejected", "agent"),
        ("submitted", "outcome_unknown", "agent"),
        ("submitted", "outcome_unknown", "worker"),
        ("outcome_unknown", "reconciling", "worker"),
        ("reconciling", "succeeded", "worker"),
        ("reconciling", "safe_to_retry", "worker"),
        ("reconciling", "manual_review", "worker"),
        ("manual_review", "succeeded", "editor"),
        ("manual_review", "safe_to_retry", "editor"),
        ("manual_review", "rejected", "editor"),
        ("planned", "awaiting_approval", "worker"),
        ("awaiting_approval", "planned", "editor"),
        ("awaiting_approval", "rejected", "editor"),
    }
    assert {"succeeded", "rejected", "safe_to_retry"} == TERMINAL_RECEIPT_STATES


@pytest.mark.parametrize("source", STATES)
@pytest.mark.parametrize("role", ROLES)
def test_every_move_from_every_state_follows_the_table(source, role, make_receipt, actors):
    allowed = allowed_receipt_targets(source, role)
    receipt = make_receipt(source)
    for target in STATES:
        if target in allowed:
            continue
        before = ReceiptTransition.objects.filter(receipt=receipt).count()
        with pytest.raises(Problem) as refused:
            move_as(receipt, role, target, actors)
        assert refused.value.status_code == 409
        if (source, target, role) == ("awaiting_approval", "submitted", "agent"):
            # Its own code: the agent learns the receipt waits for a person.
            assert refused.value.code == "approval_required"
        else:
            assert isinstance(refused.value, InvalidTransition)
            assert refused.value.code == "illegal_transition"
            assert refused.value.extra["allowed"] == allowed
        receipt.refresh_from_db()
        assert receipt.state == source
        assert ReceiptTransition.objects.filter(receipt=receipt).count() == before
    for target in allowed:
        receipt = make_receipt(source)
        moved = move_as(receipt, role, target, actors)
        assert moved.state == target
        last = ReceiptTransition.objects.filter(receipt=receipt).latest("at", "id")
        assert (last.from_state, last.to_state) == (source, target)
        assert last.actor_kind == actors.for_role(role).kind
        assert AuditEvent.objects.filter(
            verb__startswith="receipt.", target_id=str(receipt.pk), data__to=target
        ).exists()


def test_walks_to_every_state_exist():
    for state in STATES:
        steps = path_to(state)
        assert (steps[-1][1] if steps else ReceiptState.PLANNED) == state


def test_random_walks_through_the_api_and_services_match_the_table(acme, agent, actors):
    """Agents go through the API (409 + allowed), workers and editors through services."""

    class ReceiptMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            key = uuid.uuid4().hex
            self.receipt, _ = receipt_create(
                tenant=acme,
                actor=actors.agent,
                operation="articles.create",
                target="https://blog.example/api/articles",
                intent={"nonce": key},
                idempotency_key=key,
            )
            self.expected = str(ReceiptState.PLANNED)
            self.moves = 0

        @precondition(lambda self: self.expected in RECEIPT_TRANSITIONS)
        @rule(data=st.data())
        def legal_move(self, data: st.DataObject) -> None:
            # Random moves are mostly illegal; this rule walks deep into the machine.
            moves = [
                (role, to)
                for to, roles in RECEIPT_TRANSITIONS[self.expected].items()
                for role in sorted(roles)
            ]
            self.move(*data.draw(st.sampled_from(moves)))

        @rule(role=st.sampled_from(ROLES), to=st.sampled_from(STATES))
        def move(self, role: str, to: str) -> None:
            allowed = allowed_receipt_targets(self.expected, role)
            if role == TransitionRole.AGENT:
                response = agent.post(
                    f"/api/v1/receipts/{self.receipt.pk}/transitions",
                    {"to": to, "external_id": f"ext-{self.receipt.pk}"},
                    format="json",
                )
                if to in allowed:
                    assert response.status_code == 200, response.json()
                    assert response.json()["state"] == to
                else:
                    assert response.status_code == 409
                    body = response.json()
                    if (self.expected, to) == (ReceiptState.AWAITING_APPROVAL, "submitted"):
                        assert body["code"] == "approval_required"
                    else:
                        assert body["code"] == "illegal_transition"
                        assert body["allowed"] == allowed
                    return
            elif to in allowed:
                move_as(self.receipt, role, to, actors)
            else:
                with pytest.raises(InvalidTransition) as refused:
                    move_as(self.receipt, role, to, actors)
                assert refused.value.extra["allowed"] == allowed
                return
            self.expected = to
            self.moves += 1

        @invariant()
        def stored_state_is_the_model_state(self) -> None:
            self.receipt.refresh_from_db()
            assert self.receipt.state == self.expected
            history = list(
                ReceiptTransition.objects.filter(receipt=self.receipt).order_by("at", "id")
            )
            # One transition for entering `planned`, then one per legal move.
            assert len(history) == self.moves + 1
            assert history[-1].to_state == self.expected
            for earlier, later in itertools.pairwise(history):
                assert later.from_state == earlier.to_state

    run_state_machine_as_test(
        ReceiptMachine,
        settings=hypothesis_settings(
            max_examples=30,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE memory_receipttransition SET to_state = 'succeeded' WHERE receipt_id = %s",
        "DELETE FROM memory_receipttransition WHERE receipt_id = %s",
        "UPDATE memory_reconciliationread SET outcome = 'found' WHERE receipt_id = %s",
        "DELETE FROM memory_reconciliationread WHERE receipt_id = %s",
    ],
)
def test_the_database_refuses_rewriting_history(sql, make_receipt):
    receipt = make_receipt(ReceiptState.SUBMITTED)
    ReconciliationRead.objects.create(
        tenant=receipt.tenant, receipt=receipt, attempt=1, adapter="manual", outcome="absent"
    )
    with (
        pytest.raises(DatabaseError, match=r"Cannot (update|delete)"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [receipt.pk])
    assert ReceiptTransition.objects.filter(receipt=receipt).count() == 2


def test_editors_must_give_a_reason_and_the_platform_id(make_receipt, actors):
    receipt = make_receipt(ReceiptState.MANUAL_REVIEW)
    with pytest.raises(Problem) as no_reason:
        receipt_resolve_manual(
            tenant=receipt.tenant,
            receipt_id=receipt.pk,
            actor=actors.editor,
            verdict="safe_to_retry",
            reason=" ",
        )
    assert no_reason.value.code == "reason_required"
    with pytest.raises(Problem) as no_id:
        receipt_resolve_manual(
            tenant=receipt.tenant,
            receipt_id=receipt.pk,
            actor=actors.editor,
            verdict="succeeded",
            reason="found it on the blog",
        )
    assert no_id.value.code == "external_id_required"
    with pytest.raises(Problem) as not_a_verdict:
        receipt_resolve_manual(
            tenant=receipt.tenant,
            receipt_id=receipt.pk,
            actor=actors.editor,
            verdict="reconciling",
            reason="try again",
        )
    assert not_a_verdict.value.code == "invalid_verdict"
    receipt.refresh_from_db()
    assert receipt.state == ReceiptState.MANUAL_REVIEW


def test_resolving_outside_the_queue_closes_the_open_review_item(make_receipt, actors):
    receipt = make_receipt(ReceiptState.MANUAL_REVIEW)
    item = ReviewItem.objects.get(target_type="receipt", target_id=str(receipt.pk))
    assert item.queue == "manual_review" and item.status == ItemStatus.OPEN
    resolved = receipt_resolve_manual(
        tenant=receipt.tenant,
        receipt_id=receipt.pk,
        actor=actors.editor,
        verdict="succeeded",
        reason="article art_77 is live",
        external_id="art_77",
        evidence={"url": "https://blog.example/a/77"},
    )
    assert (resolved.state, resolved.external_id) == ("succeeded", "art_77")
    item.refresh_from_db()
    assert item.status == ItemStatus.CANCELLED
    last = ReceiptTransition.objects.filter(receipt=receipt).latest("at", "id")
    assert last.reason == "article art_77 is live"
    assert last.evidence == {"url": "https://blog.example/a/77"}
    assert AuditEvent.objects.filter(verb="receipt.resolved", target_id=str(receipt.pk)).exists()


def test_a_person_without_the_editor_role_cannot_move_receipts(make_receipt, acme, make_member):
    auditor = Actor.for_user(make_member(acme, "aud", "auditor"), "auditor")
    receipt = make_receipt(ReceiptState.MANUAL_REVIEW)
    with pytest.raises(InvalidTransition) as refused:
        receipt_transition(
            tenant=acme, receipt_id=receipt.pk, actor=auditor, to="succeeded", reason="x"
        )
    assert refused.value.extra["allowed"] == []


def test_another_tenants_receipt_is_not_found(make_receipt, globex, actors):
    receipt = make_receipt(ReceiptState.PLANNED)
    with pytest.raises(Problem) as missing:
        receipt_transition(tenant=globex, receipt_id=receipt.pk, actor=actors.agent, to="submitted")
    assert missing.value.status_code == 404


def test_submitted_receipts_hold_a_lease_and_lapse_to_outcome_unknown(
    make_receipt, actors, django_capture_on_commit_callbacks, monkeypatch
):
    lapsing = make_receipt(ReceiptState.PLANNED)
    receipt_transition(
        tenant=lapsing.tenant,
        receipt_id=lapsing.pk,
        actor=actors.agent,
        to="submitted",
        lease_seconds=5,
    )
    lapsing.refresh_from_db()
    assert lapsing.submitted_at is not None
    assert lapsing.submit_lease_expires_at == lapsing.submitted_at + timedelta(seconds=5)
    long_call = make_receipt(ReceiptState.SUBMITTED)  # default lease, minutes away

    enqueued: list[list[str]] = []
    monkeypatch.setattr(
        receipt_moves,
        "reconciliation_enqueue",
        lambda *, receipt_ids: enqueued.append([str(i) for i in receipt_ids]),
    )
    with django_capture_on_commit_callbacks(execute=True):
        expired = receipts_expire_submit_leases(now=timezone.now() + timedelta(seconds=6))
    assert expired == [lapsing.pk]
    assert enqueued == [[str(lapsing.pk)]]
    lapsing.refresh_from_db()
    long_call.refresh_from_db()
    assert lapsing.state == ReceiptState.OUTCOME_UNKNOWN
    assert lapsing.submit_lease_expires_at is None
    assert lapsing.next_reconcile_at is not None
    assert long_call.state == ReceiptState.SUBMITTED
    sweep = ReceiptTransition.objects.filter(receipt=lapsing).latest("at", "id")
    assert (sweep.actor_kind, sweep.actor_label, sweep.reason) == (
        "system",
        "submit-lease sweep",
        "submit_lease_expired",
    )


def test_an_agent_reporting_outcome_unknown_wakes_a_reconciler_after_commit(
    make_receipt, actors, django_capture_on_commit_callbacks, monkeypatch, settings
):
    settings.RECONCILE_QUEUE = "reconcile-here"
    sent: list[tuple] = []
    monkeypatch.setattr(
        reconcile_receipts,
        "apply_async",
        lambda args=None, kwargs=None, **options: sent.append((list(args), options)),
    )
    receipt = make_receipt(ReceiptState.SUBMITTED)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        receipt_transition(
            tenant=receipt.tenant,
            receipt_id=receipt.pk,
            actor=actors.agent,
            to="outcome_unknown",
            error_code="timeout",
        )
    assert sent == []  # nothing is sent before the state change is committed
    for callback in callbacks:
        callback()
    assert sent == [([[str(receipt.pk)]], {"queue": "reconcile-here"})]


@pytest.mark.django_db(transaction=True)
def test_concurrent_reports_serialise_and_only_one_wins(make_receipt, actors, monkeypatch):
    monkeypatch.setattr(receipt_moves, "reconciliation_enqueue", lambda *, receipt_ids: 0)
    receipt = make_receipt(ReceiptState.SUBMITTED)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def report(to: str) -> None:
        barrier.wait()
        try:
            receipt_transition(
                tenant=receipt.tenant,
                receipt_id=receipt.pk,
                actor=actors.agent,
                to=to,
                external_id="art_1" if to == "succeeded" else "",
            )
            outcomes[to] = "moved"
        except InvalidTransition:
            outcomes[to] = "refused"
        finally:
            connection.close()

    threads = [threading.Thread(target=report, args=(to,)) for to in ("succeeded", "rejected")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes.values()) == ["moved", "refused"]
    receipt.refresh_from_db()
    winner = next(to for to, outcome in outcomes.items() if outcome == "moved")
    assert receipt.state == winner
    assert list(
        ReceiptTransition.objects.filter(receipt=receipt)
        .order_by("at", "id")
        .values_list("to_state", flat=True)
    ) == ["planned", "submitted", winner]
    assert Receipt.objects.filter(pk=receipt.pk, state=winner).exists()
