"""The ledger is append-only in the database itself, whatever code or person connects.

The one change PostgreSQL lets through is erasure: an event is redacted once
and stays as a tombstone row.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from memory.claims.models import Event
from tests.memory.helpers import post_event

pytestmark = pytest.mark.django_db


def run_sql(sql: str, *params: Any) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, list(params))


@pytest.fixture
def event(agent) -> Event:
    return Event.objects.get(pk=post_event(agent, text="I live in Shanghai")["id"])


@pytest.mark.parametrize(
    ("sql", "refusal"),
    [
        ("UPDATE memory_event SET text = 'I live in Beijing' WHERE id = %s", "Cannot update"),
        ("UPDATE memory_event SET kind = 'tool_result' WHERE id = %s", "Cannot update"),
        ("DELETE FROM memory_event WHERE id = %s", "Cannot delete"),
    ],
)
def test_the_database_refuses_rewriting_or_removing_an_event(event, sql, refusal):
    with pytest.raises(DatabaseError, match=refusal):
        run_sql(sql, event.pk)
    stored = Event.objects.get(pk=event.pk)
    assert (stored.text, stored.kind, stored.redacted_at) == (
        "I live in Shanghai",
        "user_statement",
        None,
    )


def test_redaction_is_let_through_once_and_then_the_tombstone_is_fixed(event):
    run_sql(
        "UPDATE memory_event SET text = '', body = '{}'::jsonb, redacted_at = now() WHERE id = %s",
        event.pk,
    )
    tombstone = Event.objects.get(pk=event.pk)
    assert tombstone.text == "" and tombstone.redacted_at is not None

    with pytest.raises(DatabaseError, match="Cannot update"):
        run_sql("UPDATE memory_event SET text = 'I live in Shanghai' WHERE id = %s", event.pk)
    with pytest.raises(DatabaseError, match="Cannot update"):
        run_sql("UPDATE memory_event SET redacted_at = NULL WHERE id = %s", event.pk)
    with pytest.raises(DatabaseError, match="Cannot delete"):
        run_sql("DELETE FROM memory_event WHERE id = %s", event.pk)
    assert Event.objects.get(pk=event.pk).text == ""
    assert Event.objects.get(pk=event.pk).redacted_at == tombstone.redacted_at
