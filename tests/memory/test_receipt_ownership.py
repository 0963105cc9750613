"""Receipts and checkpoints belong to the token that wrote them: another token of the
tenant finds them missing, as another tenant's are, unless it holds `receipts:operate`.
Editors keep seeing every receipt in the console."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from accounts.models import Role
from memory.receipts.models.receipts import Checkpoint, Receipt, ReceiptState, ReceiptTransition
from memory.receipts.services.receipts import receipt_create
from memory.receipts.services.recovery import checkpoint_save
from reviews.models import ReviewItem

pytestmark = pytest.mark.django_db

OWN_WORK = ["receipts:write", "checkpoints:write"]


@pytest.fixture
def payer(acme, make_agent):
    return make_agent(acme, name="payer", capabilities=OWN_WORK)


@pytest.fixture
def intruder(acme, make_agent):
    return make_agent(acme, name="intruder", capabilities=OWN_WORK)


@pytest.fixture
def operator(acme, make_agent):
    return make_agent(acme, name="operator", capabilities=[*OWN_WORK, "receipts:operate"])


def plan(agent, key="pay-invoice-42", **overrides):
    body = {
        "operation": "payments.send",
        "target": "acct:supplier-7",
        "intent": {"amount": "1200.00", "currency": "EUR", "invoice": "42"},
        "idempotency_key": key,
        "reconciler": {"adapter": "manual"},
        **overrides,
    }
    response = agent.post("/api/v1/receipts", body, format="json")
    assert response.status_code in (200, 201), response.json()
    return response.json()


def move(agent, receipt_id, **body):
    return agent.post(f"/api/v1/receipts/{receipt_id}/transitions", body, format="json")


def save_checkpoint(agent, task_key="pay-run", **body):
    payload = {"input_fingerprint": "sha256:invoices-42", "stage": "send", **body}
    return agent.put(f"/api/v1/checkpoints/{task_key}", payload, format="json")


def recover(agent, task_key="pay-run"):
    response = agent.post(
        "/api/v1/recovery",
        {"task_key": task_key, "input_fingerprint": "sha256:invoices-42"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return response.json()


# -- receipts -----------------------------------------------------------------------


def test_a_token_lists_only_its_own_receipts(payer, intruder):
    mine = plan(payer)
    theirs = plan(intruder, key="refund-7", operation="payments.refund")

    assert [r["id"] for r in payer.get("/api/v1/receipts").json()["results"]] == [mine["id"]]
    listed = intruder.get("/api/v1/receipts?operation=payments.send").json()
    assert listed["results"] == []
    assert [r["id"] for r in intruder.get("/api/v1/receipts").json()["results"]] == [theirs["id"]]


def test_another_tokens_receipt_is_missing_to_read_and_to_move(payer, intruder, globex_agent):
    receipt = plan(payer)
    assert move(payer, receipt["id"], to="submitted").status_code == 200

    read = intruder.get(f"/api/v1/receipts/{receipt['id']}")
    foreign_tenant = globex_agent.get(f"/api/v1/receipts/{receipt['id']}")
    assert read.status_code == foreign_tenant.status_code == 404
    assert read.json()["code"] == foreign_tenant.json()["code"] == "not_found"

    forged = move(intruder, receipt["id"], to="succeeded", external_id="tx_fake_999")
    assert forged.status_code == 404
    assert forged.json()["code"] == "not_found"
    stored = Receipt.objects.get(pk=receipt["id"])
    assert (stored.state, stored.external_id) == ("submitted", "")
    assert list(
        ReceiptTransition.objects.filter(receipt=stored).values_list("to_state", flat=True)
    ) == ["planned", "submitted"]


def test_planning_under_another_tokens_key_says_nothing_of_its_receipt(payer, intruder):
    receipt = plan(payer)
    body = {
        "operation": "payments.send",
        "target": "acct:supplier-7",
        "intent": {"amount": "1200.00", "currency": "EUR", "invoice": "42"},
        "idempotency_key": "pay-invoice-42",
        "reconciler": {"adapter": "manual"},
    }
    response = intruder.post("/api/v1/receipts", body, format="json")
    assert response.status_code == 409
    problem = response.json()
    assert problem["code"] == "idempotency_key_reused"
    assert receipt["id"] not in response.content.decode()
    assert "receipt" not in problem and "intent_fingerprint" not in problem
    assert Receipt.objects.count() == 1


def test_a_token_with_receipts_operate_moves_another_tokens_receipt(payer, operator):
    receipt = plan(payer)
    assert move(payer, receipt["id"], to="submitted").status_code == 200

    listed = operator.get("/api/v1/receipts").json()["results"]
    assert [r["id"] for r in listed] == [receipt["id"]]
    assert operator.get(f"/api/v1/receipts/{receipt['id']}").status_code == 200
    moved = move(operator, receipt["id"], to="outcome_unknown", reason="payer crashed")
    assert moved.status_code == 200, moved.json()
    stored = Receipt.objects.get(pk=receipt["id"])
    assert stored.state == "outcome_unknown"
    # Operating on it does not make it the operator's.
    assert stored.token_id == payer.token.pk
    last = ReceiptTransition.objects.filter(receipt=stored).latest("at", "id")
    assert (last.actor_kind, last.actor_id) == ("agent", str(operator.token.pk))


def test_receipts_operate_is_granted_only_when_asked_for(acme, make_agent, admin_user, login):
    assert "receipts:operate" not in make_agent(acme, name="defaults").token.capabilities
    page = login(admin_user).get("/tokens/").content.decode()
    assert 'value="receipts:operate"' in page


# -- checkpoints and recovery ---------------------------------------------------------


def test_another_token_cannot_overwrite_or_read_a_checkpoint(payer, intruder):
    receipt = plan(payer)
    assert save_checkpoint(payer, effects=[receipt["id"]]).status_code == 200
    assert recover(payer)["decision"] == "resume"

    overwrite = save_checkpoint(
        intruder, stage="refund", stage_complete=False, allowed_next_stages=["refund"]
    )
    assert overwrite.status_code == 404
    assert overwrite.json()["code"] == "not_found"
    stored = Checkpoint.objects.get(task_key="pay-run")
    assert (stored.stage, stored.effects, stored.token_id) == (
        "send",
        [Receipt.objects.get().pk],
        payer.token.pk,
    )

    assert intruder.get("/api/v1/checkpoints/pay-run").status_code == 404
    # Recovery answers as if there were no checkpoint, word for word as for an unknown key.
    asked = recover(intruder)
    unknown = recover(intruder, task_key="never-saved")
    assert (asked["decision"], asked["reason"]) == ("fresh", "no_checkpoint")
    # Each answer is logged under its own id; the rest is the same, word for word.
    assert asked.pop("answer_id") != unknown.pop("answer_id")
    assert asked == unknown
    owner = recover(payer)
    assert (owner["decision"], owner["reason"], owner["checkpoint"]["stage"]) == (
        "resume",
        "incomplete_stage",
        "send",
    )


def test_checkpoint_effects_must_be_the_tokens_own_receipts(payer, intruder):
    theirs = plan(payer)
    response = save_checkpoint(intruder, task_key="mine", effects=[theirs["id"]])
    assert response.status_code == 400
    assert response.json()["code"] == "unknown_effect"
    assert not Checkpoint.objects.exists()


def test_a_token_with_receipts_operate_reaches_another_tokens_checkpoint(payer, operator):
    assert save_checkpoint(payer).status_code == 200
    assert operator.get("/api/v1/checkpoints/pay-run").json()["stage"] == "send"
    assert recover(operator)["reason"] == "incomplete_stage"
    replaced = save_checkpoint(operator, stage="verify")
    assert replaced.status_code == 200, replaced.json()
    stored = Checkpoint.objects.get()
    assert (stored.stage, stored.token_id) == ("verify", payer.token.pk)
    assert payer.get("/api/v1/checkpoints/pay-run").json()["stage"] == "verify"


def test_rows_without_an_owner_are_only_for_operators(acme, editor, payer, operator):
    # Planned by a person, and a checkpoint saved by memdesk itself: no token owns them.
    person = Actor.for_user(editor, Role.EDITOR)
    receipt, _ = receipt_create(
        tenant=acme,
        actor=person,
        operation="payments.send",
        target="acct:supplier-9",
        intent={"amount": "5.00"},
        idempotency_key="by-hand-1",
        reconciler={"adapter": "manual"},
    )
    checkpoint_save(
        tenant=acme, actor=Actor.system(), task_key="legacy", input_fingerprint="f", stage="s"
    )
    assert (receipt.token_id, Checkpoint.objects.get().token_id) == (None, None)

    assert payer.get("/api/v1/receipts").json()["results"] == []
    assert payer.get(f"/api/v1/receipts/{receipt.pk}").status_code == 404
    assert payer.get("/api/v1/checkpoints/legacy").status_code == 404
    assert save_checkpoint(payer, task_key="legacy").status_code == 404
    assert [r["id"] for r in operator.get("/api/v1/receipts").json()["results"]] == [
        str(receipt.pk)
    ]
    assert operator.get("/api/v1/checkpoints/legacy").status_code == 200


# -- the console --------------------------------------------------------------------


def test_editors_see_every_tokens_receipt_in_the_console(make_receipt, editor, login):
    # make_receipt plans as the `agent` token and walks the receipt into manual_review.
    waiting = make_receipt(ReceiptState.MANUAL_REVIEW, target="acct:supplier-3")
    assert waiting.token_id is not None
    item = ReviewItem.objects.get(queue="manual_review", target_id=str(waiting.pk))
    page = login(editor).get(f"/review/manual_review/?item={item.pk}")
    assert page.status_code == 200
    body = page.content.decode()
    assert "acct:supplier-3" in body and waiting.operation in body
