"""Append-only records: the one scrub (or redaction) a deletion may make changes only the
columns it clears, and only once; every other UPDATE is refused by the database.

For each append-only table with such an exception, the row is written through its
service, a forged "scrub" that also rewrites who, what or when is refused, the real
scrub through `scrub_quoted_content` still works and leaves every other column as it
was, and scrubbing again is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import DatabaseError, connection, models, transaction
from django.forms.models import model_to_dict
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from accounts.services import audit_record
from memory.claims.models import Event, Subject
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from memory.privacy.services.scrub import scrub_quoted_content
from memory.receipts.models import ReceiptState, ReceiptTransition
from memory.receipts.services.receipts import receipt_transition
from reviews.models import Decision, ReviewItem
from reviews.services import review_decide
from tests.memory.helpers import post_event, submit

pytestmark = pytest.mark.django_db

CANARY = "quorblefinch"
WORKER = Actor.system("test lifecycle worker")


@dataclass(frozen=True)
class Record:
    model: type[models.Model]
    pk: Any
    # The columns the scrub may change (beside its stamp).
    cleared: tuple[str, ...]
    # SET clauses that rewrite what the record says happened.
    forgeries: tuple[str, ...]

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    def stored(self) -> models.Model:
        return self.model._default_manager.get(pk=self.pk)

    def kept(self) -> dict[str, Any]:
        """Every column the scrub must leave alone, as stored."""
        row = self.model._default_manager.filter(pk=self.pk).values().get()
        return {
            column: value
            for column, value in row.items()
            if column not in (*self.cleared, "scrubbed_at", "redacted_at")
        }


def run_sql(sql: str, *params: Any) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, list(params))


def audit_row(acme, **_: Any) -> Record:
    row = audit_record(
        tenant=acme,
        actor=Actor.system("consolidation"),
        verb="claim.invalidated",
        target_type="claim",
        target_id="7",
        reason=f"the {CANARY} was wrong",
        data={"note": f"{CANARY} again"},
    )
    return Record(
        AuditEvent,
        row.pk,
        cleared=("reason", "data"),
        forgeries=(
            "actor_label = 'someone else'",
            "verb = 'claim.approved'",
            "at = at - interval '1 day'",
            "target_id = '8'",
        ),
    )


def decision_row(acme, agent, editor, **_: Any) -> Record:
    verdict = submit(agent, authority="reported", basis="reported", predicate="p", value="1")
    item = ReviewItem.objects.get(pk=verdict["review_item"]["id"])
    decision = review_decide(
        tenant=acme,
        item_id=item.pk,
        actor=Actor.for_user(editor, Role.EDITOR),
        verdict="approve",
        note=f"checked the {CANARY}",
    )
    return Record(
        Decision,
        decision.pk,
        cleared=("note", "payload", "undo_state"),
        forgeries=(
            "actor_label = 'someone else'",
            "verdict = 'reject'",
            "at = at - interval '1 day'",
        ),
    )


def receipt_transition_row(make_receipt, actors, **_: Any) -> Record:
    receipt = make_receipt()
    receipt_transition(
        tenant=receipt.tenant,
        receipt_id=receipt.pk,
        actor=actors.agent,
        to=ReceiptState.SUBMITTED,
        reason=f"posting about the {CANARY}",
    )
    transition = ReceiptTransition.objects.get(receipt=receipt, to_state=ReceiptState.SUBMITTED)
    return Record(
        ReceiptTransition,
        transition.pk,
        cleared=("reason", "evidence"),
        forgeries=(
            "actor_label = 'someone else'",
            "to_state = 'succeeded'",
            "at = at - interval '1 day'",
        ),
    )


def project_event(agent, **_: Any) -> Record:
    # Another subject's event quoting the words: the scrub replaces them, no more.
    event = post_event(agent, subject="project:crm", text=f"Alice mentioned the {CANARY}")
    return Record(
        Event,
        event["id"],
        cleared=("kind", "run_id", "agent", "text", "body", "source_uri"),
        forgeries=(
            "digest = 'forged'",
            "observed_at = observed_at - interval '1 day'",
            "recorded_at = recorded_at - interval '1 day'",
            "sensitivity = 'health'",
        ),
    )


RECORDS: dict[str, Callable[..., Record]] = {
    "audit_event": audit_row,
    "decision": decision_row,
    "receipt_transition": receipt_transition_row,
    "event": project_event,
}


@pytest.fixture(params=sorted(RECORDS))
def record(request, acme, agent, editor, make_receipt, actors) -> Record:
    return RECORDS[request.param](
        acme=acme, agent=agent, editor=editor, make_receipt=make_receipt, actors=actors
    )


def test_the_scrub_changes_only_what_it_clears_and_only_once(acme, record):
    before = record.kept()
    for forgery in record.forgeries:
        with pytest.raises(DatabaseError, match="Cannot update"):
            run_sql(
                f"UPDATE {record.table} SET scrubbed_at = now(), {forgery} WHERE id = %s",  # noqa: S608
                record.pk,
            )
    assert record.kept() == before
    assert record.stored().scrubbed_at is None

    scrubbed = scrub_quoted_content(tenant_id=acme.pk, terms=[CANARY], now=timezone.now())

    assert scrubbed[record.table] == 1
    stored = record.stored()
    assert stored.scrubbed_at is not None
    assert CANARY not in str(model_to_dict(stored, fields=record.cleared))
    assert record.kept() == before
    with pytest.raises(DatabaseError, match="Cannot update"):
        run_sql(
            f"UPDATE {record.table} SET {record.cleared[0]} = {record.cleared[0]}, "  # noqa: S608
            "scrubbed_at = now() WHERE id = %s",
            record.pk,
        )
    assert record.stored().scrubbed_at == stored.scrubbed_at


@pytest.fixture
def alice_event(agent) -> Record:
    event = post_event(agent, text=f"I keep the {CANARY} in the shed")
    return Record(
        Event,
        event["id"],
        cleared=("kind", "run_id", "agent", "text", "body", "source_uri"),
        forgeries=(
            "digest = 'forged'",
            "observed_at = observed_at - interval '1 day'",
            "token_id = coalesce(token_id, 0) + 1",
            "echo_of = ARRAY[gen_random_uuid()]",
        ),
    )


def test_an_event_is_redacted_by_its_deletion_and_nothing_else_moves(acme, alice_event):
    before = alice_event.kept()
    for forgery in alice_event.forgeries:
        with pytest.raises(DatabaseError, match="Cannot update"):
            run_sql(
                f"UPDATE memory_event SET text = '', redacted_at = now(), {forgery} "  # noqa: S608
                "WHERE id = %s",
                alice_event.pk,
            )
    # A scrub stamp on top of the redaction would let one statement do both at once.
    with pytest.raises(DatabaseError, match="Cannot update"):
        run_sql(
            "UPDATE memory_event SET text = '', redacted_at = now(), scrubbed_at = now() "
            "WHERE id = %s",
            alice_event.pk,
        )
    assert alice_event.kept() == before
    assert alice_event.stored().redacted_at is None

    alice = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(tenant=acme, actor=WORKER, subject=alice)
    deletion_run(deletion_id=deletion.pk, worker=WORKER)

    event = alice_event.stored()
    assert event.redacted_at is not None and event.text == ""
    assert alice_event.kept() == before
    for again in ("redacted_at = now()", "scrubbed_at = now(), text = 'x'"):
        with pytest.raises(DatabaseError, match="Cannot update"):
            run_sql(f"UPDATE memory_event SET {again} WHERE id = %s", alice_event.pk)  # noqa: S608
    assert alice_event.stored().redacted_at == event.redacted_at
